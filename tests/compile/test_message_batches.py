"""Batch mode: leaf plans of bulk compiles through Anthropic Message Batches, via the real SDK to the
simulator's batch routes. The wiki is the interactive compile's, the plans cost half, a worker restart
between submit and results still completes, and Bedrock (no Message Batches) stays interactive."""

from __future__ import annotations

import asyncio
import json

import pytest
from temporalio.client import Client

from claude_sim import ClaudeSimulator
from domain.errors import ModelRejected
from domain.pricing import TokenUsage, cost_usd
from planners.claude_client import BatchItem, ModelClient
from runtime.temporal_client import batch_triggers, signal_compile
from store.memories import store_memories
from tests.compile.helpers import compile_scope, ledger, poll, sample_memories, wiki_snapshot
from tests.compile.test_model_path import (
    API_KEY,
    OWNER,
    TENANT,
    cursor_record,
    model_worker,
    provider_settings,
    retain_trip,
)
from tests.sim_helpers import leaf_plan

BATCH = {"WIKI_LLM_BATCH_POLL_SECONDS": 0.1, "WIKI_LLM_BATCH_WINDOW_SECONDS": 0}


def billed_at_batch_prices(sim: ClaudeSimulator, calls: list | None = None) -> float:
    """What the simulator billed: list price for interactive calls, half of it for batched requests."""
    return sum(cost_usd(c.model, TokenUsage(**c.usage.as_dict())) * c.billing_multiplier
               for c in (sim.calls if calls is None else calls) if c.usage is not None)


async def test_the_sdk_sees_a_batch_in_progress_then_its_results(sim) -> None:
    sim.config.batch_processing_seconds = 60.0
    client = ModelClient(provider="anthropic", api_key=API_KEY)
    try:
        items = [BatchItem(custom_id=f"r{i}", model="claude-haiku-4-5", system="Be brief.", user=f"Say {i}.",
                           max_tokens=64) for i in range(2)]
        batch_id = await client.submit_batch(items)
        state = await client.batch_state(batch_id)
        assert (state.ended, state.processing, state.succeeded) == (False, 2, 0)
        assert sim.calls == []  # nothing is answered (or billed) before processing ends
        sim.batches[batch_id].ready_at = 0.0  # processing is over
        state = await client.batch_state(batch_id)
        assert (state.ended, state.processing, state.succeeded) == (True, 0, 2)
        outcomes = await client.batch_results(batch_id)
        assert sorted(o.custom_id for o in outcomes) == ["r0", "r1"]
        assert all(o.reply is not None and o.reply.usage.output_tokens > 0 for o in outcomes)
        assert [c.billing_multiplier for c in sim.calls] == [0.5, 0.5]
        with pytest.raises(ModelRejected):  # duplicate custom ids: a 400, never retried
            await client.submit_batch([items[0], items[0]])
        with pytest.raises(ModelRejected):  # another caller's or an unknown batch: 404
            await client.batch_state("msgbatch_unknown")
    finally:
        await client.aclose()


async def test_a_bootstrap_in_batch_mode_writes_the_interactive_wiki_at_half_the_plan_price(
        client: Client, engine, second_engine, sim) -> None:
    memories = sample_memories(60)
    for database in (engine, second_engine):
        await store_memories(database, TENANT, OWNER, memories)
    sim.config.batch_processing_seconds = 1.0
    # Interactive and one batch after the other, as batch mode compiles (no plan ahead): the same prompts.
    async with model_worker(client, engine, "anthropic", WIKI_LLM_BATCH_MODE="off", WIKI_OVERLAP_PLANNING=False,
                            WIKI_RECORD_PAGE_SIZE=30) as settings:
        await compile_scope(client, settings, TENANT, OWNER, trigger="bootstrap_import")
    interactive = list(sim.calls)
    async with model_worker(client, second_engine, "anthropic", WIKI_RECORD_PAGE_SIZE=30, **BATCH) as settings:
        handle = await signal_compile(client, TENANT, OWNER, trigger="bootstrap_import", settings=settings)
        await handle.result()
    batched = sim.calls[len(interactive):]
    # Each batch was polled more than once (a fixed-interval retry of one activity: its first poll comes
    # long before the batch's second of processing ends), yet history holds one poll activity per batch;
    # one more retrieve per batch is the results call's own.
    events = await chain_history(client, handle.id, handle.first_execution_run_id or handle.result_run_id)
    polls = [e for e in events if e.activity_task_scheduled_event_attributes.activity_type.name
             == "llm.poll_message_batch"]
    assert len(polls) == len(sim.batches) == 2
    assert all(batch.retrievals - 1 >= 2 for batch in sim.batches.values())

    assert await wiki_snapshot(engine, TENANT, OWNER) | {"cursor": []} == \
        await wiki_snapshot(second_engine, TENANT, OWNER) | {"cursor": []}
    plans = [c for c in batched if c.kind == "planner"]
    assert len(plans) == 2 and all(c.batch_id for c in plans) and len(sim.batches) == 2
    assert not any(c.batch_id for c in interactive)
    # The same prompts, so the same tokens; a batched plan costs half the interactive one.
    interactive_plans = [c for c in interactive if c.kind == "planner"]
    assert [c.usage for c in plans] == [c.usage for c in interactive_plans]
    assert billed_at_batch_prices(sim, plans) == pytest.approx(0.5 * billed_at_batch_prices(sim, interactive_plans))
    runs = await ledger(second_engine, TENANT, OWNER)
    assert sum(run["metrics"].get("batched_planner_calls", 0) for run in runs) == 2
    assert sum(run["metrics"]["cost_usd"] for run in runs) == pytest.approx(
        billed_at_batch_prices(sim, batched), abs=1e-6 * (1 + len(batched)))


