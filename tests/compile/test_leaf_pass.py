"""The whole leaf pass on the sample, against the real Temporal dev server and Postgres."""

from __future__ import annotations

import re

from sqlalchemy import text

from domain.memory import MemoryIn
from domain.render import render_body_markdown
from store.memories import store_memories
from tests.compile.helpers import (
    compile_scope,
    ledger,
    ledger_total,
    retain_sample,
    running_worker,
    test_settings,
    wiki_snapshot,
)

SEED_METRIC_KEYS = {
    "records_read", "pages_upserted", "sections_rewritten", "sections_skipped", "unresolved_upserted",
    "unresolved_promoted", "planner_calls", "section_writer_calls", "input_tokens", "output_tokens",
    "cache_read_tokens", "cost_usd", "latency_ms", "links_written_deterministic", "links_written_co_mention",
    "links_upserted", "duplicate_candidates_count", "alias_dedup_merged", "fuzzy_dedupe_merges", "llm_retries",
    "continued_as_new", "dropped_invalid_ids",
}


async def _rows(engine, query: str, **params):
    async with engine.connect() as conn:
        return (await conn.execute(text(query), params)).all()




async def test_the_700_memory_sample_compiles_into_a_consistent_wiki(compiled_sample, compiled_sample_engine):
    """On the session's compile of the sample (tests/compiled_sample.py): the only scope of its database."""
    engine, tenant, owner = compiled_sample_engine, compiled_sample.tenant, compiled_sample.owner
    retained = len(await _rows(engine, "SELECT id FROM memory_units WHERE tenant_id = :t AND owner_id = :o",
                               t=tenant, o=owner))
    rows = await ledger(engine, tenant, owner)

    # Every memory read exactly once, across the continue-as-new chain the per-run caps force (a cap
    # hit on a last batch that exactly filled its page leaves one more run that reads nothing).
    assert ledger_total(rows, "records_read") == retained == 700
    assert [row["status"] for row in rows[:-1]] == ["continued"] * (len(rows) - 1)
    assert rows[-1]["status"] == "succeeded" and len(rows) >= 3
    # Condensed sections are rewritten by every batch that brings a memory about them, so the cap on
    # rewrites is reached as well as the cap on new pages.
    assert all(row["metrics"]["cap_hit"] in ("max_new_pages", "max_sections_rewritten") for row in rows[:-1])
    assert any(row["metrics"]["cap_hit"] == "max_new_pages" for row in rows[:-1])
    assert all(row["metrics"].keys() >= SEED_METRIC_KEYS for row in rows)

    types = dict(await _rows(engine, "SELECT type, count(*) FROM wiki_pages GROUP BY type"))
    assert types["entity"] >= 50 and types["topic"] >= 5 and types["decision"] >= 3
    assert ledger_total(rows, "pages_created") == sum(types.values())
    mentions = dict(await _rows(engine, "SELECT status, count(*) FROM wiki_unresolved_mentions GROUP BY status"))
    assert mentions["open"] > 0 and mentions["promoted"] > 0
    # A promotion always lands on a page, and only after three sightings (two held, then the third).
    orphaned = await _rows(engine, "SELECT alias FROM wiki_unresolved_mentions WHERE status = 'promoted' "
                                   "AND promoted_page_id IS NULL")
    assert not orphaned
    # The sample's misspelt names ("Veracruz All Naturall") end up as aliases of their page, not pages.
    typos = dict(await _rows(engine, """
        SELECT a.alias, p.title FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
        WHERE a.alias IN ('veracruz all naturall', 'barton spring pool', 'cosmic coffee beer gardens')"""))
    assert typos == {"veracruz all naturall": "Veracruz All Natural", "barton spring pool": "Barton Springs Pool",
                     "cosmic coffee beer gardens": "Cosmic Coffee + Beer Garden"}
    assert ledger_total(rows, "duplicate_candidates_count") == 0

    contexts = [row.context or "" for row in await _rows(engine, "SELECT context FROM wiki_page_links")]
    assert any(c.startswith("deterministic:city:") for c in contexts)
    assert any(c.startswith("co_mention:") for c in contexts)
    assert ledger_total(rows, "links_upserted") > 50

    # body_md is always the rendering of the page's sections; no wikilinks or memory ids in prose.
    memory_ids = {str(r.id) for r in await _rows(engine, "SELECT id FROM memory_units")}
    pages = await _rows(engine, "SELECT id, body_md, summary FROM wiki_pages")
    for page in pages:
        sections = await _rows(engine, "SELECT heading, body_md, position FROM wiki_page_sections "
                                       "WHERE page_id = :p ORDER BY position", p=page.id)
        assert page.body_md == render_body_markdown(sections)
        assert "[[" not in page.body_md
        assert not any(memory_id in page.body_md for memory_id in re.findall(r"[0-9a-f-]{36}", page.body_md)
                       if memory_id in memory_ids)
        assert page.summary
    # Provenance only names memories of the scope.
    refs = {r.source_ref for r in await _rows(engine, "SELECT source_ref FROM wiki_section_sources")}
    assert refs and refs <= memory_ids
    linked = await _rows(engine, "SELECT count(*) FROM wiki_page_sections WHERE body_md LIKE '%](/wiki/entity/%'")
    assert linked[0][0] > 0, "bold mentions of known pages should be linkified"


