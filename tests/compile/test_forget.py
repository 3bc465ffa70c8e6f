"""Forgetting a memory on a compiled wiki: its blast radius goes, everything else stays byte for byte.

The corpus is the sample (seeded) with, for each case, one memory carrying a word no other memory
has, about an entity other memories talk about too (so its sections cite others and are re-derived,
not just removed), and one memory that is a page's only evidence (so that page goes).
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from app.forget import forget_memories, preview_forget
from app.reads import NotFound, ReadScope
from app.retain import retain_and_signal
from domain.memory import MemoryIn
from domain.pricing import TokenUsage, cost_usd
from messages.compile import compile_workflow_id
from store.forget import enqueue, prepare_pass
from store.forget_apply import apply_pass
from store.memories import store_memories
from tests.compile.helpers import compile_scope, poll, running_worker, sample_memories
from tests.compile.helpers import test_settings as settings_for
from tests.compile.test_durability import assert_same_wiki, comparable_wiki, work_redone, worker_process
from tests.compile.test_model_path import model_worker

# Column types that can hold a memory's text, a name from it or its id: every such column of every
# table is scanned (read from the schema, so a table added later is covered without a change here).
SCANNED_TYPES = ("text", "character varying", "jsonb", "json", "ARRAY", "tsvector", "uuid")
# Where a forgotten memory's id may stay: the deletion receipt, the request itself (ids only) and
# the compile cursor (a position, time then id, that the next batch moves past).
ID_LEDGER = {"wiki_compile_jobs", "wiki_forget_requests", "wiki_compile_cursors"}
NONCE_WORDS = ["zorblatt", "quixotrel", "vantablorp", "plimsnook", "gravenduff", "throckle"]


def new_scope() -> tuple[str, str]:
    return f"t-{uuid.uuid4().hex[:10]}", "alice"


async def scanned_columns(engine: AsyncEngine) -> dict[str, list[str]]:
    """Every text, json, array, search-vector and uuid column of every table of the schema."""
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT c.table_name, c.column_name FROM information_schema.columns c
            JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.data_type = ANY(:types)
              AND c.table_name <> 'alembic_version'
            ORDER BY c.table_name, c.ordinal_position
        """), {"types": list(SCANNED_TYPES)})
        columns: dict[str, list[str]] = {}
        for row in rows:
            columns.setdefault(row.table_name, []).append(row.column_name)
    return columns


async def rows_holding(engine: AsyncEngine, word: str, exempt: frozenset[str] = frozenset()) -> dict[str, int]:
    """How many rows of each table hold `word` (case-insensitive) in any scanned column, in the whole database."""
    found = {}
    columns = await scanned_columns(engine)
    assert {"memory_units", "wiki_section_claims", "wiki_merge_decisions", "wiki_claim_supersessions"} <= set(columns)
    async with engine.connect() as conn:
        for table, names in columns.items():
            if table in exempt:
                continue
            joined = " || ' ' || ".join(f'coalesce("{name}"::text, \'\')' for name in names)
            count = (await conn.execute(text(f'SELECT count(*) FROM "{table}" WHERE ({joined}) ILIKE :w'),
                                        {"w": f"%{word}%"})).scalar_one()
            if count:
                found[table] = count
    return found


