"""The memory store that feeds compiles: retain (write) and the keyset scan (read).

Ordering contract: compiles read memories in (ms-truncated updated_at, id) order after a cursor.
A keyset cursor over a timestamp loses rows if a writer commits a timestamp *behind* a cursor that
a reader already advanced past. Retains of one scope therefore serialise on an advisory lock and
stamp rows strictly after everything already stored for the scope, one millisecond apart in
occurrence order, so a compile never skips a memory and reads a batch in the order it happened.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from domain.context import MemoryRecord
from domain.guards import is_valid_uuid
from domain.memory import MemoryIn, RetainError, TurnIn, validate_scope_part


@dataclass
class RetainResult:
    inserted: list[uuid.UUID] = field(default_factory=list)
    updated: list[uuid.UUID] = field(default_factory=list)
    unchanged: list[uuid.UUID] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return len(self.inserted) + len(self.updated)


@dataclass(frozen=True)
class Cursor:
    """Position after the last memory compiled: (ms-truncated updated_at, id); both None at the start."""

    updated_at: datetime | None = None
    record_id: uuid.UUID | None = None


def _scope_lock_key(tenant: str, owner: str) -> str:
    # Injective: '/' is outside the scope alphabet, so the key splits back into one scope. hashtext
    # folds it to 32 bits; two scopes that share a hash only wait for each other's retains.
    return f"wiki-retain:{tenant}/{owner}"


def _turn_columns(memory: MemoryIn) -> tuple[str | None, str | None, str | None, int | None]:
    """A turn's speaker, role, conversation and position; four Nones for a memory that is no turn."""
    if isinstance(memory, TurnIn):
        turn = memory.turn
        return turn.speaker, turn.role, turn.conversation, turn.position
    return None, None, None, None


def _stored_form(memory: MemoryIn) -> tuple[Any, ...]:
    return memory.content, memory.metadata, *_turn_columns(memory)


def _prepare(tenant: str, owner: str, memories: list[MemoryIn]) -> list[tuple[uuid.UUID, MemoryIn]]:
    by_id: dict[uuid.UUID, MemoryIn] = {}
    for memory in memories:
        memory_id = memory.resolved_id(tenant, owner)
        previous = by_id.get(memory_id)
        if previous is not None and _stored_form(previous) != _stored_form(memory):
            raise RetainError(f"memory {memory_id} appears twice in the batch with different content")
        by_id[memory_id] = memory
    # Occurrence order first (memories without a time keep their place after timed ones), then input order.
    indexed = list(enumerate(by_id.items()))
    indexed.sort(key=lambda item: (item[1][1].occurred_at is None, item[1][1].occurred_at or 0, item[0]))
    return [pair for _, pair in indexed]


async def store_memories(engine: AsyncEngine, tenant: str, owner: str, memories: list[MemoryIn]) -> RetainResult:
    """Store a whole batch in one transaction, idempotent on memory id.

    Same id and same content/metadata: no-op. Same id with new content: updated, `updated_at` moves
    forward so the next compile sees it again. Ids are scoped: every statement keys on (tenant,
    owner, id), so an id another scope also uses is, here, simply an id this scope does not have yet;
    nothing about the other scope can change the result or show in it.
    """
    validate_scope_part("tenant", tenant)
    validate_scope_part("owner", owner)
    prepared = _prepare(tenant, owner, memories)
    result = RetainResult()
    if not prepared:
        return result
    async with engine.begin() as conn:
        await conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": _scope_lock_key(tenant, owner)})
        await _check_user_name(conn, tenant, owner, [memory for _, memory in prepared])
        existing = {
            row.id: row
            for row in await conn.execute(
                text("SELECT id, content, metadata, speaker, speaker_role, conversation_id, position FROM memory_units "
                     "WHERE tenant_id = :tenant AND owner_id = :owner AND id = ANY(:ids)"),
                {"tenant": tenant, "owner": owner, "ids": [memory_id for memory_id, _ in prepared]},
            )
        }
        to_write: list[tuple[uuid.UUID, MemoryIn]] = []
        for memory_id, memory in prepared:
            row = existing.get(memory_id)
            if row is None:
                result.inserted.append(memory_id)
                to_write.append((memory_id, memory))
            elif (row.content, row.metadata, row.speaker, row.speaker_role, row.conversation_id,
                  row.position) == _stored_form(memory):
                result.unchanged.append(memory_id)
            else:
                result.updated.append(memory_id)
                to_write.append((memory_id, memory))
        if not to_write:
            return result
        base = (
            await conn.execute(
                text(
                    """
                    SELECT greatest(
                        date_trunc('milliseconds', clock_timestamp()),
                        coalesce(max(updated_at), '-infinity'::timestamptz) + interval '1 millisecond')
                    FROM memory_units WHERE tenant_id = :tenant AND owner_id = :owner
                    """
                ),
                {"tenant": tenant, "owner": owner},
            )
        ).scalar_one()
        await conn.execute(
            text(
                """
                INSERT INTO memory_units (id, tenant_id, owner_id, content, metadata, created_at, updated_at,
                                          speaker, speaker_role, conversation_id, position)
                VALUES (:id, :tenant, :owner, :content, CAST(:metadata AS jsonb),
                        coalesce(CAST(:occurred_at AS timestamptz), :stamp), :stamp,
                        :speaker, :speaker_role, :conversation, :position)
                ON CONFLICT (tenant_id, owner_id, id) DO UPDATE SET content = excluded.content, metadata = excluded.metadata,
                    created_at = coalesce(CAST(:occurred_at AS timestamptz), memory_units.created_at), updated_at = excluded.updated_at,
                    speaker = excluded.speaker, speaker_role = excluded.speaker_role,
                    conversation_id = excluded.conversation_id, position = excluded.position
                """
            ),
            [
                {
                    "id": memory_id,
                    "tenant": tenant,
                    "owner": owner,
                    "content": memory.content,
                    "metadata": json.dumps(memory.metadata, ensure_ascii=False),
                    "occurred_at": memory.occurred_at,
                    "stamp": _plus_ms(base, index),
                    **dict(zip(("speaker", "speaker_role", "conversation", "position"), _turn_columns(memory),
                               strict=True)),
                }
                for index, (memory_id, memory) in enumerate(to_write)
            ],
        )
    return result


