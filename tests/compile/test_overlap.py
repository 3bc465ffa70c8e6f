"""Overlap (workflows/compile_overlap.py): batch n + 1 planned while batch n's sections are written.

The overlapped compile must write the wiki the sequential order writes, row for row (ids, bodies,
sources, links, mentions, cursor: tests/golden/dump.py). On the 700-memory sample that is the
golden fixture (tests/golden/test_sample_golden.py compiles it with overlap on, the default); here
one tenant of the adversarial corpus is compiled in small batches once sequentially and once
overlapped, and the two wikis are compared. The histories say which plans were planned ahead, and
the test checks that the corpus made those plans depend on the batch before them: a page that batch
created updated, a proposal merged into a page that batch created, a mention that batch sighted
promoted.
"""

from __future__ import annotations

import gzip
import json
import logging
from datetime import UTC, datetime

from sqlalchemy import text
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from domain.aliases import normalize_alias
from domain.memory import MemoryIn
from evals.corpus import generate
from messages.compile import PlanBatchInput, compile_workflow_id
from store.memories import store_memories
from tests.compile.helpers import compile_scope, running_worker, test_settings
from tests.golden.dump import dump_scope, encode, first_difference
from tests.golden.make_fixture import FIXTURE
from tests.golden.make_fixture import OWNER as SAMPLE_OWNER
from tests.golden.make_fixture import TENANT as SAMPLE_TENANT

SEED = 11
SIZE = 90
# Small batches: many batch boundaries, each a chance for batch n + 1 to depend on batch n; and more
# than one run (the new-page cap), so a run's last batch is not planned ahead.
PAGE_SIZE = 8


async def _compile(client: Client, engine, tenant: str, owner: str, *, overlap: bool) -> dict:
    settings = test_settings(WIKI_RECORD_PAGE_SIZE=PAGE_SIZE, WIKI_OVERLAP_PLANNING=overlap)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner)
    return json.loads(encode(await dump_scope(engine, tenant, owner)))


async def _forget_wiki(engine, tenant: str, owner: str) -> None:
    """Delete the scope's compiled wiki and cursor (its memories stay), to compile it again from nothing."""
    scope = {"t": tenant, "o": owner}
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM wiki_pages WHERE tenant_id = :t AND owner_id = :o"), scope)
        await conn.execute(text("DELETE FROM wiki_unresolved_mentions WHERE tenant_id = :t AND owner_id = :o"), scope)
        await conn.execute(text("DELETE FROM wiki_compile_cursors WHERE tenant_id = :t AND owner_id = :o"), scope)


async def _plan_requests(client: Client, tenant: str, owner: str, since: datetime) -> list[PlanBatchInput]:
    """Every leaf plan request of the scope's compiles, in the order they were made (the histories of
    every run: plans and apply results are deleted from the database when a run ends)."""
    workflow_id = compile_workflow_id(tenant, owner)
    runs = [run async for run in client.list_workflows(f"WorkflowId = '{workflow_id}'")]
    requests = []
    for run in sorted((r for r in runs if r.start_time >= since), key=lambda r: r.start_time):
        history = await client.get_workflow_handle(workflow_id, run_id=run.run_id).fetch_history()
        for event in history.events:
            if not event.HasField("activity_task_scheduled_event_attributes"):
                continue
            attributes = event.activity_task_scheduled_event_attributes
            if attributes.activity_type.name == "llm.plan_batch":
                requests += pydantic_data_converter.payload_converter.from_payloads(
                    list(attributes.input.payloads), [PlanBatchInput])
    return requests


async def _ledgers(engine, tenant: str, owner: str) -> list[dict]:
    async with engine.connect() as conn:
        return list((await conn.execute(text("""
            SELECT metrics FROM wiki_compile_jobs WHERE tenant_id = :t AND owner_id = :o ORDER BY started_at
        """), {"t": tenant, "o": owner})).scalars().all())


