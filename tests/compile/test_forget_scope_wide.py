"""What a forgotten memory left beyond the sections citing it: mention counts past the five samples,
links and summaries on pages outside its blast radius, aliases, rejected lines. Each case is built on
a compiled sample (seeded), with the rows a plan that read the memory would have written placed on
pages chosen at random among those that never cite it; the forget must leave none of its text, count
it out of every mention, and say in its receipt exactly what its dry run said."""

from __future__ import annotations

import json
import random
import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.forget import forget_memories, preview_forget, wait_for_receipt
from app.reads import ReadScope
from domain.memory import MemoryIn
from messages.compile import compile_workflow_id
from store.memories import store_memories
from tests.compile.helpers import compile_scope, running_worker, sample_memories
from tests.compile.helpers import test_settings as settings_for
from tests.compile.test_forget import new_scope, rows_holding, sections_by_id

WORDS = ["quorbelline", "snarvidge", "plentwhistle", "grobanuk", "fennimoss", "vortlebane"]


async def _scalar(engine: AsyncEngine, sql: str, **params: object) -> object:
    async with engine.connect() as conn:
        return (await conn.execute(text(sql), params)).scalar_one_or_none()


async def _execute(engine: AsyncEngine, sql: str, **params: object) -> None:
    async with engine.begin() as conn:
        await conn.execute(text(sql), params)


