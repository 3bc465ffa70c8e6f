"""Retain: idempotent on memory id, all-or-nothing, every bad input named."""

from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import text

from domain.memory import MemoryIn, RetainError, ScopeError, parse_memory_lines
from store.memories import Cursor, RetainResult, load_memories, read_after, store_memories


async def _count(engine) -> int:
    async with engine.connect() as conn:
        return (await conn.execute(text("SELECT count(*) FROM memory_units"))).scalar_one()


async def test_retain_is_idempotent_on_id_and_updates_changed_content(engine):
    first = MemoryIn(id=uuid.uuid4(), content="Had brisket at Franklin Barbecue.", metadata={"tags": ["bbq"]})
    second = MemoryIn(content="Walked Biscuit around Lady Bird Lake.")
    result = await store_memories(engine, "t1", "o1", [first, second])
    assert len(result.inserted) == 2 and result.changed == 2

    again = await store_memories(engine, "t1", "o1", [first, second])
    assert again.changed == 0 and len(again.unchanged) == 2
    assert await _count(engine) == 2

    async with engine.connect() as conn:
        before = (await conn.execute(text("SELECT updated_at FROM memory_units WHERE id = :i"), {"i": first.id})).scalar_one()
    edited = first.model_copy(update={"content": "Had brisket and turkey at Franklin Barbecue."})
    changed = await store_memories(engine, "t1", "o1", [edited])
    assert changed.updated == [first.id]
    async with engine.connect() as conn:
        row = (await conn.execute(text("SELECT content, updated_at FROM memory_units WHERE id = :i"), {"i": first.id})).one()
    assert row.content.startswith("Had brisket and turkey") and row.updated_at > before


async def test_retained_memories_are_read_in_occurrence_order_after_earlier_retains(engine):
    late = MemoryIn(content="second", occurred_at="2026-03-02T10:00:00Z")
    early = MemoryIn(content="first", occurred_at="2026-03-01T10:00:00Z")
    await store_memories(engine, "t1", "o1", [late, early])
    await store_memories(engine, "t1", "o1", [MemoryIn(content="third", occurred_at="2026-01-01T00:00:00Z")])
    async with engine.connect() as conn:
        records, _ = await read_after(conn, "t1", "o1", Cursor(), limit=10)
    assert [r.content for r in records] == ["first", "second", "third"]


async def _memory_rows(engine, memory_id: uuid.UUID) -> list[tuple]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT tenant_id, owner_id, content FROM memory_units WHERE id = :i "
                                       "ORDER BY tenant_id, owner_id"), {"i": memory_id})
        return [tuple(row) for row in rows]


async def test_the_same_id_in_two_tenants_is_two_memories_neither_scope_sees_the_other(engine):
    shared = uuid.uuid4()
    mine = await store_memories(engine, "t1", "o1", [MemoryIn(id=shared, content="mine")])
    # The second tenant's batch behaves exactly as on an empty store: the id is simply new to it.
    theirs = await store_memories(engine, "t2", "o1", [MemoryIn(content="fine"), MemoryIn(id=shared, content="theirs")])
    alone = await store_memories(engine, "t3", "o1", [MemoryIn(content="fine"), MemoryIn(id=uuid.uuid4(), content="theirs")])
    assert mine.inserted == [shared] and shared in theirs.inserted
    assert (len(theirs.inserted), len(theirs.updated), len(theirs.unchanged)) == (
        len(alone.inserted), len(alone.updated), len(alone.unchanged)) == (2, 0, 0)
    assert await _memory_rows(engine, shared) == [("t1", "o1", "mine"), ("t2", "o1", "theirs")]

    # An update in one scope leaves the other's memory, and what each scope reads, untouched.
    edited = await store_memories(engine, "t2", "o1", [MemoryIn(id=shared, content="theirs, edited")])
    assert edited.updated == [shared]
    assert await store_memories(engine, "t1", "o1", [MemoryIn(id=shared, content="mine")]) == RetainResult(unchanged=[shared])
    async with engine.connect() as conn:
        first = await load_memories(conn, "t1", "o1", [shared])
        second, _ = await read_after(conn, "t2", "o1", Cursor(), limit=10)
    assert [m.content for m in first] == ["mine"]
    assert sorted(m.content for m in second) == ["fine", "theirs, edited"]


