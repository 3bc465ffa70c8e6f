"""A place page's summary, from its place record alone (never from memory prose): what the place is
and where ("Restaurant in Austin, TX.")."""

from __future__ import annotations

import re
from typing import Any

from planners.memory_text import clean, humanize, sentence, title_case

# Place types too generic to name what a place is ("Establishment in Austin").
_GENERIC_PLACE_TYPES = ("point_of_interest", "establishment", "food", "premise")

_LEADING_POSTCODE = re.compile(r"^[0-9][0-9A-Za-z-]*\s+")
_REGION_CODE = re.compile(r"^([A-Z]{2,4})(?:\s|$)")


def _region_from_address(address: str, city: str) -> str:
    """The state/province code that follows the city in a postal address ("…, Austin, TX 78702" → "TX")."""
    parts = [part.strip() for part in address.split(",") if part.strip()]
    for index, part in enumerate(parts[:-1]):
        if _LEADING_POSTCODE.sub("", part).strip().lower() == city.lower():
            match = _REGION_CODE.match(parts[index + 1])
            return match.group(1) if match else ""
    return ""


def _place_noun(kind: str, place: dict[str, Any]) -> str:
    if kind:
        return humanize(kind)
    types = place.get("types")
    for place_type in types if isinstance(types, list) else []:
        cleaned = clean(place_type).lower()
        if cleaned and cleaned not in _GENERIC_PLACE_TYPES:
            return humanize(cleaned)
    return "Place"


def place_summary(kind: str, place: dict[str, Any]) -> str:
    """What a place is and where, from its place record.

    The city stays in the sentence ("Restaurant in Austin, TX.") so the summary-based parent
    expander can find the city even when the place's memories are not in the batch."""
    noun = _place_noun(kind, place)
    city = title_case(clean(place.get("city")))
    address = clean(place.get("address"))
    if city:
        region = _region_from_address(address, city)
        return f"{noun} in {city}, {region}." if region else f"{noun} in {city}."
    if address:
        return sentence(f"{noun} at {address}")
    return f"{noun}."
