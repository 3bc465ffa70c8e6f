"""Memories as they arrive at `retain`: validation rules for the scope and for each memory."""

from __future__ import annotations

import json
import math
import re
import sys
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_CONTENT_BYTES = 32 * 1024
MAX_METADATA_BYTES = 64 * 1024
# A line is measured before it is parsed. Its fields' own limits are on their decoded values, and
# JSON escapes can make a value up to six times longer on the line, so the line limit leaves room.
MAX_LINE_BYTES = 1024 * 1024
# How deep metadata may nest (the metadata object itself is level 1). Checked before parsing: the
# json module parses nested values recursively, so a line nested thousands deep would otherwise
# exhaust the interpreter's recursion limit inside the parser.
MAX_METADATA_DEPTH = 32
SCOPE_PATTERN = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")
# NUL cannot be stored in Postgres text; the other C0 controls are never meaningful in a memory.
_FORBIDDEN_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Metadata strings become names, titles and aliases, which end up on one line of a page or a
# terminal: every C0 and C1 control but tab and line breaks is refused (an ESC sequence included).
_FORBIDDEN_IN_METADATA = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# asyncpg stores these two instants as Postgres' -infinity and infinity, and nothing outside them
# exists in Postgres' range either: a time is kept only strictly between them.
_FIRST_INSTANT = datetime.min.replace(tzinfo=UTC)
_LAST_INSTANT = datetime.max.replace(tzinfo=UTC)
_MEMORY_ID_NAMESPACE = uuid.UUID("6f1b7b52-3c8e-4b8e-9a57-1d1f4c2e7a10")


class ScopeError(ValueError):
    pass


class RetainError(ValueError):
    """The batch was rejected as a whole; nothing was stored."""


def parse_instant(name: str, value: Any) -> datetime:
    """An ISO 8601 date-time (UTC when it names no offset) that can be stored as given.

    Only ISO 8601 strings (and datetimes built in code) are taken: a number, or a string of digits
    such as "12345", is refused rather than read as a Unix time. A time whose UTC instant falls
    outside the years 1 to 9999, or on the first or last representable instant (which the driver
    stores as -infinity / infinity), is refused. The value keeps its own offset.
    """
    if isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(r"[+-]?\d{4}-\d{2}-\d{2}([T ].*)?", text, re.ASCII | re.DOTALL):
            raise ValueError(f"{name} must be an ISO 8601 date-time such as 2026-11-23T10:00:00Z (got {value[:40]!r})")
        try:
            value = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{name} is not a valid ISO 8601 date-time (got {text[:40]!r})") from None
    elif not isinstance(value, datetime):
        raise ValueError(f"{name} must be an ISO 8601 date-time string, not {type(value).__name__}")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        instant = value.astimezone(UTC)
    except OverflowError:
        instant = None
    if instant is None or not _FIRST_INSTANT < instant < _LAST_INSTANT:
        raise ValueError(f"{value.isoformat()} is out of range: in UTC it must fall strictly within the years "
                         "1 to 9999")
    return value


