"""A worker process shuts down gracefully on SIGTERM: it stops polling, finishes the activity it is
running, and exits 0; another worker carries the compile on and nothing is done twice.

The worker is `python worker.py` in its own process, as deployed; the scripted planner is slowed down
so that a model call is surely in flight when the signal arrives.
"""

from __future__ import annotations

import asyncio
import signal
import uuid

from temporalio.api.enums.v1 import EventType, PendingActivityState
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from runtime.temporal_client import signal_compile
from tests.compile.helpers import ledger, poll, retain_sample, running_worker
from tests.compile.helpers import test_settings as settings_for
from tests.compile.test_durability import work_redone, worker_process

MODEL_CALL_SECONDS = 1.5


async def model_call_in_flight(handle: WorkflowHandle) -> str | None:
    """The activity id of a model call a worker is running now, if any."""
    description = await handle.describe()
    for pending in description.raw_description.pending_activities:
        if (pending.activity_type.name.startswith("llm.")
                and pending.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED):
            return pending.activity_id
    return None


async def completion_of(client: Client, handle: WorkflowHandle, activity_id: str) -> tuple[int, str] | None:
    """(attempt, worker identity) of the activity's completion, once its history records one."""
    started = {}
    scheduled_ids = {}
    for event in (await handle.fetch_history()).events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled_ids[event.event_id] = event.activity_task_scheduled_event_attributes.activity_id
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            attributes = event.activity_task_started_event_attributes
            started[attributes.scheduled_event_id] = (attributes.attempt, attributes.identity)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            scheduled = event.activity_task_completed_event_attributes.scheduled_event_id
            if scheduled_ids.get(scheduled) == activity_id:
                return started[scheduled]
    return None


async def test_sigterm_lets_a_worker_finish_its_model_call_and_exit_cleanly(
        client, temporal_env: WorkflowEnvironment, database_url, engine, tmp_path):
    tenant, owner = f"t-{uuid.uuid4().hex[:10]}", "alice"
    settings = settings_for()
    worker_env = {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "WIKI_TASK_QUEUE": settings.task_queue,
        "WIKI_LLM": "scripted",
        "WIKI_SCRIPTED_LATENCY_MS": str(int(MODEL_CALL_SECONDS * 1000)),
    }
    await retain_sample(engine, tenant, owner, 10)
    handle = await signal_compile(client, tenant, owner, trigger="admin", settings=settings)
    log = tmp_path / "worker.log"

    with worker_process(worker_env, log) as worker:
        async def in_flight() -> str | None:
            assert worker.poll() is None, log.read_text()
            return await model_call_in_flight(handle)

        activity_id = await poll(in_flight, timeout=60, every=0.02, what="a model call to be running")
        worker.send_signal(signal.SIGTERM)

        async def exited() -> bool:
            return worker.poll() is not None

        await poll(exited, timeout=60, what="the worker to exit after SIGTERM")
        assert worker.returncode == 0, f"exit code {worker.returncode}:\n{log.read_text()}"

    # The call in flight finished on the stopping worker, at its first attempt.
    completed = await completion_of(client, handle, activity_id)
    assert completed is not None, "the model call in flight at SIGTERM was not completed"
    attempt, identity = completed
    assert (attempt, identity.split("@")[0]) == (1, str(worker.pid))

    # Another worker carries the compile to its end; nothing had to be done again.
    async with running_worker(client, engine, settings):
        await asyncio.wait_for(handle.result(), timeout=60)
    [run] = await ledger(engine, tenant, owner)
    assert (run["status"], run["metrics"]["records_read"]) == ("succeeded", 10)
    redone = [step for step in await work_redone(client, engine, handle.id, tenant, owner) if step != "workflow task"]
    assert redone == [], redone
