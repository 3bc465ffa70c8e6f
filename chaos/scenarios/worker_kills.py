"""Scenario 1: the worker is SIGKILLed at random points, at least 20 times over one compile.

Each worker is a `python worker.py` process. Once it has started work on the compile (Temporal
shows an activity or a workflow task taken by its identity), it is killed after a random delay;
a new worker is started each time, and after the last kill a final one finishes the compile.
Where each kill landed is read from Temporal (the activities the dead worker had in flight).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from temporalio.api.enums.v1 import EventType, PendingActivityState, PendingWorkflowTaskState
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError

from chaos.outcome import Outcome
from chaos.processes import WorkerProcess
from chaos.suite import ScenarioError, Suite, poll

KILLS = 22
BUSY_TIMEOUT_SECONDS = 120


async def _in_flight(handle: WorkflowHandle, identity: str) -> list[str]:
    """Activity types the worker with `identity` is running now."""
    description = await handle.describe()
    return sorted(
        activity.activity_type.name for activity in description.raw_description.pending_activities
        if activity.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
        and activity.last_worker_identity == identity
    )


async def _kill_point(handle: WorkflowHandle, identity: str) -> str:
    """What the worker is doing at this instant, as Temporal sees it."""
    running = await _in_flight(handle, identity)
    if running:
        return " + ".join(dict.fromkeys(running))
    task = (await handle.describe()).raw_description.pending_workflow_task
    if task.state == PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED:
        return "a workflow task"
    return "between tasks"


async def _took_a_workflow_task(handle: WorkflowHandle, identity: str) -> bool:
    async for event in handle.fetch_history_events():
        if (event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
                and event.workflow_task_started_event_attributes.identity == identity):
            return True
    return False


async def _until_busy(suite: Suite, handle_id: str, worker: WorkerProcess) -> bool:
    """True once the worker works on the compile; False if the compile completed first."""
    handle = suite.client.get_workflow_handle(handle_id)
    polls = 0

    async def busy() -> str | None:
        nonlocal polls
        polls += 1
        if not worker.alive():
            raise ScenarioError(f"worker {worker.pid} exited on its own:\n{worker.log_tail()}")
        try:
            description = await handle.describe()
            if description.status == WorkflowExecutionStatus.COMPLETED:
                return "completed"
            if await _in_flight(handle, worker.identity):
                return "busy"
            # The history is longer to read: only every fifth poll.
            if polls % 5 == 0 and await _took_a_workflow_task(handle, worker.identity):
                return "busy"
        except RPCError:
            return None
        return None

    return await poll(busy, timeout=BUSY_TIMEOUT_SECONDS, what=f"worker {worker.pid} to take work") == "busy"


async def run(suite: Suite) -> Outcome:
    """Scenario 1: the worker SIGKILLed at random points, a new worker each time."""
    outcome = Outcome(1, "Worker SIGKILLed at random points (a new `python worker.py` each time)")
    reference = suite.reference
    # Spread the kills over about half of the compile's own work, so they land all along it.
    mean_delay = max(0.3, 0.5 * reference.seconds / KILLS)
    started = time.monotonic()
    async with suite.database("kills") as (url, engine):
        settings = suite.settings()
        handle = await suite.start_compile(settings)
        kill_points: Counter[str] = Counter()
        with suite.fleet("kills", settings, url) as fleet:
            while sum(kill_points.values()) < KILLS:
                worker = fleet.product_worker()
                if not await _until_busy(suite, handle.id, worker):
                    break
                await asyncio.sleep(suite.rng.uniform(0, 2 * mean_delay))  # the random kill point
                point = await _kill_point(suite.client.get_workflow_handle(handle.id), worker.identity)
                worker.kill()
                kill_points[point] += 1
            fleet.product_worker()
            await suite.wait_for_compile()
        judged = await suite.judge(engine)
    kills = sum(kill_points.values())
    outcome.runs = 1
    outcome.seconds = time.monotonic() - started
    outcome.injected = f"{kills} SIGKILLs of the worker process, {len(fleet.spawned)} workers in all"
    outcome.identical = "yes" if judged.diff.identical else "no"
    outcome.rows_lost, outcome.rows_duplicated = judged.diff.lost, judged.diff.duplicated
    outcome.llm_calls_wasted = judged.wasted_by_retries()
    outcome.note("the worker was killed while running: "
                 + "; ".join(f"{point} ({count} {'kill' if count == 1 else 'kills'})"
                             for point, count in kill_points.most_common()))
    outcome.note(f"Temporal retried: {judged.history.describe_retries()}; "
                 f"{judged.history.workflow_task_timeouts} workflow tasks timed out with their worker")
    outcome.note(f"wiki vs reference: {judged.diff.describe()}; ledger: {len(judged.ledger)} runs "
                 f"({', '.join(judged.statuses)}), {judged.llm_calls} model calls counted "
                 f"(reference {reference.llm_calls})")
    passed = [
        outcome.check(kills >= 20, f"only {kills} kills landed before the compile finished"),
        outcome.check(judged.succeeded, f"the compile did not succeed: {judged.statuses}"),
        outcome.check(judged.diff.identical, "the wiki differs from the reference"),
        outcome.check(judged.isolated, f"rows cross scopes: {judged.breaches}"),
    ]
    outcome.passed = all(passed)
    outcome.outcome = (f"compile completed after {kills} kills; wiki identical to the reference"
                       if outcome.passed else "; ".join(outcome.failures))
    return outcome
