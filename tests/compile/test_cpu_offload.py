"""A CPU-bound step cannot starve another activity's heartbeat.

Two activities run at once on one worker, as a compile's section writes do: one is the scripted
planner's section writer, its computation replaced by a loop that holds the interpreter (pure
bytecode, never awaiting) until the other activity has finished; the other must outlive three of its
heartbeat timeouts, kept alive only by the heartbeats the worker's event loop sends for it. Neither
is retried (one attempt each). With the computation on the CPU pool (planners/cpu_pool.py) the loop
stays free: the second activity completes on its first attempt. Run on the loop instead (the control
case), the computation blocks the heartbeats and Temporal times the second activity out: the
property the first case checks is one a regression would break, not one that holds anyway.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from datetime import timedelta

import pytest
from temporalio import activity, workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import TimeoutError as TemporalTimeoutError
from temporalio.exceptions import TimeoutType
from temporalio.worker import Worker

from activities.common import compile_step
from app.worker import HEARTBEAT_SEND_INTERVAL
from domain.resolved_plan import SectionTask
from planners.scripted import planner as scripted_planner
from planners.scripted.planner import ScriptedPlanner

HEARTBEAT_TIMEOUT = timedelta(seconds=2)
# The second activity's work: longer than its heartbeat timeout, so only heartbeats keep it alive.
BEATING_SECONDS = 3 * HEARTBEAT_TIMEOUT.total_seconds()
# The spinning step's bound, so a starved run ends (failing) instead of hanging.
SPIN_CAP_SECONDS = BEATING_SECONDS + 3 * HEARTBEAT_TIMEOUT.total_seconds()
NO_RETRY = RetryPolicy(maximum_attempts=1)
TASK = SectionTask(page_id=str(uuid.uuid4()), page_type="entity", page_title="Casa Sol", slug="notes",
                   heading="Notes", proposed_body="- a line", source_refs=[])


class Spinner:
    """Stands in for the scripted writer's computation: busy until released (or its cap)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.released = threading.Event()

    def rewrite(self, task: SectionTask, cited: list) -> str:
        self.started.set()
        deadline = time.monotonic() + SPIN_CAP_SECONDS
        turns = 0
        while not self.released.is_set() and time.monotonic() < deadline:
            turns += 1
        return f"- rewritten after {turns} turns"


class Steps:
    def __init__(self, spinner: Spinner) -> None:
        self._spinner = spinner

    @activity.defn(name="test.write_section")
    @compile_step
    async def write(self, request: str) -> str:
        reply = await ScriptedPlanner().write_section(TASK, [], "claude-haiku-4-5")
        return reply.body

    @activity.defn(name="test.beating_step")
    @compile_step
    async def beat(self, request: str) -> int:
        # Starts its work once the computation holds the interpreter, then outlives its heartbeat timeout.
        await asyncio.to_thread(self._spinner.started.wait, SPIN_CAP_SECONDS)
        await asyncio.sleep(BEATING_SECONDS)
        self._spinner.released.set()
        return activity.info().attempt


@workflow.defn(name="CpuOffloadCheck", sandboxed=False)
class CpuOffloadCheck:
    @workflow.run
    async def run(self) -> int:
        options = {"start_to_close_timeout": timedelta(seconds=60), "heartbeat_timeout": HEARTBEAT_TIMEOUT,
                   "retry_policy": NO_RETRY}
        _, attempt = await asyncio.gather(
            workflow.execute_activity("test.write_section", "write", **options),
            workflow.execute_activity("test.beating_step", "beat", **options))
        return attempt


async def _check(client: Client, spinner: Spinner) -> int:
    steps = Steps(spinner)
    queue = f"tq-{uuid.uuid4()}"
    async with Worker(client, task_queue=queue, workflows=[CpuOffloadCheck], activities=[steps.write, steps.beat],
                      max_heartbeat_throttle_interval=HEARTBEAT_SEND_INTERVAL):
        return await client.execute_workflow(CpuOffloadCheck.run, id=f"cpu-offload-{uuid.uuid4()}", task_queue=queue)


async def test_a_step_computing_on_the_cpu_pool_leaves_the_other_activities_heartbeating(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    spinner = Spinner()
    monkeypatch.setattr(scripted_planner, "scripted_rewrite_section", spinner.rewrite)
    assert await _check(client, spinner) == 1  # the first attempt completed: never timed out
    assert spinner.released.is_set()


async def test_the_same_step_computing_on_the_event_loop_starves_them(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    spinner = Spinner()
    monkeypatch.setattr(scripted_planner, "scripted_rewrite_section", spinner.rewrite)

    async def on_the_loop(fn, *args, **kwargs):
        return fn(*args, **kwargs)

    monkeypatch.setattr(scripted_planner, "off_loop", on_the_loop)
    with pytest.raises(WorkflowFailureError) as failed:
        await _check(client, spinner)
    cause: BaseException | None = failed.value.cause
    while cause is not None and not isinstance(cause, TemporalTimeoutError):
        cause = cause.cause if hasattr(cause, "cause") else None
    assert isinstance(cause, TemporalTimeoutError) and cause.type == TimeoutType.HEARTBEAT