async def _check_user_name(conn: AsyncConnection, tenant: str, owner: str, memories: list[MemoryIn]) -> None:
    """A scope's user has one name: `user` turns under another name than the stored one are refused
    (checked under the retain lock, so two first conversations cannot give two names)."""
    names = {m.turn.speaker for m in memories if isinstance(m, TurnIn) and m.turn.role == "user"}
    if not names:
        return
    stored = await scope_user_name(conn, tenant, owner)
    other = sorted(n for n in names if stored is not None and n.casefold() != stored.casefold())
    if len(names) > 1 or other:
        raise RetainError(f"this wiki's user is named {stored or sorted(names)[0]!r}; turns name them "
                          f"{(other or sorted(names))[-1]!r}")


def _plus_ms(base: datetime, count: int) -> datetime:
    return base + timedelta(milliseconds=count)


_COLUMNS = "id, content, metadata, created_at, updated_at, speaker, speaker_role, conversation_id, position"
_KEYSET_SQL = f"""
    SELECT {_COLUMNS},
           date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC') AS cursor_ts
    FROM memory_units
    WHERE tenant_id = :tenant AND owner_id = :owner
      AND (date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC'), id) > (:since, :since_id)
    ORDER BY date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC'), id
    LIMIT :limit
"""
_EPOCH = datetime(1970, 1, 1)
_NIL = uuid.UUID(int=0)


def _cursor_params(cursor: Cursor) -> dict[str, Any]:
    # The keyset compares naive UTC wall times (see the index in migration 0001).
    since = cursor.updated_at.astimezone(UTC).replace(tzinfo=None) if cursor.updated_at else _EPOCH
    return {"since": since, "since_id": cursor.record_id or _NIL}


def _record(row: Any, participants: list[str] | None = None) -> MemoryRecord:
    return MemoryRecord(id=row.id, content=row.content, metadata=row.metadata or {}, created_at=row.created_at,
                        updated_at=row.updated_at, speaker=row.speaker, speaker_role=row.speaker_role,
                        conversation=row.conversation_id, position=row.position,
                        participants=participants or [])


async def read_after(
    conn: AsyncConnection, tenant: str, owner: str, cursor: Cursor, limit: int
) -> tuple[list[MemoryRecord], list[Cursor]]:
    """The next `limit` memories after `cursor`, with the cursor position after each of them."""
    rows = (
        await conn.execute(
            text(_KEYSET_SQL), {"tenant": tenant, "owner": owner, "limit": limit, **_cursor_params(cursor)}
        )
    ).all()
    records = [_record(row) for row in rows]
    positions = [Cursor(updated_at=row.cursor_ts.replace(tzinfo=UTC), record_id=row.id) for row in rows]
    return records, positions