async def test_conflicting_duplicates_in_one_batch_store_nothing(engine):
    same = uuid.uuid4()
    with pytest.raises(RetainError, match="twice"):
        await store_memories(engine, "t1", "o1", [MemoryIn(id=same, content="a"), MemoryIn(id=same, content="b")])
    assert await _count(engine) == 0


@pytest.mark.parametrize("tenant", ["", "a b", "x" * 129, "t;drop", "tenant/1"])
async def test_bad_scope_is_rejected(engine, tenant):
    with pytest.raises(ScopeError, match="tenant must be 1-128 characters"):
        await store_memories(engine, tenant, "o1", [MemoryIn(content="x")])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"content": ""}', "content: content must not be empty"),
        ('{"content": "   "}', "content must not be empty"),
        (json.dumps({"content": "x" * (32 * 1024 + 1)}), "the limit is 32768 (32 KiB)"),
        (json.dumps({"content": "ok", "metadata": {"blob": "y" * (64 * 1024)}}), "the limit is 65536 (64 KiB)"),
        ('{"content": "ok", "metadata": [1, 2]}', "metadata must be a JSON object"),
        ('{"content": "ok", "metadata": "tags"}', "metadata must be a JSON object"),
        ('{"content": "bell\\u0007"}', "control characters"),
        ('{"content": "nul\\u0000"}', "control characters"),
        ('{"content": "ok", "id": "814e6b70"}', "id: Input should be a valid UUID"),
        ('{"content": 42}', "content: Input should be a valid string"),
        ('{"text": "wrong key"}', "content: Field required"),
        ('{"content": "ok", "occurred_at": "yesterday"}', "occurred_at"),
        ('{"content": "unterminated', "malformed JSON"),
        ('[1, 2]', "each line must be a JSON object"),
        # Refused before the parser recurses into them, and before anything reaches the database.
        ('{"content": "ok", "metadata": ' + "[" * 5000 + "]" * 5000 + "}", "metadata nests more than 32 levels deep"),
        ('{"content": "ok", "metadata": ' + '{"a": ' * 33 + "1" + "}" * 33 + "}", "nests more than 32 levels"),
        (json.dumps({"content": "x" * (1024 * 1024)}), "the line is 1048591 bytes; the limit is 1048576 (1 MiB)"),
        ('{"content": "ok", "metadata": {"n": ' + "9" * 5000 + "}}", "a number has 5000 digits; the limit is 4300"),
        ('{"content": "ok", "metadata": {"n": 1e999}}', "the number 1e999 is out of range"),
        ('{"content": "ok", "metadata": {"n": NaN}}', "NaN is not a JSON number"),
        ('{"content": "ok", "occurred_at": "9999-12-31T23:59:59-05:00"}',
         "occurred_at: 9999-12-31T23:59:59-05:00 is out of range: in UTC it must fall strictly within the years 1 to 9999"),
        ('{"content": "ok", "occurred_at": "0001-01-01T00:30:00+01:00"}', "is out of range"),
    ],
)
def test_bad_lines_are_reported_with_line_numbers(line, message):
    good = '{"content": "fine"}'
    memories, errors = parse_memory_lines([good, "", line])
    assert len(memories) == 1
    assert len(errors) == 1 and errors[0].line == 3
    assert message in errors[0].message


def test_metadata_at_the_limits_is_accepted():
    deepest: dict = {"leaf": [1]}
    for _ in range(30):
        deepest = {"a": deepest}  # 32 levels: 31 objects and the list
    lines = [json.dumps({"content": "deep enough", "metadata": deepest, "occurred_at": "9999-12-31T23:59:59+05:00"}),
             json.dumps({"content": "[[[[" * 100, "metadata": {"brackets": "{" * 5000}})]
    memories, errors = parse_memory_lines(lines)
    assert not errors and len(memories) == 2


@pytest.mark.parametrize("metadata", [{"a": float("nan")}, {"a": [float("inf")]}])
def test_metadata_built_in_code_is_held_to_the_same_rules(metadata):
    with pytest.raises(ValueError, match="NaN or Infinity"):
        MemoryIn(content="x", metadata=metadata)
    deep: dict = {"a": 1}
    for _ in range(5000):
        deep = {"a": deep}
    with pytest.raises(ValueError, match="nests more than 32 levels deep"):
        MemoryIn(content="x", metadata=deep)


def test_markdown_and_sql_in_content_are_just_text():
    memories, errors = parse_memory_lines([json.dumps({"content": "Robert'); DROP TABLE memory_units;-- [[Evil]] **x**"})])
    assert not errors and memories[0].content.startswith("Robert'")