async def sections_by_id(engine: AsyncEngine, tenant: str, owner: str) -> dict[str, tuple]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT s.id::text AS id, s.heading, s.body_md, s.updated_at,
                   coalesce((SELECT array_agg(src.source_ref ORDER BY src.source_ref) FROM wiki_section_sources src
                             WHERE src.section_id = s.id), '{}') AS refs,
                   (SELECT array_agg(c.text || '|' || c.confidence::text ORDER BY c.position)
                    FROM wiki_section_claims c WHERE c.section_id = s.id) AS claims
            FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o
        """), {"t": tenant, "o": owner})
        return {row.id: (row.heading, row.body_md, row.updated_at, tuple(row.refs), tuple(row.claims or ()))
                for row in rows}


async def references_to(engine: AsyncEngine, memory_id: str) -> dict[str, int]:
    queries = {
        "memory": "SELECT count(*) FROM memory_units WHERE id::text = :m",
        "claim sources": "SELECT count(*) FROM wiki_claim_sources WHERE memory_id = :m",
        "section sources": "SELECT count(*) FROM wiki_section_sources WHERE source_ref = :m",
        "sightings": "SELECT count(*) FROM wiki_unresolved_mentions WHERE sample_contexts::text LIKE '%' || :m || '%'",
        "plans": "SELECT count(*) FROM wiki_compile_plans WHERE plan::text LIKE '%' || :m || '%' "
                 "OR CAST(:m AS uuid) = ANY(memory_ids)",
    }
    async with engine.connect() as conn:
        counts = {name: (await conn.execute(text(sql), {"m": memory_id})).scalar_one() for name, sql in queries.items()}
    return {name: count for name, count in counts.items() if count}


def corpus(seed: int) -> tuple[list[MemoryIn], MemoryIn, MemoryIn, str, str]:
    """The sample with two memories added: `shared` (a nonce word, about Lena, whom other memories
    name) and `alone` (the only memory naming a person with a nonce name)."""
    rng = random.Random(seed)
    shared_word, alone_word = rng.sample(NONCE_WORDS, 2)
    memories = sample_memories(30, seed=seed % 5 + 3)
    shared = MemoryIn.model_validate({
        "id": str(uuid.UUID(int=rng.getrandbits(128))),
        "content": f"Lena showed me her {shared_word} collection after dinner; she keeps it in the hallway.",
        "metadata": {"entities": [{"name": "Lena", "type": "entity", "kind": "person"}]},
        "occurred_at": f"2026-06-0{rng.randint(1, 9)}T10:00:00Z"})
    alone_name = alone_word.capitalize() + " Vell"
    decision = f"Take {alone_word.capitalize()} wheel classes"
    alone = MemoryIn.model_validate({
        "id": str(uuid.UUID(int=rng.getrandbits(128))),
        "content": f"Decided to take {alone_word} wheel classes with {alone_name} at the pottery studio.",
        "metadata": {"entities": [{"name": decision, "type": "decision", "kind": "decision"},
                                  {"name": alone_name, "type": "entity", "kind": "person"}]},
        "occurred_at": f"2026-06-1{rng.randint(0, 9)}T10:00:00Z"})
    lena = [MemoryIn.model_validate({
        "content": f"Lena and I walked along the river on day {day}; she talked about her new job.",
        "metadata": {"entities": [{"name": "Lena", "type": "entity", "kind": "person"}]},
        "occurred_at": f"2026-04-{day:02d}T09:00:00Z"}) for day in rng.sample(range(1, 28), 3)]
    return [*memories, *lena, shared, alone], shared, alone, shared_word, alone_word


async def receipts(engine: AsyncEngine, tenant: str, owner: str) -> list[dict]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT run_id, status, metrics FROM wiki_compile_jobs
            WHERE kind = 'forget' AND tenant_id = :t AND owner_id = :o ORDER BY started_at
        """), {"t": tenant, "o": owner})
        return [dict(row._mapping) for row in rows]


async def history_text(client: Client, tenant: str, owner: str) -> str:
    """Every event of every run of the scope's compile workflow, as JSON text."""
    out = []
    async for execution in client.list_workflows(f"WorkflowId = '{compile_workflow_id(tenant, owner)}'"):
        history = await client.get_workflow_handle(execution.id, run_id=execution.run_id).fetch_history()
        out.append(history.to_json())
    return "\n".join(out)