async def test_overlapped_compile_writes_the_sequential_wiki(client, engine, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="activities.planning")
    corpus = generate(SEED, SIZE).tenants[0]
    tenant, owner = corpus.tenant, f"{corpus.owner}-overlap"
    await store_memories(engine, tenant, owner, [MemoryIn.model_validate(m) for m in corpus.memories])

    sequential = await _compile(client, engine, tenant, owner, overlap=False)
    sequential_runs = await _ledgers(engine, tenant, owner)
    assert all(m["plans_ahead"] == 0 for m in sequential_runs)
    await _forget_wiki(engine, tenant, owner)
    since = datetime.now(UTC)
    overlapped = await _compile(client, engine, tenant, owner, overlap=True)
    overlapped_runs = (await _ledgers(engine, tenant, owner))[len(sequential_runs):]

    assert sum(len(rows) for rows in sequential.values()) > 300
    # Every plan ahead was shown the preview of the plan before it (none fell back to the wiki as it stood).
    assert not [r.message for r in caplog.records if "as it stands" in r.getMessage()]
    difference = first_difference(sequential, overlapped)
    assert difference is None, f"the overlapped compile wrote another wiki: {difference}"
    # The same runs (caps are crossed at the same batches), each with its own aggregation pass.
    assert len(overlapped_runs) == len(sequential_runs) >= 2
    assert [m["batches"] for m in overlapped_runs] == [m["batches"] for m in sequential_runs]
    requests = await _plan_requests(client, tenant, owner, since)
    ahead = [r for r in requests if r.after_plan_id is not None]
    assert sum(m["plans_ahead"] for m in overlapped_runs) == len(ahead) >= 8
    assert sum(m["planner_calls"] for m in overlapped_runs) == sum(m["planner_calls"] for m in sequential_runs) \
        + sum(m["plans_ahead_discarded"] for m in overlapped_runs)

    # What the plans ahead took from the batch before them, not applied yet when they were planned:
    # pages it created (their first citations are its memories) updated, mentions it sighted promoted.
    batch_of = {str(m): i for i, r in enumerate(requests) for m in r.memory_ids}
    by_id = {str(r.plan_id): i for i, r in enumerate(requests)}
    cited = {page["id"]: set() for page in overlapped["pages"]}
    section_page = {section["id"]: section["page_id"] for section in overlapped["sections"]}
    for source in overlapped["sources"]:
        if source["source_kind"] == "memory_unit":
            cited[section_page[source["section_id"]]].add(batch_of[source["source_ref"]])
    mentions = {m["promoted_page_id"]: m for m in overlapped["mentions"] if m["status"] == "promoted"}
    aliases: dict[str, set[str]] = {}
    for alias in overlapped["aliases"]:
        aliases.setdefault(alias["page_id"], set()).add(alias["alias"])
    # Each variant spelling (not the thing's canonical name) by the first batch that wrote it.
    variant_first_seen: dict[str, int] = {}
    for memory in corpus.truth:
        for mention in memory.mentions:
            if mention.variant != "canonical" and str(memory.id) in batch_of:
                key = normalize_alias(mention.written)
                variant_first_seen[key] = min(variant_first_seen.get(key, batch_of[str(memory.id)]),
                                              batch_of[str(memory.id)])
    updated = merged = promoted = 0
    for request in ahead:
        before, after = by_id[str(request.after_plan_id)], by_id[str(request.plan_id)]
        for page_id, batches in cited.items():
            if after not in batches or min(batches) != before:
                continue
            if page_id in mentions:  # promoted by the plan ahead, from sightings the batch before held
                sighted = {batch_of.get(str(c.get("source_ref"))) for c in mentions[page_id]["sample_contexts"]}
                promoted += before in sighted
            else:  # created by the batch before, updated by the plan ahead
                updated += 1
                merged += any(variant_first_seen.get(a) == after for a in aliases.get(page_id, ()))
    # Seed 11 in 8-memory batches: 11 pages, 1 variant spelling, 6 promotions.
    assert updated >= 3 and merged >= 1 and promoted >= 1, (updated, merged, promoted)


async def test_the_sample_compiled_with_overlap_is_the_golden_wiki(compiled_sample, compiled_sample_engine) -> None:
    """The golden fixture was recorded with batches in strict sequence; overlap is on by default, and
    the session's compile of the sample (tests/compiled_sample.py) ran with the default."""
    engine = compiled_sample_engine
    assert test_settings().overlap_planning
    actual = json.loads(encode(await dump_scope(engine, SAMPLE_TENANT, SAMPLE_OWNER)))
    difference = first_difference(json.loads(gzip.decompress(FIXTURE.read_bytes())), actual)
    assert difference is None, f"the overlapped compile differs from {FIXTURE.name}: {difference}"
    runs = await _ledgers(engine, SAMPLE_TENANT, SAMPLE_OWNER)
    # 700 memories in batches of the default size, in runs ended by the new-page cap: every batch but
    # each run's first is planned ahead (a run's last batch plans none: the run ends after it).
    compiling = [m for m in runs if m["batches"]]
    assert sum(m["batches"] for m in compiling) == -(-700 // test_settings().page_size())
    assert sum(m["plans_ahead"] for m in runs) == sum(m["batches"] for m in compiling) - len(compiling)
    assert sum(m["plans_ahead_discarded"] for m in runs) == 0
    assert not [message for message in compiled_sample.warnings if "as it stands" in message]
