"""The sample corpus's catalogue: the places, trips, people, decisions and passing names Eric's memories
are about, and the sentences they are written in.

The catalogue is data, kept in `catalogue.yaml` beside this module (shipped as package data) and read
once with PyYAML's safe loader; this module turns it into the frozen records the generator
(sample/corpus.py) composes memories from. Every list keeps the file's order: the generator draws
from them with a seeded random generator, so order is part of the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from importlib import resources
from typing import Any

import yaml

# How a written name differs from the canonical one. For the ones that are other names for the same
# thing (not misspellings) the memory lists the canonical name among the entity's aliases.
ALIAS_BEARING_HOWS = frozenset({"nickname", "short", "qualified", "local"})


@dataclass(frozen=True, kw_only=True)
class EntitySpec:
    """A recurring name: its canonical spelling and the other ways memories write it."""

    name: str
    type: str = "entity"
    kind: str
    aliases: tuple[str, ...] = ()
    # (written form, how it differs): "case", "accent", "typo", "nickname", "short", "qualified", "local".
    variants: tuple[tuple[str, str], ...] = ()
    # Every `variant_every`-th mention after the first uses the next variant.
    variant_every: int = 3
    tags: tuple[str, ...] = ()

    def written_form(self, occurrence: int) -> tuple[str, str]:
        """The name as the `occurrence`-th (0-based) memory mentioning it writes it, and how it differs."""
        if not self.variants or occurrence % self.variant_every != 1:
            return self.name, "canonical"
        return self.variants[(occurrence // self.variant_every) % len(self.variants)]

    def entity(self, written: str, how: str) -> dict[str, Any]:
        canonical = [self.name] if how in ALIAS_BEARING_HOWS else []
        aliases = [alias for alias in dict.fromkeys([*canonical, *self.aliases]) if alias != written]
        row: dict[str, Any] = {"name": written, "type": self.type, "kind": self.kind}
        if aliases:
            row["aliases"] = aliases
        return row


@dataclass(frozen=True, kw_only=True)
class Place(EntitySpec):
    city: EntitySpec
    address: str
    types: tuple[str, ...]
    # What Eric has there: dishes, drinks, or for parks what he does there.
    items: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Trip:
    journal_id: str
    title: str
    city: EntitySpec
    first_day: date
    last_day: date
    hotel: Place
    # The first place is the trip's favourite: it comes up twice as often as the others.
    places: tuple[Place, ...]
    companion_key: str
    tags: tuple[str, ...] = ("travel",)


@dataclass(frozen=True, kw_only=True)
class Storyline:
    """A name that recurs a fixed number of times, with one line per mention (decisions, rare names)."""

    entity: EntitySpec
    lines: tuple[str, ...]
    # Decisions are dated: days after the corpus's first day of each line. Rare names are placed by
    # batch spacing.
    day_offsets: tuple[int, ...] = ()


# ------------------------------------------------------------------------------------------ reading


def _read() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("catalogue.yaml").read_text(encoding="utf-8")
    # The C loader when PyYAML was built with libyaml; the same safe subset either way.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader


def _strings(raw: list[Any] | None) -> tuple[str, ...]:
    return tuple(raw or ())


def _variants(raw: list[list[str]] | None) -> tuple[tuple[str, str], ...]:
    return tuple((written, how) for written, how in raw or ())


def _entity(raw: dict[str, Any]) -> EntitySpec:
    return EntitySpec(name=raw["name"], type=raw.get("type", "entity"), kind=raw["kind"],
                      aliases=_strings(raw.get("aliases")), variants=_variants(raw.get("variants")),
                      variant_every=raw.get("variant_every", 3), tags=_strings(raw.get("tags")))


def _place(raw: dict[str, Any], city: EntitySpec) -> Place:
    return Place(name=raw["name"], kind=raw["kind"], city=city, address=raw["address"],
                 types=_strings(raw["types"]), items=_strings(raw["items"]), tags=_strings(raw.get("tags")),
                 variants=_variants(raw.get("variants")), aliases=_strings(raw.get("aliases")),
                 variant_every=raw.get("variant_every", 3))


def _city(raw: dict[str, Any]) -> EntitySpec:
    return EntitySpec(name=raw["name"], type="topic", kind="city", variants=((raw["variant"], raw["how"]),),
                      variant_every=4)


def _trip(raw: dict[str, Any], cities: dict[str, EntitySpec]) -> Trip:
    city = cities[raw["city"]]
    return Trip(journal_id=raw["journal_id"], title=raw["title"], city=city, first_day=raw["first_day"],
                last_day=raw["last_day"], companion_key=raw["companion"], tags=_strings(raw.get("tags", ["travel"])),
                hotel=_place(raw["hotel"], city), places=tuple(_place(place, city) for place in raw["places"]))


def _decision(raw: dict[str, Any]) -> Storyline:
    return Storyline(entity=EntitySpec(name=raw["title"], type="decision", kind="decision", tags=_strings(raw["tags"])),
                     lines=tuple(line["text"] for line in raw["lines"]),
                     day_offsets=tuple(line["day"] for line in raw["lines"]))


_CATALOGUE = _read()
_CITIES = {key: _city(raw) for key, raw in _CATALOGUE["cities"].items()}
_PASSING = _CATALOGUE["passing_names"]
_TEMPLATES = _CATALOGUE["templates"]
_PHRASES = _CATALOGUE["phrases"]

AUSTIN = _CITIES["austin"]
AUSTIN_FAVOURITES: tuple[tuple[Place, float], ...] = tuple(
    (_place(raw, AUSTIN), raw["weight"]) for raw in _CATALOGUE["austin_favourites"])
AUSTIN_ROTATION: tuple[Place, ...] = tuple(_place(raw, AUSTIN) for raw in _CATALOGUE["austin_rotation"])
TRIPS: tuple[Trip, ...] = tuple(_trip(raw, _CITIES) for raw in _CATALOGUE["trips"])
PEOPLE: dict[str, EntitySpec] = {key: _entity(raw) for key, raw in _CATALOGUE["people"].items()}
ATLAS = _entity(_CATALOGUE["atlas"])
DINING_COMPANIONS = _strings(_CATALOGUE["dining_companions"])
DECISIONS: tuple[Storyline, ...] = tuple(_decision(raw) for raw in _CATALOGUE["decisions"])
RARE_NAMES: tuple[Storyline, ...] = tuple(
    Storyline(entity=_entity(raw), lines=_strings(raw["lines"])) for raw in _CATALOGUE["rare_names"])

ONE_OFF_SHOP_PREFIXES = _strings(_PASSING["shop_prefixes"])
ONE_OFF_SHOP_KINDS: tuple[tuple[str, str, str], ...] = tuple(
    (shop["suffix"], shop["kind"], shop["item"]) for shop in _PASSING["shops"])
ONE_OFF_FIRST_NAMES = _strings(_PASSING["first_names"])
ONE_OFF_LAST_NAMES = _strings(_PASSING["last_names"])
ONE_OFF_ROLES = _strings(_PASSING["roles"])

RESTAURANT_TEMPLATES = _strings(_TEMPLATES["restaurant"])
CAFE_TEMPLATES = _strings(_TEMPLATES["cafe"])
PARK_TEMPLATES = _strings(_TEMPLATES["park"])
DOG_PARK_TEMPLATES = _strings(_TEMPLATES["dog_park"])
HOME_HOTEL_TEMPLATES = _strings(_TEMPLATES["home_hotel"])
CHECK_IN_TEMPLATES = _strings(_TEMPLATES["check_in"])
HOTEL_MID_TEMPLATES = _strings(_TEMPLATES["hotel_mid_stay"])
CHECK_OUT_TEMPLATES = _strings(_TEMPLATES["check_out"])
TRIP_CITY_TEMPLATES = _strings(_TEMPLATES["trip_city"])
WORK_TRIP_TEMPLATES = _strings(_TEMPLATES["work_trip"])
ONE_OFF_PERSON_TEMPLATES = _strings(_TEMPLATES["one_off_person"])
ONE_OFF_SHOP_TEMPLATES = _strings(_TEMPLATES["one_off_shop"])
PEOPLE_TEMPLATES: dict[str, tuple[str, ...]] = {key: _strings(lines) for key, lines in _TEMPLATES["people"].items()}
WORK_TEMPLATES = _strings(_TEMPLATES["work"])
MISC_LINES: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (line["text"], _strings(line["tags"])) for line in _CATALOGUE["misc_lines"])

REACTIONS = _strings(_PHRASES["reactions"])
VERDICTS = _strings(_PHRASES["verdicts"])
CAFE_NOTES = _strings(_PHRASES["cafe_notes"])
ERRANDS = _strings(_PHRASES["errands"])
PARK_NOTES = _strings(_PHRASES["park_notes"])
PET_NOTES = _strings(_PHRASES["pet_notes"])
WEATHER = _strings(_PHRASES["weather"])
LODGING_NOTES = _strings(_PHRASES["lodging_notes"])
LODGING_FEEDBACK = _strings(_PHRASES["lodging_feedback"])
WORK_THINGS = _strings(_PHRASES["work_things"])
WORK_ACTIVITIES = _strings(_PHRASES["work_activities"])
WORK_NOTES = _strings(_PHRASES["work_notes"])
WORK_NOTES_SHORT = _strings(_PHRASES["work_notes_short"])
WEEKDAYS = _strings(_PHRASES["weekdays"])