@pytest.mark.parametrize("seed", [11, 29])
async def test_forgetting_removes_the_memory_everywhere_and_leaves_other_sections_byte_identical(
        client, engine, seed):
    tenant, owner = new_scope()
    settings = settings_for()
    memories, shared, alone, shared_word, alone_word = corpus(seed)
    await store_memories(engine, tenant, owner, memories)
    shared_id, alone_id = str(shared.resolved_id(tenant, owner)), str(alone.resolved_id(tenant, owner))
    scope = ReadScope.of(tenant, owner)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner)
        assert await rows_holding(engine, shared_word), "the distinctive word never reached the wiki"
        before = await sections_by_id(engine, tenant, owner)
        radius = await preview_forget(engine, scope, [shared_id, alone_id])
        assert radius.memory_ids == sorted(radius.memory_ids, key=[shared_id, alone_id].index)
        assert radius.claims_removed and radius.sections_rederived, radius
        assert any(alone_word.capitalize() in (page.name or "") for page in radius.pages_removed), radius
        assert any(alone_word.capitalize() in (mention.name or "") for mention in radius.mentions_removed), radius
        # The preview changed nothing.
        assert await sections_by_id(engine, tenant, owner) == before

        # Another scope's token: the same ids are simply not there.
        with pytest.raises(NotFound):
            await forget_memories(engine, ReadScope.of(tenant + "-other", owner), [shared_id], client, settings)

        queued = await forget_memories(engine, scope, [shared_id, alone_id], client, settings)
        assert queued.memory_ids == [shared_id, alone_id]

        async def receipted() -> list[dict]:
            return await receipts(engine, tenant, owner)

        done = await poll(receipted, timeout=60, what="the forget's receipt")
        await client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()

    assert len(done) == 1 and done[0]["status"] == "succeeded"
    receipt = done[0]["metrics"]
    assert receipt["memories_forgotten"] == 2 and sorted(receipt["memory_ids"]) == sorted([shared_id, alone_id])
    assert len(receipt["pages_removed"]) >= 1 and receipt["claims_removed"] >= 1
    for memory_id in (shared_id, alone_id):
        assert await references_to(engine, memory_id) == {}
    for word in (shared_word, alone_word):
        assert await rows_holding(engine, word) == {}, word
    for memory_id in (shared_id, alone_id):
        assert await rows_holding(engine, memory_id, exempt=frozenset(ID_LEDGER)) == {}, memory_id
        assert word not in (await history_text(client, tenant, owner)).lower()

    after = await sections_by_id(engine, tenant, owner)
    untouched = {sid: row for sid, row in before.items()
                 if shared_id not in row[3] and alone_id not in row[3]}
    assert untouched, "every section cited a forgotten memory"
    # Untouched sections are byte-identical (their rows were not even written).
    assert {sid: after.get(sid) for sid in untouched} == untouched
    # Sections that cited a forgotten memory and others are still there, re-derived.
    rederived = [sid for sid, row in before.items() if shared_id in row[3] and len(row[3]) > 1]
    assert any(sid in after for sid in rederived)


async def test_forgetting_many_memories_is_one_pass(client, engine):
    tenant, owner = new_scope()
    settings = settings_for()
    memories, shared, alone, *_ = corpus(5)
    await store_memories(engine, tenant, owner, memories)
    scope = ReadScope.of(tenant, owner)
    ids = [str(m.resolved_id(tenant, owner)) for m in memories[-6:]]
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner)
        # Queued one by one before the compile serves any: one pass serves them all.
        await asyncio.gather(*[forget_memories(engine, scope, [memory_id], client, settings) for memory_id in ids])
        await client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()
    done = await receipts(engine, tenant, owner)
    assert sum(row["metrics"]["memories_forgotten"] for row in done) == len(ids)
    assert len(done) < len(ids)
    for memory_id in ids:
        assert await references_to(engine, memory_id) == {}


async def request_status(engine: AsyncEngine, tenant: str, owner: str) -> str | None:
    async with engine.connect() as conn:
        return (await conn.execute(text("SELECT min(status) FROM wiki_forget_requests WHERE tenant_id = :t "
                                        "AND owner_id = :o"), {"t": tenant, "o": owner})).scalar_one()


async def compiled_then_forgotten(client: Client, engine: AsyncEngine, settings, tenant: str, owner: str,
                                  memories: list[MemoryIn], forget: list[str]) -> None:
    """The reference: the same memories compiled and the same forget served without interruption."""
    await store_memories(engine, tenant, owner, memories)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner)
        await forget_memories(engine, ReadScope.of(tenant, owner), forget, client, settings)
        await client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()


