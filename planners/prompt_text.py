"""Text helpers shared by the prompts: JSON as the prompts write it, bounded excerpts, metadata trim.

Values that come from memories or from the wiki (titles, texts, quotes, metadata) are always written
as JSON: one line each, quotes and newlines escaped, so no memory text can forge a line of the
prompt's own structure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

METADATA_STRING_LIMIT = 400
# Metadata keys that are bulky and say nothing to a planner (Places photo arrays, the raw store row).
METADATA_DROPPED_KEYS = frozenset({"photos", "raw"})
NONE_LINE = "(none)"
JSON_ONLY_INSTRUCTION = (
    "Answer with the JSON object only: no prose, no code fences. "
    "Include an empty array for every category that does not apply."
)


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…"


def one_line(text: str, limit: int) -> str:
    """`text` on one line (whitespace runs become one space), cut at `limit` characters."""
    return truncate(" ".join(text.split()), limit)


def to_json(value: Any) -> str:
    """Compact JSON as JavaScript's JSON.stringify writes it (no spaces, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def compact_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata trimmed to what helps a planner.

    Top level: drops `photos`/`raw`, null values and strings longer than 400 characters. One level
    of nested objects is filtered the same way except that nested nulls are kept. Arrays are kept
    as they are.
    """
    compact: dict[str, Any] = {}
    for key, value in metadata.items():
        if key in METADATA_DROPPED_KEYS or value is None or _is_long_string(value):
            continue
        if isinstance(value, Mapping):
            compact[key] = {
                sub_key: sub_value
                for sub_key, sub_value in value.items()
                if sub_key not in METADATA_DROPPED_KEYS and not _is_long_string(sub_value)
            }
        else:
            compact[key] = value
    return compact


def _is_long_string(value: Any) -> bool:
    return isinstance(value, str) and len(value) > METADATA_STRING_LIMIT


def section(heading: str, lines: Sequence[str]) -> str:
    return "\n".join([f"## {heading}", "", *(lines or [NONE_LINE])])


def js_number(value: float | int) -> str:
    # Scores come as floats; whole ones print without a fraction (0, not 0.0), like the prompt's other numbers.
    return str(int(value)) if float(value).is_integer() else str(value)