_COUNTS_SQL = """
    SELECT count(*) AS total,
           count(*) FILTER (WHERE (date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC'), id)
                                  <= (:since, :since_id)) AS before
    FROM memory_units WHERE tenant_id = :tenant AND owner_id = :owner
"""


async def counts_at(conn: AsyncConnection, tenant: str, owner: str, cursor: Cursor) -> tuple[int, int]:
    """(the scope's memories, those at or before `cursor` in keyset order): a compile's progress."""
    row = (await conn.execute(text(_COUNTS_SQL), {"tenant": tenant, "owner": owner, **_cursor_params(cursor)})).one()
    return int(row.total), int(row.before)


async def load_memories(conn: AsyncConnection, tenant: str, owner: str,
                        ids: Sequence[uuid.UUID | str]) -> list[MemoryRecord]:
    """Memories of the scope by id, in the order asked, each once (ids of other scopes, and strings
    that are no id at all, are simply absent). Ids may be UUIDs or their text (a section's citations)."""
    ids = list(dict.fromkeys(i if isinstance(i, uuid.UUID) else uuid.UUID(i.strip()) for i in ids
                             if is_valid_uuid(i if isinstance(i, uuid.UUID) else i.strip())))
    if not ids:
        return []
    rows = (
        await conn.execute(
            text(
                f"SELECT {_COLUMNS} FROM memory_units "
                "WHERE tenant_id = :tenant AND owner_id = :owner AND id = ANY(:ids)"
            ),
            {"tenant": tenant, "owner": owner, "ids": ids},
        )
    ).all()
    speakers = await _conversation_speakers(conn, tenant, owner, {row.conversation_id for row in rows})
    by_id = {row.id: _record(row, speakers.get(row.conversation_id, [])) for row in rows}
    return [by_id[memory_id] for memory_id in ids if memory_id in by_id]


async def _conversation_speakers(conn: AsyncConnection, tenant: str, owner: str,
                                 conversations: set[str | None]) -> dict[str, list[str]]:
    """Everyone who speaks in each conversation: one read for all the conversations asked of."""
    wanted = sorted(c for c in conversations if c)
    if not wanted:
        return {}
    rows = await conn.execute(text(
        "SELECT conversation_id, array_agg(DISTINCT speaker ORDER BY speaker) AS speakers FROM memory_units "
        "WHERE tenant_id = :tenant AND owner_id = :owner AND conversation_id = ANY(:conversations) "
        "AND speaker IS NOT NULL GROUP BY conversation_id"),
        {"tenant": tenant, "owner": owner, "conversations": wanted})
    return {row.conversation_id: list(row.speakers) for row in rows}


async def scope_user_name(conn: AsyncConnection, tenant: str, owner: str) -> str | None:
    """The name the scope's user speaks under in its conversations (their first `user` turn), if any."""
    return (await conn.execute(text(
        "SELECT speaker FROM memory_units WHERE tenant_id = :tenant AND owner_id = :owner "
        "AND speaker_role = 'user' ORDER BY created_at, id LIMIT 1"), {"tenant": tenant, "owner": owner})).scalar()


@dataclass(frozen=True)
class TurnAround:
    """A turn near another one of the same conversation."""

    id: uuid.UUID
    position: int
    speaker: str
    content: str
    occurred_at: datetime


async def turns_around(conn: AsyncConnection, tenant: str, owner: str, memory_ids: Sequence[uuid.UUID],
                       before: int, after: int) -> dict[uuid.UUID, list[TurnAround]]:
    """For each memory that is a turn, the turns of its conversation from `before` positions before it
    to `after` after it, itself included, in order (positions with no turn are skipped). Memories that
    are no turns, and ids of other scopes, are absent."""
    if not memory_ids:
        return {}
    rows = (await conn.execute(text(
        """
        SELECT m.id AS about, t.id, t.position, t.speaker, t.content, t.created_at
        FROM memory_units m
        JOIN memory_units t ON t.tenant_id = m.tenant_id AND t.owner_id = m.owner_id
             AND t.conversation_id = m.conversation_id
             AND t.position BETWEEN m.position - :before AND m.position + :after
        WHERE m.tenant_id = :tenant AND m.owner_id = :owner AND m.id = ANY(:ids) AND m.conversation_id IS NOT NULL
        ORDER BY m.id, t.position
        """), {"tenant": tenant, "owner": owner, "ids": list(memory_ids), "before": before, "after": after})).all()
    found: dict[uuid.UUID, list[TurnAround]] = {}
    for row in rows:
        found.setdefault(row.about, []).append(TurnAround(id=row.id, position=row.position, speaker=row.speaker,
                                                          content=row.content, occurred_at=row.created_at))
    return found