async def test_a_worker_killed_during_a_forget_is_replaced_and_the_forget_completes_once(
        client, temporal_env, database_url, engine, second_engine, tmp_path):
    tenant, owner = new_scope()
    settings = settings_for(WIKI_HEARTBEAT_TIMEOUT_SECONDS=2)
    memories, shared, alone, shared_word, _ = corpus(17)
    forget = [str(shared.resolved_id(tenant, owner)), str(alone.resolved_id(tenant, owner))]
    await store_memories(engine, tenant, owner, memories)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner)
    before = await sections_by_id(engine, tenant, owner)
    # Queued with no worker running: the forget starts the scope's compile, which waits for one.
    await forget_memories(engine, ReadScope.of(tenant, owner), forget, client, settings)
    worker_env = {"DATABASE_URL": database_url, "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
                  "WIKI_TASK_QUEUE": settings.task_queue, "WIKI_LLM": "scripted",
                  # Each re-derivation takes a while, so the kill lands while they are in flight.
                  "WIKI_SCRIPTED_LATENCY_MS": "3000"}
    with worker_process(worker_env, tmp_path / "first-worker.log") as first:
        async def prepared() -> bool:
            assert first.poll() is None, (tmp_path / "first-worker.log").read_text()
            return await request_status(engine, tenant, owner) == "prepared"

        await poll(prepared, timeout=60, every=0.02, what="the forget pass to be prepared")
        first.kill()
        first.wait(timeout=30)
    # Nothing half-done: the memories and every section are as they were, and there is no receipt.
    assert await receipts(engine, tenant, owner) == []
    for memory_id in forget:
        assert "memory" in await references_to(engine, memory_id)
    assert await sections_by_id(engine, tenant, owner) == before

    with worker_process({**worker_env, "WIKI_SCRIPTED_LATENCY_MS": "0"}, tmp_path / "second-worker.log"):
        await asyncio.wait_for(client.get_workflow_handle(compile_workflow_id(tenant, owner)).result(), timeout=120)
    done = await receipts(engine, tenant, owner)
    assert len(done) == 1 and done[0]["metrics"]["memories_forgotten"] == 2
    assert await rows_holding(engine, shared_word) == {}
    assert await work_redone(client, engine, compile_workflow_id(tenant, owner), tenant, owner), \
        "the kill interrupted nothing"

    await compiled_then_forgotten(client, second_engine, settings, tenant, owner, memories, forget)
    assert_same_wiki(await comparable_wiki(engine, tenant, owner), await comparable_wiki(second_engine, tenant, owner))


async def test_a_memory_retained_again_with_new_text_has_its_lines_rederived(client, engine):
    tenant, owner = new_scope()
    settings = settings_for()
    memories, shared, _, shared_word, _ = corpus(23)
    await store_memories(engine, tenant, owner, memories)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner)
        assert await rows_holding(engine, shared_word)
        before = await sections_by_id(engine, tenant, owner)
        redacted = shared.model_copy(update={"content": shared.content.replace(f"her {shared_word} collection",
                                                                               "her stamp collection")})
        outcome = await retain_and_signal(engine, tenant, owner, [redacted], client=client, settings=settings)
        assert outcome.stored.updated and outcome.compile is not None
        await outcome.compile.result()
    done = await receipts(engine, tenant, owner)
    assert len(done) == 1 and done[0]["metrics"]["memories_edited"] == 1
    assert done[0]["metrics"]["memories_forgotten"] == 0
    # The old text is gone from every page, claim and staged row; the memory stays, with its new text.
    assert await rows_holding(engine, shared_word) == {}
    assert "memory" in await references_to(engine, str(shared.resolved_id(tenant, owner)))
    assert await rows_holding(engine, "stamp collection")
    edited = str(shared.resolved_id(tenant, owner))
    after = await sections_by_id(engine, tenant, owner)
    untouched = {sid: row for sid, row in before.items() if edited not in row[3]}
    changed_by_the_compile = {sid for sid, row in untouched.items() if after.get(sid) != row}
    # Sections not citing the memory are left alone by the edit (the compile of its new text may add to
    # the pages its planner puts it on, as for any retained memory).
    assert len(changed_by_the_compile) < len(untouched)