async def test_a_worker_restart_between_submit_and_results_still_completes(client: Client, engine, sim) -> None:
    ids = await retain_trip(engine, 4)
    sim.config.batch_processing_seconds = 1.0
    async with model_worker(client, engine, "anthropic", **BATCH) as settings:
        handle = await signal_compile(client, TENANT, OWNER, trigger="bootstrap_import", settings=settings)
        await poll(lambda: _some(sim.batches), timeout=30, what="a submitted Message Batch")
    # The worker is gone with the batch still processing; a new one polls, collects and finishes.
    async with model_worker(client, engine, "anthropic", WIKI_TASK_QUEUE=settings.task_queue, **BATCH):
        await handle.result()

    assert len(sim.batches) == 1 and [c.batch_id for c in sim.of_kind("planner")] == list(sim.batches)
    assert await cursor_record(engine) == ids[-1]
    [run] = await ledger(engine, TENANT, OWNER)
    assert run["status"] == "succeeded" and run["metrics"]["batched_planner_calls"] == 1
    # The ledger prices each call to the microdollar.
    assert run["metrics"]["cost_usd"] == pytest.approx(billed_at_batch_prices(sim), abs=1e-6 * len(sim.calls))


async def test_a_batched_plan_passes_the_verification_gate_and_its_judge_is_asked_interactively(
        client: Client, engine, sim) -> None:
    await retain_trip(engine, 4)
    sim.config.batch_processing_seconds = 0.2
    # A line grounded in its memories' names yet not their words: the deterministic check cannot settle
    # it, so the claim judge must; an invented guest the grounding check rejects without a call.
    # (A first name opening a line is checked like any name: "Eric remembers…" would be rejected here.)
    unsettled, invented = "Lisbon was remembered fondly.", "Lisbon with Quillon Vasterby."

    def plan_with_claims(user: str) -> dict:
        answer = leaf_plan(user)
        section = next(s for page in answer["new_pages"] + answer["updates"] for s in page["sections"])
        section["lines"] += [unsettled, invented]
        return answer

    sim.answer_next("planner", plan_with_claims)
    async with model_worker(client, engine, "anthropic", **BATCH) as settings:
        await compile_scope(client, settings, TENANT, OWNER, trigger="bootstrap_import")

    [plan] = sim.of_kind("planner")
    [judged] = sim.of_kind("claim_judge")
    assert plan.batch_id and judged.batch_id is None and unsettled in json.dumps(judged.body)
    assert invented not in json.dumps(judged.body)
    [run] = await ledger(engine, TENANT, OWNER)
    assert run["metrics"]["batched_planner_calls"] == 1
    assert run["metrics"]["claims_judged"] == 1 and run["metrics"]["claims_rejected"] >= 1
    # The judge's tokens are on the run's bill, at list price; the plan's at the batch price.
    assert run["metrics"]["cost_usd"] == pytest.approx(billed_at_batch_prices(sim), abs=1e-6 * len(sim.calls))


async def test_many_scopes_requests_travel_in_one_message_batch(client: Client, engine, sim) -> None:
    owners = ("ana", "ben", "cy")
    for owner in owners:
        await store_memories(engine, TENANT, owner, sample_memories(5, seed=len(owner) + ord(owner[0])))
    sim.config.batch_processing_seconds = 0.2
    window = {**BATCH, "WIKI_LLM_BATCH_WINDOW_SECONDS": 2.0}
    async with model_worker(client, engine, "anthropic", **window) as settings:
        handles = [await signal_compile(client, TENANT, owner, trigger="bootstrap_import", settings=settings)
                   for owner in owners]
        await asyncio.gather(*[handle.result() for handle in handles])

    # Three scopes' first plans were pending within the window: one batch carried them all.
    [batch] = sim.batches.values()
    assert len(batch.requests) == 3 and len(sim.of_kind("planner")) == 3
    for owner in owners:
        [run] = await ledger(engine, TENANT, owner)
        assert run["status"] == "succeeded" and run["metrics"]["batched_planner_calls"] == 1


async def test_bedrock_has_no_message_batches_and_bootstraps_interactively(client: Client, engine, sim) -> None:
    assert batch_triggers(provider_settings("bedrock")) == []
    assert batch_triggers(provider_settings("anthropic")) == ["bootstrap_import", "rebuild"]
    assert batch_triggers(provider_settings("anthropic", WIKI_LLM_BATCH_MODE="off")) == []
    bedrock = ModelClient(provider="bedrock", aws_region="us-east-1")
    try:
        assert not bedrock.supports_batches
        with pytest.raises(ModelRejected):
            await bedrock.submit_batch([BatchItem(custom_id="r", model="m", system="s", user="u", max_tokens=8)])
    finally:
        await bedrock.aclose()
    ids = await retain_trip(engine, 4)
    async with model_worker(client, engine, "bedrock", **BATCH) as settings:
        await compile_scope(client, settings, TENANT, OWNER, trigger="bootstrap_import")
    assert sim.batches == {} and {c.platform for c in sim.calls} == {"bedrock"}
    assert not any(c.batch_id for c in sim.calls)
    assert await cursor_record(engine) == ids[-1]


async def chain_history(client: Client, workflow_id: str, run_id: str | None) -> list:
    """The history events of a run and of every run it continued as new into."""
    events: list = []
    while run_id:
        run = [event async for event in client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history_events()]
        events += run
        run_id = run[-1].workflow_execution_continued_as_new_event_attributes.new_execution_run_id or None
    return events


async def _some(batches: dict) -> bool:
    return bool(batches)