def _metadata_control_problem(value: Any) -> str | None:
    """Where a metadata string (key or value) holds a control character, walked without recursion."""
    stack: list[tuple[Any, str]] = [(value, "metadata")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if _FORBIDDEN_IN_METADATA.search(item):
                return where
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and _FORBIDDEN_IN_METADATA.search(key):
                    return f"{where} (a key)"
                stack.append((child, f"{where}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(item))
    return None


def validate_scope_part(name: str, value: str) -> str:
    if not isinstance(value, str) or not SCOPE_PATTERN.fullmatch(value):
        raise ScopeError(
            f"{name} must be 1-128 characters of letters, digits and _ . : @ - (got {value!r})"
        )
    return value


class MemoryIn(BaseModel):
    """One memory to retain. Without an id, one is derived from the scope, content and time, so
    re-sending the same file is a no-op rather than a duplicate."""

    model_config = ConfigDict(extra="forbid")

    id: uuid.UUID | None = None
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    occurred_at: datetime | None = None

    @field_validator("content")
    @classmethod
    def _content_rules(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content must not be empty")
        size = len(value.encode("utf-8"))
        if size > MAX_CONTENT_BYTES:
            raise ValueError(f"content is {size} bytes; the limit is {MAX_CONTENT_BYTES} (32 KiB)")
        if _FORBIDDEN_CONTROL.search(value):
            raise ValueError("content contains control characters (only tab and newlines are allowed)")
        return value

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata_is_object(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError(f"metadata must be a JSON object, not {type(value).__name__}")
        # Built in code rather than parsed from a line, metadata still has to be encodable without
        # recursing past the interpreter's limit: measured by an explicit walk, never by recursion.
        if _nesting_depth(value) > MAX_METADATA_DEPTH:
            raise ValueError(_TOO_DEEP)
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata_size(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except ValueError:
            raise ValueError("metadata contains NaN or Infinity, which JSON cannot represent") from None
        if "\\u0000" in encoded:
            raise ValueError("metadata contains a NUL character")
        where = _metadata_control_problem(value)
        if where is not None:
            raise ValueError(f"{where[:120]} contains a control character (only tab and line breaks are allowed)")
        size = len(encoded.encode("utf-8"))
        if size > MAX_METADATA_BYTES:
            raise ValueError(f"metadata is {size} bytes; the limit is {MAX_METADATA_BYTES} (64 KiB)")
        return value

    @field_validator("occurred_at", mode="before")
    @classmethod
    def _iso_instant(cls, value: Any) -> datetime | None:
        # The database stores the instant in UTC, and a time near the end of year 9999 (or the start
        # of year 1) can leave the representable range only once its offset is applied. The value
        # keeps its own offset: derived ids are computed from it as given.
        return None if value is None else parse_instant("occurred_at", value)

    def resolved_id(self, tenant: str, owner: str) -> uuid.UUID:
        if self.id is not None:
            return self.id
        when = self.occurred_at.isoformat() if self.occurred_at else ""
        return uuid.uuid5(_MEMORY_ID_NAMESPACE, f"{tenant}\x1f{owner}\x1f{when}\x1f{self.content}")


class TurnRef(BaseModel):
    """Where a memory stands in a conversation (domain/conversation.py): who spoke, in which conversation,
    at which position."""

    model_config = ConfigDict(frozen=True)

    conversation: str
    position: int
    speaker: str
    role: Literal["user", "assistant"] | None = None


class TurnIn(MemoryIn):
    """A memory that is a turn of a conversation: built by domain/conversation.py, never read from a
    memory line. Its id is derived from the scope, the conversation and the position."""

    turn: TurnRef

    def resolved_id(self, tenant: str, owner: str) -> uuid.UUID:
        if self.id is not None:
            return self.id
        return uuid.uuid5(_TURN_NAMESPACE, f"{tenant}\x1f{owner}\x1f{self.turn.conversation}\x1f{self.turn.position}")


_TURN_NAMESPACE = uuid.UUID("a3c4f0de-2b1f-4f55-9d36-1d7e9f6c2b41")


class LineError(BaseModel):
    line: int
    message: str


_TOO_DEEP = f"metadata nests more than {MAX_METADATA_DEPTH} levels deep"
# A JSON string (escapes included), matched possessively so that no input makes the match backtrack.
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_JSON_MARK = re.compile(r"[\[\]{},]")


def _nesting_depth(value: Any) -> int:
    """How deep lists and dicts nest in `value` (a scalar is 0), by an explicit stack, not recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list | tuple) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_METADATA_DEPTH + 1:
            return deepest  # deep enough to refuse: no need to walk the rest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def json_outline_problem(text: str, max_depth: int, max_items: int | None = None, items_depth: int = 2,
                         ) -> str | None:
    """What makes a JSON text too deep or too long to parse, found without parsing: string literals
    are blanked, then brackets and commas counted in one linear scan. `max_depth` bounds how deep
    arrays and objects nest; `max_items` bounds the elements of any array or object that sits at
    `items_depth` (2: the list inside the top-level object)."""
    depth = 0
    items = 0
    for mark in _JSON_MARK.finditer(_JSON_STRING.sub('""', text)):
        char = mark.group()
        if char in "[{":
            depth += 1
            if depth > max_depth:
                return _TOO_DEEP
            if depth == items_depth:
                items = 1
        elif char == ",":
            if depth == items_depth and max_items is not None:
                items += 1
                if items > max_items:
                    return f"at most {max_items} items per call"
        else:
            depth -= 1
    return None


def _line_too_deep(line: str) -> bool:
    """Whether the line's arrays and objects nest deeper than a valid memory's. The line's own object
    is one level more than its metadata."""
    return json_outline_problem(line, MAX_METADATA_DEPTH + 1) is not None


class _Unrepresentable(ValueError):
    """A number the line spells validly but the store cannot hold as JSON."""


def _parse_constant(name: str) -> Any:
    raise _Unrepresentable(f"{name} is not a JSON number")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Unrepresentable(f"the number {text[:40]} is out of range")
    return value


def _parse_int(text: str) -> int:
    # Python refuses to convert longer digit strings (a ValueError from deep inside the parser).
    limit = sys.get_int_max_str_digits() or 4300
    if len(text.lstrip("-")) > limit:
        raise _Unrepresentable(f"a number has {len(text.lstrip('-'))} digits; the limit is {limit}")
    return int(text)


def _parse_line(line: str) -> Any:
    """The line's JSON value; raises ValueError with the message to report (size and depth first)."""
    size = len(line.encode("utf-8", errors="surrogatepass"))
    if size > MAX_LINE_BYTES:
        raise ValueError(f"the line is {size} bytes; the limit is {MAX_LINE_BYTES} (1 MiB)")
    if _line_too_deep(line):
        raise ValueError(_TOO_DEEP)
    return parse_json(line)


def parse_json(text: str) -> Any:
    """Strict JSON (no NaN or Infinity, no number the store cannot hold); ValueError says what is wrong
    and where, in one sentence. Size and depth are the caller's to check first."""
    try:
        return json.loads(text, parse_constant=_parse_constant, parse_float=_parse_float, parse_int=_parse_int)
    except json.JSONDecodeError as error:
        # Some messages end with "at" already ("Unterminated string starting at").
        where = "column" if error.msg.endswith(" at") else "at column"
        raise ValueError(f"malformed JSON: {error.msg} {where} {error.colno}") from None
    except _Unrepresentable as error:
        raise ValueError(str(error)) from None


def parse_memory_lines(lines: list[str]) -> tuple[list[MemoryIn], list[LineError]]:
    """Parse JSONL. Every problem is reported with its line number; blank lines are skipped."""
    memories: list[MemoryIn] = []
    errors: list[LineError] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = _parse_line(line)
        except ValueError as error:
            errors.append(LineError(line=number, message=str(error)))
            continue
        if not isinstance(raw, dict):
            errors.append(LineError(line=number, message="each line must be a JSON object"))
            continue
        try:
            memories.append(MemoryIn.model_validate(raw))
        except ValueError as error:
            errors.append(LineError(line=number, message=_first_problems(error)))
    return memories, errors


def _first_problems(error: ValueError) -> str:
    from pydantic import ValidationError

    if not isinstance(error, ValidationError):
        return str(error)
    parts = []
    for item in error.errors():
        field = ".".join(str(p) for p in item["loc"]) or "memory"
        message = item["msg"].removeprefix("Value error, ")
        parts.append(f"{field}: {message}")
    return "; ".join(parts)


def duplicate_ids(memories: list[MemoryIn], tenant: str, owner: str) -> list[str]:
    seen: dict[uuid.UUID, int] = {}
    for memory in memories:
        key = memory.resolved_id(tenant, owner)
        seen[key] = seen.get(key, 0) + 1
    return sorted(str(key) for key, count in seen.items() if count > 1)
