"""Memories as they arrive at `retain`: validation rules for the scope and for each memory."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_CONTENT_BYTES = 32 * 1024
MAX_METADATA_BYTES = 64 * 1024
SCOPE_PATTERN = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")
# NUL cannot be stored in Postgres text; the other C0 controls are never meaningful in a memory.
_FORBIDDEN_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MEMORY_ID_NAMESPACE = uuid.UUID("6f1b7b52-3c8e-4b8e-9a57-1d1f4c2e7a10")


class ScopeError(ValueError):
    pass


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
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata_size(cls, value: dict[str, Any]) -> dict[str, Any]:
        encoded = json.dumps(value, ensure_ascii=False)
        if "\\u0000" in encoded:
            raise ValueError("metadata contains a NUL character")
        size = len(encoded.encode("utf-8"))
        if size > MAX_METADATA_BYTES:
            raise ValueError(f"metadata is {size} bytes; the limit is {MAX_METADATA_BYTES} (64 KiB)")
        return value

    @field_validator("occurred_at")
    @classmethod
    def _assume_utc(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value

    def resolved_id(self, tenant: str, owner: str) -> uuid.UUID:
        if self.id is not None:
            return self.id
        when = self.occurred_at.isoformat() if self.occurred_at else ""
        return uuid.uuid5(_MEMORY_ID_NAMESPACE, f"{tenant}\x1f{owner}\x1f{when}\x1f{self.content}")


class LineError(BaseModel):
    line: int
    message: str


def parse_memory_lines(lines: list[str]) -> tuple[list[MemoryIn], list[LineError]]:
    """Parse JSONL. Every problem is reported with its line number; blank lines are skipped."""
    memories: list[MemoryIn] = []
    errors: list[LineError] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            # Some messages end with "at" already ("Unterminated string starting at").
            where = "column" if error.msg.endswith(" at") else "at column"
            errors.append(LineError(line=number, message=f"malformed JSON: {error.msg} {where} {error.colno}"))
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