async def _pages_not_citing(engine: AsyncEngine, tenant: str, owner: str, memory_id: str) -> list[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT p.id::text AS id FROM wiki_pages p WHERE p.tenant_id = :t AND p.owner_id = :o
              AND NOT EXISTS (SELECT 1 FROM wiki_page_sections s JOIN wiki_section_sources src ON src.section_id = s.id
                              WHERE s.page_id = p.id AND src.source_ref = :m)
            ORDER BY p.type, p.slug
        """), {"t": tenant, "o": owner, "m": memory_id})
        return [row.id for row in rows]


async def _link(engine: AsyncEngine, from_page: str, to_page: str, context: str | None,
                refs: list[str] | None) -> str:
    link_id = str(uuid.uuid4())
    await _execute(engine, """
        INSERT INTO wiki_page_links (id, from_page_id, to_page_id, kind, context, source_refs)
        VALUES (CAST(:id AS uuid), CAST(:f AS uuid), CAST(:t AS uuid), 'reference', :c, CAST(:r AS text[]))
        ON CONFLICT (from_page_id, to_page_id, kind) DO UPDATE SET context = excluded.context,
            source_refs = excluded.source_refs, id = excluded.id
    """, id=link_id, f=from_page, t=to_page, c=context, r=refs)
    return link_id


async def _mention(engine: AsyncEngine, tenant: str, owner: str, alias: str, count: int, samples: list[str],
                   sightings: list[str]) -> str:
    mention_id = str(uuid.uuid4())
    contexts = [{"quote": f"{alias} was there", "source_ref": ref, "seen_at": "2026-05-01T00:00:00+00:00"}
                for ref in samples]
    await _execute(engine, """
        INSERT INTO wiki_unresolved_mentions (id, tenant_id, owner_id, alias, alias_normalized, mention_count,
            sample_contexts, status)
        VALUES (CAST(:id AS uuid), :t, :o, :alias, lower(:alias), :n, CAST(:samples AS jsonb), 'open')
    """, id=mention_id, t=tenant, o=owner, alias=alias, n=count, samples=json.dumps(contexts))
    for ref in sightings:
        await _execute(engine, "INSERT INTO wiki_mention_sightings (mention_id, memory_id) VALUES (CAST(:m AS uuid), :r)",
                       m=mention_id, r=ref)
    return mention_id


@pytest.mark.parametrize("seed", [3, 14])
async def test_what_the_memory_left_outside_its_radius_goes_and_the_receipt_says_what_the_dry_run_said(
        client, engine, seed):
    rng = random.Random(seed)
    word = rng.choice(WORDS)
    tenant, owner = new_scope()
    settings = settings_for()
    legacy_alias = "Brindle Haskett"
    memories = sample_memories(24, seed=seed)
    forgotten = MemoryIn.model_validate({
        "id": str(uuid.UUID(int=rng.getrandbits(128))),
        "content": f"Lena brought {word} cake to the picnic; {legacy_alias} asked for the recipe.",
        "metadata": {"entities": [{"name": "Lena", "type": "entity", "kind": "person"}]},
        "occurred_at": "2026-06-03T10:00:00Z"})
    await store_memories(engine, tenant, owner, [*memories, forgotten])
    memory_id = str(forgotten.resolved_id(tenant, owner))
    others = [str(m.resolved_id(tenant, owner)) for m in memories]
    first, second, third = others[:3]
    scope = ReadScope.of(tenant, owner)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner)
        outside = await _pages_not_citing(engine, tenant, owner, memory_id)
        assert len(outside) >= 6, "the sample was meant to have pages the memory is not on"
        summary_page, a, b, c, d, e = rng.sample(outside, 6)
        # What a plan that read the memory could have written on pages that never cite it:
        await _execute(engine, "UPDATE wiki_pages SET summary = :s WHERE id = CAST(:id AS uuid)",
                       s=f"Known for the {word} cake.", id=summary_page)
        shared_link = await _link(engine, a, b, f"both at the {word} picnic", [memory_id, first])
        lone_link = await _link(engine, b, c, "met at the picnic", [memory_id])
        co_mention = await _link(engine, c, d, f"co_mention:{memory_id}", [memory_id])
        legacy_link = await _link(engine, d, e, f"talked about {word}", None)
        control = await _link(engine, e, a, "neighbours", [second])
        alias_id = str(uuid.uuid4())
        await _execute(engine, "INSERT INTO wiki_page_aliases (id, page_id, alias, source) "
                               "VALUES (CAST(:id AS uuid), CAST(:p AS uuid), :a, 'compiler')",
                       id=alias_id, p=e, a=f"{word} baker")
        await _execute(engine, """
            INSERT INTO wiki_rejected_claims (id, tenant_id, owner_id, page_ref, section_slug, text, cited, stage, reason)
            VALUES (gen_random_uuid(), :t, :o, 'entity/x', 'notes', :line, CAST(:cited AS text[]), 'grounding', 'r')
        """, t=tenant, o=owner, line=f"- the {word} cake", cited=[third])
        # A mention seen seven times, the forgotten memory's sighting no longer among its five samples.
        rng.shuffle(others)
        counted = await _mention(engine, tenant, owner, "Quorvel Dane", 7, samples=others[:5],
                                 sightings=[memory_id, *others[:6]])
        # A mention counted before sightings were kept by memory: the forgotten memory names it.
        legacy = await _mention(engine, tenant, owner, legacy_alias, 4, samples=others[6:8], sightings=others[6:8])
        before = await sections_by_id(engine, tenant, owner)

        preview = await preview_forget(engine, scope, [memory_id])
        assert {r.id for r in preview.summaries_recomputed} >= {summary_page}
        assert {r.id for r in preview.aliases_removed} >= {alias_id}
        assert {r.id for r in preview.mentions_recounted} >= {counted, legacy}
        assert preview.links_removed >= 2 and preview.link_contexts_recomputed >= 2
        queued = await forget_memories(engine, scope, [memory_id], client, settings)
        receipt = await wait_for_receipt(engine, scope, queued.request_id, timeout_seconds=120)
        await client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()

    # The dry run and the receipt say the same things, the receipt without names.
    assert receipt.report.comparable() == preview.comparable()
    assert all(ref.name is None for ref in receipt.report.summaries_recomputed + receipt.report.pages_removed)
    assert receipt.memories_forgotten == 1
    assert await rows_holding(engine, word) == {}
    links = {row[0]: row[1:] for row in await _rows(engine, "SELECT id::text, context, source_refs FROM wiki_page_links "
                                                            "WHERE id = ANY(CAST(:ids AS uuid[]))",
                                                    ids=[shared_link, lone_link, co_mention, legacy_link, control])}
    # Written from the forgotten memory's batch: the context goes, the link rests on what is left.
    assert links[shared_link] == (None, [first])
    assert lone_link not in links  # it rested on the forgotten memory alone
    assert links[legacy_link] == (None, None)  # no provenance: its context held the memory's word
    # A co-mention link moves to another memory both pages cite, or goes.
    assert co_mention not in links or (links[co_mention][0] != f"co_mention:{memory_id}"
                                       and memory_id not in links[co_mention][1])
    assert links[control] == ("neighbours", [second])
    assert await _scalar(engine, "SELECT mention_count FROM wiki_unresolved_mentions WHERE id = CAST(:id AS uuid)",
                         id=counted) == 6
    assert await _scalar(engine, "SELECT count(*) FROM wiki_mention_sightings WHERE memory_id = :m", m=memory_id) == 0
    assert await _scalar(engine, "SELECT mention_count FROM wiki_unresolved_mentions WHERE id = CAST(:id AS uuid)",
                         id=legacy) == 3
    summary = await _scalar(engine, "SELECT summary FROM wiki_pages WHERE id = CAST(:id AS uuid)", id=summary_page)
    assert summary is None or word not in str(summary).lower()
    after = await sections_by_id(engine, tenant, owner)
    untouched = {sid: row for sid, row in before.items() if memory_id not in row[3]}
    assert {sid: after.get(sid) for sid in untouched} == untouched


async def _rows(engine: AsyncEngine, sql: str, **params: object) -> list[tuple]:
    async with engine.connect() as conn:
        return [tuple(row) for row in await conn.execute(text(sql), params)]
