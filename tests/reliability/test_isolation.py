"""Tenant isolation as a tested invariant, and the fast subset of the fault suite (`make chaos`).

- Two tenants retain the same memories (the same titles and aliases) and compile one after the
  other on one worker: no page, link, merge, search result or reverse lookup crosses them, and each
  wiki is exactly what the other is, up to its own ids.
- A planner that obeys instructions injected in memories (write into another tenant, "delete" its
  pages, leak it) changes nothing outside its own scope.
- A few model calls throttled with 429 + Retry-After: each retry waits the Retry-After, and the
  wiki is the one a compile without throttling gives.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from app.reads import ReadScope
from app.search import search
from app.worker import build_llm_worker, build_worker
from chaos.faults import Journal, ThrottleStorm, model_activities
from chaos.measure import cross_scope_rows, history_stats, ledger_rows, ledger_sum
from chaos.scenarios.prompt_injection import injection_memories
from chaos.scenarios.throttling import attempts_match_history, check_retry_after
from chaos.suite import CANARY, canary_memories
from domain.memory import MemoryIn
from messages.compile import compile_workflow_id
from runtime.settings import Settings
from store.memories import store_memories
from store.wiki_reads import backlinks, find_page, sections_citing
from tests.compile.helpers import compile_scope, running_worker, sample_memories, test_settings, wiki_snapshot

OWNER = "alice"
CO_MENTION = re.compile(r"^co_mention:[0-9a-f-]{36}$")


def new_tenant(label: str) -> str:
    """A tenant of its own: workflow ids (the scope lock) are shared by the whole Temporal session."""
    return f"{label}-{uuid.uuid4().hex[:8]}"


@asynccontextmanager
async def faulty_model_worker(client: Client, engine: AsyncEngine, settings: Settings, fault: str,
                              journal: Journal, **options: Any):
    """The product's compile worker, and a model-queue worker whose model activities misbehave."""
    async with build_worker(client, engine, settings), build_llm_worker(
            client, engine, settings, activities=model_activities(engine, settings, fault, journal, **options)):
        yield


async def memory_contents(engine: AsyncEngine, tenant: str) -> dict[str, str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT id, content FROM memory_units WHERE tenant_id = :t AND owner_id = :o"),
                                  {"t": tenant, "o": OWNER})
        return {str(row.id): row.content for row in rows}


async def structure(engine: AsyncEngine, tenant: str) -> dict[str, list[tuple]]:
    """The scope's wiki with every id replaced by what it stands for (a page by its type and slug, a
    memory by its text): two scopes compiled from the same memories must give equal structures."""
    snapshot = await wiki_snapshot(engine, tenant, OWNER)
    names: dict[str, Any] = {memory_id: ("memory", content)
                             for memory_id, content in (await memory_contents(engine, tenant)).items()}
    for page_id, _, slug, *_ in snapshot["pages"]:
        names[str(page_id)] = ("page", slug)
    for section_id, page_id, slug, *_ in snapshot["sections"]:
        names[str(section_id)] = ("section", names[str(page_id)], slug)
    for mention_id, alias, *_ in snapshot["mentions"]:
        names[str(mention_id)] = ("mention", alias)

    def named(value: Any) -> Any:
        return names.get(str(value), value) if value is not None else None

    # A co-mention link names the first memory (in id order) citing both pages; ids are per tenant,
    # so which of those memories comes first differs, and the context keeps only its kind.
    links = [(*row[:3], CO_MENTION.sub("co_mention", row[3] or "")) for row in snapshot["links"]]
    return {table: sorted((tuple(named(value) for value in row) for row in rows), key=repr)
            for table, rows in {**snapshot, "links": links}.items() if table != "cursor"} | {
        "cursor": [(named(record_id),) for _, record_id in snapshot["cursor"]]}


