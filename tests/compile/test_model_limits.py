"""The limits on model calls: WIKI_LLM_RETRY_BUDGET_SECONDS ends a compile whose model stays throttled,
and WIKI_LLM_MAX_PER_SECOND is the rate Temporal dispatches model calls at from WIKI_LLM_TASK_QUEUE.

The model is the real `anthropic` SDK over loopback HTTP to the Claude simulator (claude_sim), as in
test_model_path, whose `sim` fixture and worker these tests share.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from app.worker import build_workers
from messages.compile import CompileInput, Scope, compile_workflow_id
from runtime.temporal_client import compile_options, signal_compile
from tests.compile.helpers import ledger, wiki_snapshot
from tests.compile.helpers import test_settings as settings_for
from tests.compile.test_model_path import OWNER, TENANT, model_worker, retain_trip

# Short, so the test waits for it; the setting itself starts at 60 s (docs/configuration.md).
BUDGET_SECONDS = 4


async def test_the_retry_budget_reaches_every_model_call(client, engine, sim):
    await retain_trip(engine, 3)
    async with model_worker(client, engine, "anthropic", WIKI_LLM_RETRY_BUDGET_SECONDS=75,
                            WIKI_AGGREGATION_PASS_ENABLED=True) as settings:
        handle = await signal_compile(client, TENANT, OWNER, trigger="admin", settings=settings)
        await handle.result()

    timeouts = {}
    for event in (await handle.fetch_history()).events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attributes = event.activity_task_scheduled_event_attributes
            if attributes.activity_type.name.startswith(("llm.", "aggregation.plan")):
                timeouts[attributes.activity_type.name] = attributes.schedule_to_close_timeout.ToTimedelta()
    assert set(timeouts) >= {"llm.plan_batch", "aggregation.plan"}, timeouts
    assert set(timeouts.values()) == {timedelta(seconds=75)}
    assert sim.of_kind("planner") and sim.of_kind("aggregation")


async def test_a_model_throttled_past_the_retry_budget_fails_the_compile(client, engine, sim):
    await retain_trip(engine, 3)
    sim.fail_always("rate_limit", "planner", retry_after=1)
    async with model_worker(client, engine, "anthropic") as settings:
        options = compile_options(settings).model_copy(update={"llm_retry_budget_seconds": BUDGET_SECONDS})
        handle = await client.start_workflow(
            "CompileWorkflow", CompileInput(scope=Scope(tenant=TENANT, owner=OWNER), trigger="admin", options=options),
            id=compile_workflow_id(TENANT, OWNER), task_queue=settings.task_queue)
        started = time.monotonic()
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(handle.result(), timeout=BUDGET_SECONDS + 60)
        elapsed = time.monotonic() - started

    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "CompileFailed"
    assert cause.message.startswith(
        f"a model call was still failing when its retry budget of {BUDGET_SECONDS} s ran out "
        "(WIKI_LLM_RETRY_BUDGET_SECONDS); last failure: The model provider is throttling (429"), cause.message
    assert "\n" not in cause.message
    # Temporal gives up as soon as the next attempt could not start within the budget.
    assert elapsed < BUDGET_SECONDS + 30
    planner_calls = sim.of_kind("planner")
    assert len(planner_calls) >= 2, "the throttled call was not retried within the budget"
    assert all(call.status == 429 for call in planner_calls)
    [run] = await ledger(engine, TENANT, OWNER)
    assert (run["status"], run["error"]) == ("failed", cause.message)
    snapshot = await wiki_snapshot(engine, TENANT, OWNER)
    assert snapshot["pages"] == [] and snapshot["cursor"] == [(None, None)]


async def test_the_model_rate_limit_is_set_on_the_model_task_queue(client, engine):
    settings = settings_for(WIKI_LLM_TASK_QUEUE="tq-model-rate", WIKI_LLM_MAX_PER_SECOND=2.5)
    workers = build_workers(client, engine, settings)
    rates = {worker.task_queue: worker.config().get("max_task_queue_activities_per_second") for worker in workers}
    assert rates == {settings.task_queue: None, "tq-model-rate": 2.5}