async def test_through_the_sdk_the_rederivation_is_a_writer_call_on_exactly_the_affected_sections(
        client, engine, sim):
    tenant, owner = new_scope()
    memories, shared, alone, shared_word, alone_word = corpus(31)
    await store_memories(engine, tenant, owner, memories)
    forget = [str(shared.resolved_id(tenant, owner)), str(alone.resolved_id(tenant, owner))]
    async with model_worker(client, engine, "anthropic") as settings:
        await compile_scope(client, settings, tenant, owner)
        radius = await preview_forget(engine, ReadScope.of(tenant, owner), forget)
        before = await sections_by_id(engine, tenant, owner)
        calls_before = len(sim.calls)
        await forget_memories(engine, ReadScope.of(tenant, owner), forget, client, settings)
        await client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()
    rederive_calls = [c for c in sim.calls[calls_before:] if c.kind == "rederive"]
    assert len(rederive_calls) == len(radius.sections_rederived) > 0
    # The prompts carry the remaining memories only: never a forgotten one's text.
    assert all(shared_word not in json.dumps(c.body).lower() and alone_word not in json.dumps(c.body).lower()
               for c in rederive_calls)
    receipt = (await receipts(engine, tenant, owner))[0]["metrics"]
    billed = sum(cost_usd(settings.model_id, TokenUsage(**c.usage.as_dict())) for c in rederive_calls)
    assert receipt["cost_usd"] == pytest.approx(billed, abs=1e-6) and billed > 0
    assert await rows_holding(engine, shared_word) == {} and await rows_holding(engine, alone_word) == {}
    after = await sections_by_id(engine, tenant, owner)
    untouched = {sid: row for sid, row in before.items() if not set(forget) & set(row[3])}
    assert {sid: after.get(sid) for sid in untouched} == untouched


async def test_a_promoted_page_whose_evidence_falls_below_the_rule_goes_back_to_a_mention(client, engine):
    tenant, owner = new_scope()
    settings = settings_for(WIKI_RECORD_PAGE_SIZE=1)  # one memory a batch: the name is seen three times
    sightings = [MemoryIn.model_validate({
        "content": f"Bumped into Quillon Rask at the market on day {day}.",
        "metadata": {"entities": [{"name": "Quillon Rask", "type": "entity", "kind": "person"}]},
        "occurred_at": f"2026-11-{day:02d}T09:00:00Z"}) for day in (20, 21, 22)]
    stored = await store_memories(engine, tenant, owner, sightings)

    async def mention_rows() -> list[tuple]:
        async with engine.connect() as conn:
            rows = await conn.execute(text("SELECT status, mention_count, promoted_page_id IS NOT NULL AS linked "
                                           "FROM wiki_unresolved_mentions WHERE tenant_id = :t AND owner_id = :o "
                                           "AND alias_normalized = 'quillon rask'"), {"t": tenant, "o": owner})
            return [tuple(row) for row in rows]

    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner)
        assert [row[0] for row in await mention_rows()] == ["promoted"], "the name was meant to be promoted"
        radius = await preview_forget(engine, ReadScope.of(tenant, owner), [str(stored.inserted[0])])
        assert [page.name for page in radius.pages_demoted] == ["entity/quillon-rask (Quillon Rask)"]
        await forget_memories(engine, ReadScope.of(tenant, owner), [str(stored.inserted[0])], client, settings)
        await client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()
    async with engine.connect() as conn:
        pages = (await conn.execute(text("SELECT count(*) FROM wiki_pages WHERE tenant_id = :t AND owner_id = :o "
                                         "AND title = 'Quillon Rask'"), {"t": tenant, "o": owner})).scalar_one()
    assert pages == 0
    assert await mention_rows() == [("open", 2, False)]
    assert len((await receipts(engine, tenant, owner))[0]["metrics"]["pages_demoted"]) == 1


async def test_a_pass_that_never_applied_is_taken_over_by_the_next_and_an_applied_one_returns_its_receipt(engine):
    tenant, owner = new_scope()
    stored = await store_memories(engine, tenant, owner, sample_memories(3))
    key = str(stored.inserted[0])
    first, second = uuid.uuid4(), uuid.uuid4()
    async with engine.begin() as conn:
        await enqueue(conn, tenant, owner, "forget", [key])
        requests, _ = await prepare_pass(conn, tenant, owner, first)
        assert len(requests.request_ids) == 1
    async with engine.begin() as conn:  # the first pass's run died before applying
        requests, _ = await prepare_pass(conn, tenant, owner, second)
        assert requests.forgotten == {key}
        applied = await apply_pass(conn, tenant, owner, second, "compile:x:y", datetime.now(UTC))
    async with engine.begin() as conn:
        again = await apply_pass(conn, tenant, owner, second, "compile:x:y", datetime.now(UTC))
        stale = await apply_pass(conn, tenant, owner, first, "compile:x:y", datetime.now(UTC))
    assert applied.memories_forgotten == 1 and again == applied
    assert stale.memories_forgotten == 0 and len(await receipts(engine, tenant, owner)) == 1
    assert await references_to(engine, key) == {}