def _memory(content: str, *entities: dict, when: str, place: dict | None = None) -> MemoryIn:
    metadata = {"entities": list(entities)}
    if place:
        metadata["place"] = place
    return MemoryIn(content=content, metadata=metadata, occurred_at=when)


PARIS = {"name": "Paris", "type": "topic", "kind": "city"}
POOL = {"name": "Barton Springs Pool", "type": "entity", "kind": "park"}


async def test_variants_land_on_the_existing_pages(client, engine):
    settings = test_settings()
    first = [
        _memory("Landed in Paris for the spring trip.", PARIS, when="2026-03-01T09:00:00Z"),
        _memory("Walked along the Seine in Paris.", PARIS, when="2026-03-01T18:00:00Z"),
        _memory("Swam at Barton Springs Pool.", POOL, when="2026-03-02T09:00:00Z"),
        _memory("Cold water at Barton Springs Pool again.", POOL, when="2026-03-03T09:00:00Z"),
    ]
    qualified = {"name": "Paris, France", "type": "topic", "kind": "city", "aliases": ["Paris"]}
    typo = {"name": "Barton Spring Pool", "type": "entity", "kind": "park"}  # trigram similarity 0.857
    later = [
        _memory("Back in Paris, France for a week.", qualified, when="2026-05-01T09:00:00Z"),
        _memory("Rain all day in Paris, France.", qualified, when="2026-05-02T09:00:00Z"),
        _memory("Met Lena at Barton Spring Pool.", typo, when="2026-05-03T09:00:00Z"),
        _memory("Read the paper at Barton Spring Pool.", typo, when="2026-05-04T09:00:00Z"),
    ]
    async with running_worker(client, engine, settings):
        await store_memories(engine, "t1", "bob", first)
        await compile_scope(client, settings, "t1", "bob")
        await store_memories(engine, "t1", "bob", later)
        await compile_scope(client, settings, "t1", "bob")
    rows = await ledger(engine, "t1", "bob")
    # The planner recognised both (an alias the metadata gives; a typo the resolution ladder reads).
    assert ledger_total(rows, "pages_created") == 2
    titles = sorted(r.title for r in await _rows(engine, "SELECT title FROM wiki_pages"))
    assert titles == ["Barton Springs Pool", "Paris"]
    aliases = {r.alias for r in await _rows(engine, "SELECT alias FROM wiki_page_aliases")}
    assert {"paris france", "barton spring pool"} <= aliases
    notes = await _rows(engine, "SELECT s.body_md FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id "
                                "WHERE p.title = 'Barton Springs Pool'")
    assert any("Read the paper" in r.body_md for r in notes), "the merged proposal's content lands on the page"


async def test_the_deterministic_linking_flag_turns_both_emitters_off(client, engine):
    settings = test_settings(WIKI_DETERMINISTIC_LINKING_ENABLED="false")
    await retain_sample(engine, "t1", "carol", 120)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, "t1", "carol")
    rows = await ledger(engine, "t1", "carol")
    assert all(row["metrics"]["deterministic_linking_flag_suppressed"] for row in rows)
    assert ledger_total(rows, "links_written_deterministic") == ledger_total(rows, "links_written_co_mention") == 0
    contexts = [r.context or "" for r in await _rows(engine, "SELECT context FROM wiki_page_links")]
    assert contexts and not any(c.startswith(("deterministic:", "co_mention:")) for c in contexts)
    assert (await wiki_snapshot(engine, "t1", "carol"))["pages"]