async def test_two_tenants_with_the_same_memories_share_no_row_and_no_read(client, engine):
    first, second = new_tenant("iso-a"), new_tenant("iso-b")
    memories = sample_memories(120)
    for tenant in (first, second):
        assert (await store_memories(engine, tenant, OWNER, memories)).changed == len(memories)
    settings = test_settings()
    async with running_worker(client, engine, settings):
        # The second compiles once the first is complete: every page it proposes then has a page of
        # the same title and aliases in the first tenant, which a merge must never pick.
        for tenant in (first, second):
            await compile_scope(client, settings, tenant, OWNER)

    wikis = {tenant: await wiki_snapshot(engine, tenant, OWNER) for tenant in (first, second)}
    titles = {tenant: sorted((p[1], p[2], p[3]) for p in wiki["pages"]) for tenant, wiki in wikis.items()}
    aliases = {tenant: sorted(a[1] for a in wiki["aliases"]) for tenant, wiki in wikis.items()}
    assert titles[first] and titles[first] == titles[second], "the tenants should have the same titles"
    assert aliases[first] and aliases[first] == aliases[second], "the tenants should have the same aliases"
    page_ids = {tenant: {p[0] for p in wiki["pages"]} for tenant, wiki in wikis.items()}
    assert not page_ids[first] & page_ids[second]
    breaches = await cross_scope_rows(engine)
    assert not any(breaches.values()), breaches
    # Merges stay inside a scope: each tenant compiled exactly as if it were alone.
    assert await structure(engine, first) == await structure(engine, second)
    ledgers = {tenant: await ledger_rows(engine, tenant, OWNER) for tenant in (first, second)}
    merges = {tenant: ledger_sum(rows, "alias_dedup_merged", "fuzzy_dedupe_merges") for tenant, rows in ledgers.items()}
    assert merges[first] == merges[second]

    async with engine.connect() as conn:
        for _, _, title in titles[first][:15]:
            for tenant in (first, second):
                hits = (await search(conn, ReadScope.of(tenant, OWNER), title, 20)).hits
                found = [await find_page(conn, tenant, OWNER, hit.type, hit.slug) for hit in hits]
                assert hits and all(page is not None and page.id in page_ids[tenant] for page in found), (tenant, title)
        for page_type, slug, _ in titles[first][:15]:
            pages = {tenant: await find_page(conn, tenant, OWNER, page_type, slug) for tenant in (first, second)}
            assert {tenant: page.id in page_ids[tenant] for tenant, page in pages.items()} == {first: True, second: True}
            assert await backlinks(conn, second, OWNER, pages[first].id) == []
            assert await backlinks(conn, first, OWNER, pages[second].id) == []
        first_memories = list(await memory_contents(engine, first))
        citing = [memory_id for memory_id in first_memories if await sections_citing(conn, first, OWNER,
                                                                                       uuid.UUID(memory_id))]
        assert citing, "the reverse lookup should find sections citing the first tenant's memories"
        for memory_id in citing:
            assert await sections_citing(conn, second, OWNER, uuid.UUID(memory_id)) == []


def visits(name: str, aliases: list[str]) -> list[MemoryIn]:
    entity = {"name": name, "type": "entity", "kind": "restaurant", "aliases": aliases}
    place = {"name": name, "city": "Austin", "types": ["restaurant"]}
    return [MemoryIn(content=f"Eric had brisket at {name} ({n}).", metadata={"entities": [entity], "place": place},
                     occurred_at=f"2026-03-0{n}T12:00:00Z") for n in (1, 2)]


async def test_a_name_only_another_tenant_has_a_page_for_never_merges_into_it(client, engine):
    first, second = new_tenant("merge-a"), new_tenant("merge-b")
    await store_memories(engine, first, OWNER, visits("Franklin Barbecue", ["franklin bbq"]))
    # A variant spelling whose aliases name the first tenant's page exactly (and nearly).
    await store_memories(engine, second, OWNER, visits("Franklin Barbeque", ["Franklin Barbecue", "franklin bbq"]))
    settings = test_settings()
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, first, OWNER)
        first_wiki = await wiki_snapshot(engine, first, OWNER)
        # A merge across tenants would make the second tenant write to the first's page; bounded, so
        # such a regression fails here instead of retrying forever.
        await asyncio.wait_for(compile_scope(client, settings, second, OWNER), timeout=60)

    assert await wiki_snapshot(engine, first, OWNER) == first_wiki
    second_wiki = await wiki_snapshot(engine, second, OWNER)
    entities = [(p[2], p[3]) for p in second_wiki["pages"] if p[1] == "entity"]
    assert entities == [("franklin-barbeque", "Franklin Barbeque")]
    assert ledger_sum(await ledger_rows(engine, second, OWNER), "alias_dedup_merged", "fuzzy_dedupe_merges") == 0
    breaches = await cross_scope_rows(engine)
    assert not any(breaches.values()), breaches


