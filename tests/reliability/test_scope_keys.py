"""Keys built from a scope never let two scopes meet.

- The workflow id (the scope's lock) is injective: scopes (`x:y`, `z`) and (`x`, `y:z`), whose raw
  ids were both `compile:x:y:z`, each get a compile of their own, even when the second retain
  arrives while the first scope's compile is open.
- Memory ids are scoped: two tenants retaining the same explicit ids get two memories each, and
  each wiki cites, counts and shows only its own.
"""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.retain import retain_and_signal
from chaos.measure import cross_scope_rows, ledger_rows, ledger_sum, pending_memories
from domain.memory import ScopeError, validate_scope_part
from messages.compile import compile_workflow_id, encode_scope_part
from runtime.search_attributes import WIKI_OWNER, WIKI_TENANT
from store.memories import store_memories
from store.wiki_reads import sections_citing
from tests.compile.helpers import compile_scope, running_worker, sample_memories, test_settings
from tests.reliability.test_isolation import new_tenant, structure

OWNER = "alice"


@pytest.mark.parametrize(("tenant", "owner", "expected"), [
    ("demo", "alice", "compile:demo:alice"),  # no ':' or '%': the id every existing workflow has
    ("t1", "a.b@c-d_e", "compile:t1:a.b@c-d_e"),
    ("x:y", "z", "compile:x%3Ay:z"),
    ("x", "y:z", "compile:x:y%3Az"),
    ("50%", "o", "compile:50%25:o"),  # '%' is not allowed in a scope today; encoded all the same
])
def test_the_workflow_id_encodes_only_colon_and_percent(tenant, owner, expected):
    assert compile_workflow_id(tenant, owner) == expected


def test_the_workflow_id_is_injective_over_scopes():
    parts = ["x", "y", "x:y", "y:z", ":", "::", "%", "%3A", "x%3Ay", "a:b:c", "3A"]
    ids = {(tenant, owner): compile_workflow_id(tenant, owner) for tenant in parts for owner in parts}
    assert len(set(ids.values())) == len(ids)
    for (tenant, owner), workflow_id in ids.items():
        _, encoded_tenant, encoded_owner = workflow_id.split(":")  # no ':' survives inside a part
        assert (encoded_tenant, encoded_owner) == (encode_scope_part(tenant), encode_scope_part(owner))


@pytest.mark.parametrize("separator", ["/", "\x1f", "%", "*"])
def test_the_scope_alphabet_excludes_every_separator_a_scope_key_relies_on(separator):
    # '/' joins retain's lock key, '\x1f' the uuid5 row and memory ids, '%' starts an escape of the
    # workflow id, '*' is the lint's WikiTenant: a part containing one could make two keys equal.
    with pytest.raises(ScopeError):
        validate_scope_part("tenant", f"a{separator}b")


async def test_scopes_whose_raw_ids_collide_compile_independently(client, engine: AsyncEngine):
    base = new_tenant("x")
    first, second = (f"{base}:y", "z"), (base, "y:z")
    assert "compile:{}:{}".format(*first) == "compile:{}:{}".format(*second), "the raw ids should collide"
    memories = {first: sample_memories(30, seed=1), second: sample_memories(30, seed=2)}
    # A debounce window keeps the first scope's compile open while the second retain signals: with
    # the raw id, that signal woke the first scope's workflow and the second scope never compiled.
    settings = test_settings(WIKI_DEBOUNCE_SECONDS=2)
    async with running_worker(client, engine, settings):
        outcomes = {scope: await retain_and_signal(engine, *scope, memories[scope], client=client, settings=settings)
                    for scope in (first, second)}
        for outcome in outcomes.values():
            await outcome.compile.result()

    assert {scope: outcome.compile.id for scope, outcome in outcomes.items()} == {
        first: compile_workflow_id(*first), second: compile_workflow_id(*second)}
    for scope in (first, second):
        description = await client.get_workflow_handle(compile_workflow_id(*scope)).describe()
        attributes = description.typed_search_attributes
        assert (attributes.get(WIKI_TENANT), attributes.get(WIKI_OWNER)) == scope
        rows = await ledger_rows(engine, *scope)
        assert rows and rows[-1]["status"] == "succeeded", rows
        assert ledger_sum(rows, "records_read") == 30
        assert await pending_memories(engine, *scope) == 0
    breaches = await cross_scope_rows(engine)
    assert not any(breaches.values()), breaches


async def _aggregation_counts(engine: AsyncEngine, tenant: str) -> list[tuple[int, int]]:
    """(supporting_record_count, memory sources) of every section carrying aggregation metadata."""
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT CAST(s.aggregation ->> 'supporting_record_count' AS integer) AS counted,
                   (SELECT count(*) FROM wiki_section_sources src
                    WHERE src.section_id = s.id AND src.source_kind = 'memory_unit') AS sources
            FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o AND s.aggregation ? 'supporting_record_count'
        """), {"t": tenant, "o": OWNER})
        return [(row.counted, row.sources) for row in rows]


async def test_the_same_memory_ids_in_two_tenants_compile_into_two_wikis_citing_their_own(client, engine):
    first, second = new_tenant("ids-a"), new_tenant("ids-b")
    namespace = uuid.uuid4()
    memories = [memory.model_copy(update={"id": uuid.uuid5(namespace, str(n))})
                for n, memory in enumerate(sample_memories(120))]
    for tenant in (first, second):
        stored = await store_memories(engine, tenant, OWNER, memories)
        assert len(stored.inserted) == len(memories)  # the second tenant is told nothing of the first
    settings = test_settings()
    async with running_worker(client, engine, settings):
        for tenant in (first, second):
            await compile_scope(client, settings, tenant, OWNER)

    breaches = await cross_scope_rows(engine)
    assert not any(breaches.values()), breaches
    assert await structure(engine, first) == await structure(engine, second)
    # Evidence counts join memories on the scope too: one memory per source, never the other tenant's.
    for tenant in (first, second):
        counts = await _aggregation_counts(engine, tenant)
        assert counts and all(counted == sources for counted, sources in counts), counts
    async with engine.connect() as conn:
        cited = [memory.id for memory in memories if await sections_citing(conn, first, OWNER, memory.id)]
        assert cited
        for memory_id in cited:
            pages = {tenant: {s.page_slug for s in await sections_citing(conn, tenant, OWNER, memory_id)}
                     for tenant in (first, second)}
            assert pages[first] == pages[second]
        theirs = (await conn.execute(text(
            "SELECT count(*) FROM memory_units WHERE id = ANY(:ids) GROUP BY tenant_id ORDER BY tenant_id"),
            {"ids": [memory.id for memory in memories]})).scalars().all()
    assert theirs == [len(memories), len(memories)]
