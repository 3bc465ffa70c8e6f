"""A bulk compile's other model calls (section writer, aggregation planner) through Message Batches,
via the real SDK to the simulator's batch routes: the wiki is the interactive compile's, every call
is billed at the batch price and the ledger says so, one wait serves every call of a batch, and a
request the batch cannot answer, or whose prompt changed, is asked interactively."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from activities.deferred_calls import CallDeferred, DeferringClient
from claude_sim import ClaudeSimulator
from domain.memory import MemoryIn
from messages.compile import Scope
from planners.claude_client import ModelClient
from runtime.temporal_client import signal_compile
from store.memories import store_memories
from tests.compile.helpers import ledger, sample_memories, wiki_snapshot
from tests.compile.test_message_batches import BATCH, billed_at_batch_prices, chain_history
from tests.compile.test_model_path import API_KEY, OWNER, TENANT, model_worker

# The writer is called when an update no longer fits a section's budget: one place, visited by every
# memory, fills its section past the budget in the second batch. Its dated lines would be folded in
# code (planners/section_fold.py); the tests here are about the writer's calls, so they turn the fold off.
MARKET_DAYS = [MemoryIn(content=f"Day {day}: bought figs, cured ham and a wedge of manchego at Mercado Central "
                                f"stall {day}, then walked the old town ramparts until dusk.",
                        occurred_at=f"2026-{4 + day // 28:02d}-{1 + day % 28:02d}T09:00:00Z",
                        metadata={"entities": [{"name": "Mercado Central", "type": "entity", "kind": "place"}]})
               for day in range(60)]
ALL_CALLS = {**BATCH, "WIKI_RECORD_PAGE_SIZE": 30, "WIKI_AGGREGATION_PASS_ENABLED": True}


async def _retain(engine) -> None:
    await store_memories(engine, TENANT, OWNER, [*sample_memories(40), *MARKET_DAYS])


@pytest.fixture(autouse=True)
def writer_not_fold(monkeypatch) -> None:
    monkeypatch.setattr("planners.claude_planner.folded_body", lambda body, budget: None)


async def test_a_bulk_compile_sends_its_writer_and_aggregation_calls_through_batches_too(
        client: Client, engine, second_engine, sim: ClaudeSimulator) -> None:
    for database in (engine, second_engine):
        await _retain(database)
    sim.config.batch_processing_seconds = 0.3
    # Interactive and one batch after the other, as batch mode compiles (no plan ahead).
    async with model_worker(client, engine, "anthropic", WIKI_LLM_BATCH_MODE="off", WIKI_OVERLAP_PLANNING=False,
                            **ALL_CALLS) as settings:
        handle = await signal_compile(client, TENANT, OWNER, trigger="bootstrap_import", settings=settings)
        await handle.result()
    interactive = [c for c in sim.calls if c.kind != "claim_judge"]
    first = len(sim.calls)
    async with model_worker(client, second_engine, "anthropic", **ALL_CALLS) as settings:
        handle = await signal_compile(client, TENANT, OWNER, trigger="bootstrap_import", settings=settings)
        await handle.result()
    # The claim judge is asked directly, as for an interactive compile: its lines exist only once the
    # plan's (or the writer's) batch has ended.
    judged = [c for c in sim.calls[first:] if c.kind == "claim_judge"]
    batched = [c for c in sim.calls[first:] if c.kind != "claim_judge"]
    assert judged and not any(c.batch_id for c in judged)

    kinds = {kind: [c for c in batched if c.kind == kind] for kind in ("planner", "writer", "aggregation")}
    assert all(kinds.values()), {kind: len(calls) for kind, calls in kinds.items()}
    assert all(c.batch_id for c in batched) and not any(c.batch_id for c in interactive)
    # The same prompts as the interactive compile's, so the same wiki, at half the price.
    assert [c.usage for c in batched] == [c.usage for c in interactive]
    assert billed_at_batch_prices(sim, batched) == pytest.approx(0.5 * billed_at_batch_prices(sim, interactive))
    assert await wiki_snapshot(engine, TENANT, OWNER) | {"cursor": []} == \
        await wiki_snapshot(second_engine, TENANT, OWNER) | {"cursor": []}
    runs = await ledger(second_engine, TENANT, OWNER)
    assert sum(run["metrics"].get("batched_model_calls", 0) for run in runs) == \
        len(kinds["writer"]) + len(kinds["aggregation"])
    assert sum(run["metrics"]["cost_usd"] for run in runs) == pytest.approx(
        billed_at_batch_prices(sim, batched) + billed_at_batch_prices(sim, judged), abs=1e-6 * (1 + len(batched)))
    # However many calls travel in a batch, the compile waits for it once.
    events = await chain_history(client, handle.id, handle.first_execution_run_id or handle.result_run_id)
    waited = [e.activity_task_scheduled_event_attributes.input for e in events
              if e.activity_task_scheduled_event_attributes.activity_type.name == "llm.poll_message_batch"]
    assert len(waited) == len({batch for batch in sim.batches if any(c.batch_id == batch for c in batched)})


async def test_a_request_the_batch_cannot_answer_is_asked_interactively(client: Client, engine, sim) -> None:
    await _retain(engine)
    sim.fail_next("server_error", call="aggregation")
    async with model_worker(client, engine, "anthropic", **ALL_CALLS) as settings:
        handle = await signal_compile(client, TENANT, OWNER, trigger="bootstrap_import", settings=settings)
        await handle.result()

    aggregation = sim.of_kind("aggregation")
    failed = [c for c in aggregation if c.fault]
    assert len(failed) == 1 and failed[0].batch_id
    # The errored request's answer came from an interactive call, at list price.
    assert any(c.batch_id is None and not c.fault for c in aggregation)
    runs = await ledger(engine, TENANT, OWNER)
    assert runs[-1]["status"] == "succeeded" and not any(run["metrics"].get("aggregation_error") for run in runs)
    assert sum(run["metrics"]["cost_usd"] for run in runs) == pytest.approx(
        billed_at_batch_prices(sim), abs=1e-6 * (1 + len(sim.calls)))


async def test_a_deferred_call_is_read_once_and_a_changed_prompt_is_asked_interactively(engine, sim) -> None:
    scope = Scope(tenant=TENANT, owner=OWNER)
    model = ModelClient(provider="anthropic", api_key=API_KEY)
    sim.config.batch_processing_seconds = 60.0
    ask = {"model": "claude-haiku-4-5", "system": "Be brief.", "max_tokens": 64}
    try:
        def deferring(call: str) -> DeferringClient:
            return DeferringClient(engine, model, 0.0, scope, uuid.UUID(int=7), "run-1", call, [])

        with pytest.raises(CallDeferred) as deferred:
            await deferring("write_section:a").complete(user="Say one.", **ask)
        with pytest.raises(CallDeferred) as again:  # asked again before the batch ended: still waiting
            await deferring("write_section:a").complete(user="Say one.", **ask)
        with pytest.raises(CallDeferred) as other:
            await deferring("write_section:b").complete(user="Say two.", **ask)
        assert again.value.batch_id == deferred.value.batch_id != other.value.batch_id and len(sim.batches) == 2
        for batch in sim.batches.values():
            batch.ready_at = 0.0  # processing is over
        reply = await deferring("write_section:a").complete(user="Say one.", **ask)
        assert reply.batch and reply.usage.output_tokens > 0
        # The prompt the activity rebuilt differs from the one that was batched: its answer is not used.
        changed = await deferring("write_section:b").complete(user="Say three.", **ask)
        assert not changed.batch and sim.calls[-1].batch_id is None and "Say three." in str(sim.calls[-1].body)
        # A read request is gone with its prompt: asked once more, it goes into a new batch.
        with pytest.raises(CallDeferred) as anew:
            await deferring("write_section:a").complete(user="Say one.", **ask)
        assert anew.value.batch_id not in (deferred.value.batch_id, other.value.batch_id)
    finally:
        await model.aclose()
