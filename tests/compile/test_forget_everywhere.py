"""Forgetting a memory with a word nobody else wrote, through the real SDK and the Claude simulator:
once its receipt is in, the word is in no column of any table, no cache of the process, no log record,
no workflow history and no batch the simulator holds, and sections that never cited it are byte for
byte what they were. Interactively, and with a bootstrap in Message Batches mode waiting on a batch
whose requests hold the memory (and the pages it is on)."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid

import pytest
from temporalio.client import Client

from app.forget import forget_memories, preview_forget, wait_for_receipt
from app.reads import ReadScope
from claude_sim import ClaudeSimulator
from domain.memory import MemoryIn
from domain.process_caches import held_texts
from messages.compile import compile_workflow_id
from runtime.temporal_client import signal_compile
from store.memories import store_memories
from tests.compile.helpers import compile_scope, poll
from tests.compile.helpers import test_settings as settings_for
from tests.compile.test_durability import worker_process
from tests.compile.test_forget import corpus, history_text, new_scope, receipts, rows_holding, sections_by_id
from tests.compile.test_model_path import API_KEY, model_worker

BATCH = {"WIKI_LLM_BATCH_POLL_SECONDS": 0.1, "WIKI_LLM_BATCH_WINDOW_SECONDS": 0}


def small_corpus(seed: int) -> tuple[list[MemoryIn], MemoryIn, str]:
    """The forget corpus without the sample around it: the memories about Lena and the one with the
    nonce word (a cheap scope for tests that start worker processes)."""
    memories, shared, _, shared_word, _ = corpus(seed)
    return [m for m in memories if "Lena" in m.content], shared, shared_word


def logged(caplog: pytest.LogCaptureFixture) -> str:
    """Every record the run logged, as the worker's log file would hold it (messages and tracebacks)."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return "\n".join(formatter.format(record) for record in caplog.records).lower()


def cached(word: str) -> list[str]:
    """The process's caches holding the word (registered caches and memoised functions alike)."""
    return sorted({name for name, value in held_texts() if word in value.lower()})


def held_by_simulator(sim: ClaudeSimulator, word: str) -> list[str]:
    """The batches the simulator holds whose requests or results hold the word."""
    return [batch_id for batch_id, batch in sim.batches.items()
            if word in json.dumps([batch.requests, batch.results], ensure_ascii=False).lower()]


async def test_interactively_the_word_is_left_nowhere(client: Client, engine, sim, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    tenant, owner = new_scope()
    memories, shared, alone, shared_word, alone_word = corpus(41)
    await store_memories(engine, tenant, owner, memories)
    forget = [str(shared.resolved_id(tenant, owner)), str(alone.resolved_id(tenant, owner))]
    scope = ReadScope.of(tenant, owner)
    async with model_worker(client, engine, "anthropic") as settings:
        await compile_scope(client, settings, tenant, owner)
        assert await rows_holding(engine, shared_word) and cached(shared_word), "the word never reached the wiki"
        before = await sections_by_id(engine, tenant, owner)
        preview = await preview_forget(engine, scope, forget)
        queued = await forget_memories(engine, scope, forget, client, settings)
        receipt = await wait_for_receipt(engine, scope, queued.request_id, timeout_seconds=120)
        await client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()

    assert receipt.report.comparable() == preview.comparable()
    assert receipt.report.pages_removed and receipt.report.provider_erasure == "none"
    for word in (shared_word, alone_word):
        assert await rows_holding(engine, word) == {}, word
        assert cached(word) == [], word
        assert word not in logged(caplog), word
        assert word not in (await history_text(client, tenant, owner)).lower(), word
    assert sim.batches == {}
    after = await sections_by_id(engine, tenant, owner)
    untouched = {sid: row for sid, row in before.items() if not set(forget) & set(row[3])}
    assert untouched and {sid: after.get(sid) for sid in untouched} == untouched


async def test_a_bootstrap_waiting_on_a_batch_that_holds_the_memory_drops_it(client: Client, engine, sim,
                                                                             caplog) -> None:
    caplog.set_level(logging.DEBUG)
    tenant, owner = new_scope()
    memories, shared, alone, shared_word, alone_word = corpus(43)
    await store_memories(engine, tenant, owner, [m for m in memories if m is not alone])
    late_word = "brumblefax"
    late = MemoryIn.model_validate({
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, tenant)),
        "content": f"Lena took up {late_word} weaving at the community hall on Thursday evenings.",
        "metadata": {"entities": [{"name": "Lena", "type": "entity", "kind": "person"}]},
        "occurred_at": "2026-07-02T18:00:00Z"})
    forget = [str(shared.resolved_id(tenant, owner)), str(late.resolved_id(tenant, owner))]
    scope = ReadScope.of(tenant, owner)
    async with model_worker(client, engine, "anthropic", WIKI_RECORD_PAGE_SIZE=8, **BATCH) as settings:
        await compile_scope(client, settings, tenant, owner)  # interactively: the wiki holds the shared word
        # A bulk import in batch mode; the batch stays in progress until the test lets it end.
        sim.config.batch_processing_seconds = 3600.0
        await store_memories(engine, tenant, owner, [late, alone])
        handle = await signal_compile(client, tenant, owner, trigger="bootstrap_import", settings=settings)

        async def holding() -> list[str]:
            return held_by_simulator(sim, late_word)

        [in_flight] = await poll(holding, timeout=60, what="a Message Batch holding the new memory")
        before = await sections_by_id(engine, tenant, owner)
        preview = await preview_forget(engine, scope, forget)
        assert [b.batch_id for b in preview.provider_batches] == [in_flight]
        queued = await forget_memories(engine, scope, forget, client, settings)
        receipt = await wait_for_receipt(engine, scope, queued.request_id, timeout_seconds=120)

        # The batch was canceled and deleted at the provider, and the receipt says so.
        assert [(b.batch_id, b.status) for b in receipt.report.provider_batches] == [(in_flight, "deleted")]
        assert in_flight in sim.deleted_batches and receipt.report.provider_erasure == "done"
        assert receipt.report.batch_requests_discarded >= 1
        assert receipt.report.comparable() == preview.comparable()
        for word in (shared_word, late_word):
            assert held_by_simulator(sim, word) == [], word
            assert await rows_holding(engine, word) == {}, word
            assert cached(word) == [], word
        after = await sections_by_id(engine, tenant, owner)
        untouched = {sid: row for sid, row in before.items() if not set(forget) & set(row[3])}
        assert untouched and {sid: after.get(sid) for sid in untouched} == untouched

        # The bootstrap goes on: what was left of its batch is planned again, without the memory.
        sim.config.batch_processing_seconds = 0.0
        for batch in sim.batches.values():
            batch.ready_at = 0.0
        await handle.result()
    for word in (shared_word, late_word):
        assert await rows_holding(engine, word) == {}, word
        assert held_by_simulator(sim, word) == [], word
        assert word not in logged(caplog), word
        assert word not in (await history_text(client, tenant, owner)).lower(), word
    # The memory forgotten while its batch was in flight was never compiled; the other new one was.
    assert await rows_holding(engine, alone_word)


