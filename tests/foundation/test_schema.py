"""The schema: migrations round-trip, constraints reject bad rows, the keyset scan is correct."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, IntegrityError

from domain.memory import MemoryIn
from runtime.database import downgrade, migrate
from store.memories import Cursor, read_after, store_memories


async def _tables(engine) -> set[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))
        return {row[0] for row in rows}


async def test_migrations_downgrade_to_base_and_upgrade_again(engine):
    expected = {
        "memory_units", "wiki_pages", "wiki_page_sections", "wiki_page_aliases", "wiki_page_links",
        "wiki_unresolved_mentions", "wiki_section_sources", "wiki_compile_cursors", "wiki_compile_jobs",
        "api_tokens",
    }
    assert expected <= await _tables(engine)
    await downgrade(engine, "base")
    assert not expected & await _tables(engine)
    await migrate(engine)
    await migrate(engine)  # idempotent at head
    assert expected <= await _tables(engine)


async def test_downgrading_scoped_memory_ids_refuses_while_an_id_is_in_two_scopes(engine):
    shared = uuid.uuid4()
    for tenant in ("t1", "t2"):
        await store_memories(engine, tenant, "o", [MemoryIn(id=shared, content=f"memory of {tenant}")])
    await downgrade(engine, "0003_scoped_memory_ids")  # later revisions first (they do not touch memory ids)
    with pytest.raises(RuntimeError, match="1 memory ids exist in more than one scope"):
        await downgrade(engine, "-1")  # one step: 0003_scoped_memory_ids, wherever the merge chains it
    async with engine.connect() as conn:
        kept = (await conn.execute(text("SELECT tenant_id FROM memory_units WHERE id = :i ORDER BY 1"),
                                   {"i": shared})).scalars().all()
        key = (await conn.execute(text(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'memory_units_pkey'"))).scalar_one()
    assert kept == ["t1", "t2"] and key == "PRIMARY KEY (tenant_id, owner_id, id)"


async def _insert_page(conn, **overrides) -> uuid.UUID:
    values = {"id": uuid.uuid4(), "tenant": "t", "owner": "o", "type": "entity", "slug": "austin",
              "title": "Austin", "status": "active"}
    values.update(overrides)
    await conn.execute(
        text("INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title, status) "
             "VALUES (:id, :tenant, :owner, :type, :slug, :title, :status)"),
        values,
    )
    return values["id"]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title) VALUES (gen_random_uuid(), 't', 'o', 'person', 's', 'T')",
        "INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title, status) VALUES (gen_random_uuid(), 't', 'o', 'entity', 's', 'T', 'deleted')",
        "INSERT INTO wiki_page_links (id, from_page_id, to_page_id, kind) VALUES (gen_random_uuid(), :a, :b, 'sibling_of')",
        "INSERT INTO wiki_page_links (id, from_page_id, to_page_id) VALUES (gen_random_uuid(), :a, :a)",
        "INSERT INTO wiki_page_aliases (id, page_id, alias, source) VALUES (gen_random_uuid(), :a, 'x', 'guess')",
        "INSERT INTO wiki_unresolved_mentions (id, tenant_id, owner_id, alias, alias_normalized, status) VALUES (gen_random_uuid(), 't', 'o', 'X', 'x', 'maybe')",
        "INSERT INTO wiki_unresolved_mentions (id, tenant_id, owner_id, alias, alias_normalized, suggested_type) VALUES (gen_random_uuid(), 't', 'o', 'X', 'x', 'place')",
        "INSERT INTO wiki_compile_jobs (id, workflow_id, run_id, trigger) VALUES (gen_random_uuid(), 'w', 'r', 'whenever')",
        "INSERT INTO wiki_compile_jobs (id, workflow_id, run_id, trigger, status, tenant_id, owner_id) VALUES (gen_random_uuid(), 'w', 'r', 'admin', 'exploded', 't', 'o')",
        "INSERT INTO memory_units (id, tenant_id, owner_id, content, metadata) VALUES (gen_random_uuid(), 't', 'o', 'x', '[1]')",
        "INSERT INTO wiki_compile_cursors (tenant_id, owner_id, last_record_updated_at) VALUES ('t', 'o', now())",
    ],
)
async def test_constraints_reject_bad_rows(engine, statement):
    async with engine.begin() as conn:
        a = await _insert_page(conn, slug="a", title="A")
        b = await _insert_page(conn, slug="b", title="B")
    with pytest.raises((IntegrityError, DBAPIError)):
        async with engine.begin() as conn:
            params = {k: v for k, v in {"a": a, "b": b}.items() if f":{k}" in statement}
            await conn.execute(text(statement), params)


async def test_unique_keys_and_cascades(engine):
    async with engine.begin() as conn:
        page = await _insert_page(conn)
        other = await _insert_page(conn, slug="texas", title="Texas")
        section = uuid.uuid4()
        await conn.execute(text("INSERT INTO wiki_page_sections (id, page_id, section_slug, heading, body_md, position) "
                                "VALUES (:id, :p, 'overview', 'Overview', 'x', 1)"), {"id": section, "p": page})
        await conn.execute(text("INSERT INTO wiki_section_sources (id, section_id, source_kind, source_ref) "
                                "VALUES (gen_random_uuid(), :s, 'memory_unit', 'm1')"), {"s": section})
        await conn.execute(text("INSERT INTO wiki_page_aliases (id, page_id, alias) VALUES (gen_random_uuid(), :p, 'atx')"),
                           {"p": page})
        await conn.execute(text("INSERT INTO wiki_page_links (id, from_page_id, to_page_id) VALUES (gen_random_uuid(), :a, :b)"),
                           {"a": other, "b": page})
    with pytest.raises(IntegrityError):
        async with engine.begin() as conn:
            await _insert_page(conn)  # same (tenant, owner, type, slug)
    async with engine.begin() as conn:
        await _insert_page(conn, tenant="t2")  # another tenant may have the same slug
        await conn.execute(text("DELETE FROM wiki_pages WHERE id = :p"), {"p": page})
        counts = (await conn.execute(text(
            "SELECT (SELECT count(*) FROM wiki_page_sections), (SELECT count(*) FROM wiki_section_sources), "
            "(SELECT count(*) FROM wiki_page_aliases), (SELECT count(*) FROM wiki_page_links)"))).one()
    assert tuple(counts) == (0, 0, 0, 0)


async def test_search_tsv_splits_punctuation_joined_words(engine):
    async with engine.begin() as conn:
        await _insert_page(conn, slug="cafe", title="Cafe/Restaurant Empanada-House")
        hit = (await conn.execute(text(
            "SELECT count(*) FROM wiki_pages WHERE search_tsv @@ plainto_tsquery('english', 'restaurant') "
            "AND search_tsv @@ to_tsquery('english', 'empan:*')"))).scalar_one()
    assert hit == 1


async def _insert_memory(conn, updated_at: datetime, memory_id: uuid.UUID | None = None) -> uuid.UUID:
    memory_id = memory_id or uuid.uuid4()
    await conn.execute(
        text("INSERT INTO memory_units (id, tenant_id, owner_id, content, updated_at) VALUES (:id, 't', 'o', 'm', :u)"),
        {"id": memory_id, "u": updated_at},
    )
    return memory_id


async def test_keyset_orders_by_truncated_time_then_id_and_does_not_spin_on_microseconds(engine):
    base = datetime(2026, 5, 1, 12, 0, 0, 689019, tzinfo=UTC)
    ids = sorted(uuid.uuid4() for _ in range(5))
    async with engine.begin() as conn:
        # Three rows inside one millisecond (different microseconds), inserted in reverse id order.
        await _insert_memory(conn, base + timedelta(microseconds=300), ids[2])
        await _insert_memory(conn, base, ids[1])
        await _insert_memory(conn, base + timedelta(microseconds=500), ids[0])
        await _insert_memory(conn, base + timedelta(milliseconds=1), ids[3])
        await _insert_memory(conn, base - timedelta(seconds=1), ids[4])
    seen: list[uuid.UUID] = []
    cursor = Cursor()
    async with engine.connect() as conn:
        for _ in range(10):  # bounded: a spinning cursor would repeat rows and fail the assertion
            records, positions = await read_after(conn, "t", "o", cursor, limit=2)
            if not records:
                break
            seen += [record.id for record in records]
            cursor = positions[-1]
    assert seen == [ids[4], ids[0], ids[1], ids[2], ids[3]]
    assert cursor.updated_at == (base + timedelta(milliseconds=1)).replace(microsecond=690000)


async def test_python_trigram_similarity_matches_pg_trgm(engine):
    from domain.aliases import trigram_similarity

    pairs = [
        ("shinjuku gyoen national garden", "shinjuku gyoen national gardens"),
        ("barton springs pool", "barton spring pool"),
        ("cafe de flore", "cafe de florre"),
        ("paris", "paris france"),
        ("café mocha", "cafe mocha"),
        ("o'hara's pub-house", "ohara s pub house"),
        ("東京 tower", "東京"),
        ("", "x"),
    ]
    async with engine.connect() as conn:
        for left, right in pairs:
            expected = (await conn.execute(text("SELECT similarity(:a, :b)"), {"a": left, "b": right})).scalar_one()
            assert trigram_similarity(left, right) == pytest.approx(expected, abs=1e-6), (left, right)