async def test_a_planner_that_obeys_injected_orders_changes_nothing_outside_its_scope(client, engine, tmp_path: Path):
    victim, attacker = new_tenant("victim"), new_tenant("attacker")
    await store_memories(engine, victim, OWNER, sample_memories(60) + canary_memories())
    plain = test_settings()
    async with running_worker(client, engine, plain):
        await compile_scope(client, plain, victim, OWNER)
    victim_before = await wiki_snapshot(engine, victim, OWNER)
    assert CANARY in repr(victim_before), "the victim should have a page holding the canary"
    async with engine.connect() as conn:
        scope = {"t": victim, "o": OWNER}
        targets = {
            "pages": [str(i) for i in (await conn.execute(text(
                "SELECT id FROM wiki_pages WHERE tenant_id = :t AND owner_id = :o ORDER BY slug LIMIT 6"), scope)).scalars()],
            "slugs": [f"{r.type}/{r.slug}" for r in await conn.execute(text(
                "SELECT type, slug FROM wiki_pages WHERE tenant_id = :t AND owner_id = :o ORDER BY slug LIMIT 6"), scope)],
            "mentions": [str(i) for i in (await conn.execute(text(
                "SELECT id FROM wiki_unresolved_mentions WHERE tenant_id = :t AND owner_id = :o LIMIT 4"), scope)).scalars()],
            "memories": [str(i) for i in (await conn.execute(text(
                "SELECT id FROM memory_units WHERE tenant_id = :t AND owner_id = :o LIMIT 4"), scope)).scalars()],
        }
    assert targets["pages"] and targets["mentions"]
    await store_memories(engine, attacker, OWNER, sample_memories(60) + injection_memories(targets))
    journal = Journal(tmp_path / "obey.jsonl")
    settings = test_settings(WIKI_LLM_TASK_QUEUE=f"llm-{uuid.uuid4()}")

    async with faulty_model_worker(client, engine, settings, "obey", journal):
        await compile_scope(client, settings, attacker, OWNER)

    obeyed = journal.events("obeyed")
    assert obeyed and journal.events("obeyed_aggregation"), "the fake planner should have obeyed"
    assert await wiki_snapshot(engine, victim, OWNER) == victim_before
    breaches = await cross_scope_rows(engine)
    assert not any(breaches.values()), breaches
    attacker_wiki = repr(await wiki_snapshot(engine, attacker, OWNER))
    assert CANARY not in attacker_wiki and "Victim Secret Garden" not in attacker_wiki
    rows = await ledger_rows(engine, attacker, OWNER)
    assert rows[-1]["status"] == "succeeded"
    ordered = sum(3 * event["foreign_ids"] for event in obeyed)  # two updates and a promotion per id
    assert ledger_sum(rows, "dropped_invalid_ids") >= ordered > 0


async def test_a_few_throttled_model_calls_wait_their_retry_after_and_change_nothing(
        client, engine, second_engine, tmp_path: Path):
    tenant = new_tenant("throttled")
    memories = sample_memories(60)
    for database in (engine, second_engine):
        await store_memories(database, tenant, OWNER, memories)
    plain = test_settings()
    async with running_worker(client, second_engine, plain):
        await compile_scope(client, plain, tenant, OWNER)
    settings = test_settings(WIKI_LLM_TASK_QUEUE=f"llm-{uuid.uuid4()}")
    journal = Journal(tmp_path / "throttle.jsonl")
    # Every model call's first attempt is refused once (429, Retry-After 1 s): deterministic, unlike a
    # random share, whose draw depends on the run id and could refuse too few to prove anything.
    storm = ThrottleStorm(seed=3, rate=1.0, overloaded_share=0.0, retry_after_range=(1, 1), only_first_attempts=True)

    async with faulty_model_worker(client, engine, settings, "throttle", journal, storm=storm):
        await compile_scope(client, settings, tenant, OWNER)

    events = journal.events()
    check = check_retry_after(events)
    assert check.refusals >= 3, "the storm should have refused a few calls"
    assert check.with_retry_after == check.refusals and check.honoured == check.refusals
    assert check.never_retried == 0
    run_ids = [row["run_id"] for row in await ledger_rows(engine, tenant, OWNER)]
    history = await history_stats(client, compile_workflow_id(tenant, OWNER), run_ids)
    assert attempts_match_history(events, history) == 0
    assert sum(1 for e in events if e["kind"] == "model_call") == history.model_calls_used

    def without_cursor_time(snapshot: dict[str, list[tuple]]) -> dict[str, list[tuple]]:
        # Retain stamps `updated_at` with each database's clock: the cursor compares by memory id.
        return {**snapshot, "cursor": [row[1:] for row in snapshot["cursor"]]}

    assert without_cursor_time(await wiki_snapshot(engine, tenant, OWNER)) == without_cursor_time(
        await wiki_snapshot(second_engine, tenant, OWNER))