async def test_forgetting_the_newer_fact_makes_the_older_one_current_again(client, engine):
    tenant, owner = new_scope()
    settings = settings_for()
    person = {"entities": [{"name": "Orsolya Brenn", "type": "entity", "kind": "person"}]}
    older = MemoryIn.model_validate({"content": "Orsolya Brenn lives in Austin.", "metadata": person,
                                     "occurred_at": "2026-01-10T09:00:00Z"})
    newer = MemoryIn.model_validate({"content": "Orsolya Brenn moved to Vrelkstad.", "metadata": person,
                                     "occurred_at": "2026-06-03T18:00:00Z"})
    steady = [MemoryIn.model_validate({"content": f"Orsolya Brenn goes climbing on {day}.", "metadata": person,
                                       "occurred_at": f"2026-01-0{i}T10:00:00Z"})
              for i, day in enumerate(["Saturdays", "Sundays"], 1)]

    async def austin() -> tuple:
        async with engine.connect() as conn:
            return tuple((await conn.execute(text("""
                SELECT c.validity, c.valid_to, c.superseded_by IS NOT NULL AS replaced FROM wiki_section_claims c
                JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
                WHERE p.tenant_id = :t AND p.owner_id = :o AND c.text ILIKE '%Austin%'
            """), {"t": tenant, "o": owner})).one())

    async with running_worker(client, engine, settings):
        await store_memories(engine, tenant, owner, [*steady, older])
        await compile_scope(client, settings, tenant, owner)
        await store_memories(engine, tenant, owner, [newer])
        await compile_scope(client, settings, tenant, owner)
        assert (await austin())[0] == "superseded", "the newer fact was meant to replace the older one"
        # Judged decisions about the page: one shown the forgotten memory's place, one citing it, one neither.
        async with engine.begin() as conn:
            newer_id = str(newer.resolved_id(tenant, owner))
            for place, reason, shared in [("Vrelkstad", "both moved to the same city", []),
                                          ("climbing gym", "both go climbing", []),
                                          ("", "they share a memory", [newer_id])]:
                await conn.execute(text("""
                    INSERT INTO wiki_merge_decisions (id, tenant_id, owner_id, proposal_type, proposal_slug,
                        proposal_names, candidate_page_id, rung, decided_by, same, reason, evidence)
                    SELECT :id, :t, :o, 'entity', 'o-brenn', ARRAY['O. Brenn'], p.id, 'judge', 'judge', false,
                           :reason, CAST(:evidence AS jsonb)
                    FROM wiki_pages p WHERE p.tenant_id = :t AND p.owner_id = :o AND p.title = 'Orsolya Brenn'
                """), {"id": uuid.uuid4(), "t": tenant, "o": owner, "reason": reason,
                       "evidence": json.dumps({"proposal_places": [place] if place else [], "candidate_places": [],
                                               "shared_sources": shared})})
        await forget_memories(engine, ReadScope.of(tenant, owner), [str(newer.resolved_id(tenant, owner))],
                              client, settings)
        await client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()
    assert await austin() == ("current", None, False)
    # No claim is left naming a removed claim as its replacement, and no mark keeps the removed line.
    async with engine.connect() as conn:
        dangling = (await conn.execute(text("""
            SELECT count(*) FROM wiki_section_claims c WHERE c.superseded_by IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM wiki_section_claims d WHERE d.id = c.superseded_by)
        """))).scalar_one()
    assert dangling == 0
    assert await rows_holding(engine, "Vrelkstad") == {}
    async with engine.connect() as conn:
        kept = (await conn.execute(text("SELECT reason FROM wiki_merge_decisions WHERE tenant_id = :t AND owner_id = :o"),
                                   {"t": tenant, "o": owner})).scalars().all()
    assert kept == ["both go climbing"]