async def test_a_worker_killed_while_a_forget_deletes_its_batches_is_replaced_and_the_forget_completes_once(
        client: Client, temporal_env, database_url, engine, sim, tmp_path) -> None:
    tenant, owner = new_scope()
    memories, shared, shared_word = small_corpus(53)
    await store_memories(engine, tenant, owner, memories)
    env = {"DATABASE_URL": database_url, "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
           "WIKI_TASK_QUEUE": f"tq-{uuid.uuid4()}", "WIKI_LLM": "anthropic", "ANTHROPIC_API_KEY": API_KEY,
           "ANTHROPIC_BASE_URL": sim.base_url, "WIKI_HEARTBEAT_TIMEOUT_SECONDS": "2", "WIKI_DEBOUNCE_SECONDS": "0",
           "WIKI_RECORD_PAGE_SIZE": "50", "WIKI_LLM_BATCH_POLL_SECONDS": "0.1", "WIKI_LLM_BATCH_WINDOW_SECONDS": "0",
           "WIKI_AGGREGATION_PASS_ENABLED": "false"}
    settings = settings_for(**env)
    scope = ReadScope.of(tenant, owner)
    # The bootstrap's batch stays in progress, and once canceled it keeps canceling until let go.
    sim.config.batch_processing_seconds = 3600.0
    sim.config.batch_cancel_seconds = 3600.0
    with worker_process(env, tmp_path / "first-worker.log") as first:
        handle = await signal_compile(client, tenant, owner, trigger="bootstrap_import", settings=settings)

        async def holding() -> list[str]:
            assert first.poll() is None, (tmp_path / "first-worker.log").read_text()
            return held_by_simulator(sim, shared_word)

        [in_flight] = await poll(holding, timeout=90, what="a Message Batch holding the memory")
        queued = await forget_memories(engine, scope, [str(shared.resolved_id(tenant, owner))], client, settings)

        async def canceling() -> bool:
            return sim.batches.get(in_flight) is not None and sim.batches[in_flight].status == "canceling"

        await poll(canceling, timeout=90, what="the forget to cancel the batch")
        first.kill()  # SIGKILL, while the pass's last step waits for the canceled batch to end
        first.wait(timeout=30)
    receipts = await wait_receipts(engine, tenant, owner)
    assert [r["provider_erasure"] for r in receipts] == ["to do"]  # committed once, its last step not done
    sim.batches[in_flight].cancel_settles_at = 0.0
    sim.config.batch_processing_seconds = 0.0
    with worker_process(env, tmp_path / "second-worker.log"):
        receipt = await wait_for_receipt(engine, scope, queued.request_id, timeout_seconds=120)
        for batch in sim.batches.values():
            batch.ready_at = 0.0
        await asyncio.wait_for(handle.result(), timeout=180)
    assert [(b.batch_id, b.status) for b in receipt.report.provider_batches] == [(in_flight, "deleted")]
    assert sim.deleted_batches.count(in_flight) == 1 and len(await wait_receipts(engine, tenant, owner)) == 1
    assert await rows_holding(engine, shared_word) == {} and held_by_simulator(sim, shared_word) == []


async def wait_receipts(engine, tenant: str, owner: str) -> list[dict]:
    return [row["metrics"] for row in await receipts(engine, tenant, owner)]
