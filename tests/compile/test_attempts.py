"""The compile's activity attempts that did not complete: recorded by the worker's interceptor, counted
in the ledger, named by `wiki status` and the lint.

- An attempt that fails, one that Temporal times out (its heartbeats stopped) and one the workflow
  cancels are each recorded once, with their outcome; a later attempt that finds earlier ones
  unrecorded records them as timed out, and never counts one twice.
- A compile whose section write fails once, through the worker `build_worker` composes, ends with
  `attempts_failed` 1 and nothing timed out or cancelled in its ledger row.
- The lint counts and names a step of a running compile retried three times or more, and nothing of
  a finished run, an old row or a step retried twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker
from temporalio.workflow import ActivityCancellationType

from activities.attempts import AttemptLedger
from activities.common import compile_step
from app.scope_report import redone_work
from domain.errors import ModelUnavailable
from domain.lint import LintChecksInput
from messages.compile import RunRecord, Scope, compile_workflow_id
from planners.scripted.planner import ScriptedPlanner
from store.compile_attempts import AttemptRecord, attempt_counts, record_attempt, record_unreported_attempts
from store.compile_runs import record_run_finished, record_run_started
from store.lint_checks import check_scopes, named_findings
from tests.compile.helpers import compile_scope, ledger, retain_sample, running_worker
from tests.compile.helpers import test_settings as settings_for
from tests.session_replay import PROBE_QUEUE_PREFIX

HEARTBEAT_TIMEOUT = timedelta(seconds=1)


class Steps:
    """An activity that fails its first attempt, goes silent past its heartbeat timeout on its second,
    and completes on its third; and one that heartbeats until the workflow cancels it."""

    def __init__(self) -> None:
        self.silent_attempt_ended = asyncio.Event()
        self.long_started = asyncio.Event()

    @activity.defn(name="test.flaky")
    async def flaky(self, request: str) -> int:
        attempt = activity.info().attempt
        if attempt == 1:
            raise ApplicationError("first attempt fails", type="Boom")
        if attempt == 2:
            try:
                await asyncio.sleep(30 * HEARTBEAT_TIMEOUT.total_seconds())  # no heartbeat: timed out
            finally:
                self.silent_attempt_ended.set()
        return attempt

    @activity.defn(name="test.long")
    @compile_step
    async def long(self, request: str) -> None:
        self.long_started.set()
        await asyncio.sleep(60)  # until cancelled


@workflow.defn(name="CompileWorkflow", sandboxed=False)  # the interceptor records compile workflows only
class AttemptsCheck:
    def __init__(self) -> None:
        self._cancel = False

    @workflow.signal
    def cancel_long(self) -> None:
        self._cancel = True

    @workflow.run
    async def run(self) -> int:
        attempt = await workflow.execute_activity(
            "test.flaky", "x", start_to_close_timeout=timedelta(seconds=60), heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=100), maximum_attempts=3))
        long = workflow.start_activity("test.long", "y", start_to_close_timeout=timedelta(seconds=60),
                                       heartbeat_timeout=timedelta(seconds=10), retry_policy=RetryPolicy(maximum_attempts=1),
                                       cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        await workflow.wait_condition(lambda: self._cancel)  # the test signals once the activity runs
        long.cancel()
        with contextlib.suppress(BaseException):  # the cancellation it asked for
            await long
        return attempt


async def _rows(engine: AsyncEngine, run_id: str) -> list[tuple[str, int, str, str]]:
    async with engine.connect() as conn:
        rows = await conn.execute(text(
            "SELECT activity_type, attempt, outcome, error_type FROM wiki_compile_attempts WHERE run_id = :run "
            "ORDER BY activity_type, attempt"), {"run": run_id})
        return [tuple(row) for row in rows]


async def test_failed_timed_out_and_cancelled_attempts_are_recorded_once_each(client: Client, engine: AsyncEngine):
    steps = Steps()
    queue = f"{PROBE_QUEUE_PREFIX}{uuid.uuid4()}"  # a probe: the session's replay leaves it out
    workflow_id = compile_workflow_id("attempts", f"o-{uuid.uuid4().hex[:8]}")
    async with Worker(client, task_queue=queue, workflows=[AttemptsCheck], activities=[steps.flaky, steps.long],
                      interceptors=[AttemptLedger(engine)]):
        handle = await client.start_workflow(AttemptsCheck.run, id=workflow_id, task_queue=queue)
        await asyncio.wait_for(steps.long_started.wait(), 60)
        await handle.signal(AttemptsCheck.cancel_long)
        assert await handle.result() == 3
        await asyncio.wait_for(steps.silent_attempt_ended.wait(), 30)  # the timed-out attempt heard of it
        run_id = handle.result_run_id
        assert run_id is not None

        async def recorded() -> list:
            rows = await _rows(engine, run_id)
            return rows if len(rows) == 3 else []

        rows = await _poll(recorded)
    # The second attempt's timeout is recorded by its own worker once it hears of it, or by the third attempt
    # finding it unrecorded ("no outcome reported"), whichever comes first: once either way.
    assert [row[:3] for row in rows] == [("test.flaky", 1, "failed"), ("test.flaky", 2, "timed_out"),
                                         ("test.long", 1, "cancelled")]
    assert rows[0][3] == "Boom"
    scope = Scope(tenant="attempts", owner=workflow_id.rsplit(":", 1)[1])
    async with engine.begin() as conn:
        assert await attempt_counts(conn, scope, run_id) == {"timed_out": 1, "cancelled": 1, "failed": 1}
        # The third attempt found nothing missing; a later look for gaps adds nothing either.
        await record_unreported_attempts(conn, AttemptRecord(scope=scope, workflow_id=workflow_id, run_id=run_id,
                                                             activity_id="1", activity_type="test.flaky", attempt=3))
    assert len(await _rows(engine, run_id)) == 3


async def _poll(read, timeout: float = 30.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await read()
        if value or asyncio.get_running_loop().time() > deadline:
            return value
        await asyncio.sleep(0.1)


async def test_attempts_a_worker_never_reported_are_recorded_as_timed_out(engine: AsyncEngine):
    scope = Scope(tenant="gap", owner="o")
    record = AttemptRecord(scope=scope, workflow_id=compile_workflow_id("gap", "o"), run_id="run-gap",
                           activity_id="7", activity_type="llm.write_section", attempt=4, step="writing a section")
    async with engine.begin() as conn:
        await record_attempt(conn, replace(record, attempt=2), "failed", "LlmUnavailable")
        await record_unreported_attempts(conn, record)  # attempts 1 and 3 left nothing: timed out
        await record_unreported_attempts(conn, record)  # again: nothing more
        assert await attempt_counts(conn, scope, "run-gap") == {"timed_out": 2, "cancelled": 0, "failed": 1}


class FailingOnce:
    """The scripted planner, whose first section write fails as an unavailable model would."""

    reads_possible_children = ScriptedPlanner.reads_possible_children
    rewrites_from_sources = ScriptedPlanner.rewrites_from_sources

    def __init__(self) -> None:
        self._real = ScriptedPlanner()
        self.failed = False

    def __getattr__(self, name: str):
        return getattr(self._real, name)

    async def write_section(self, task, cited, model_id):
        if not self.failed:
            self.failed = True
            raise ModelUnavailable("the model is unavailable (first write only)")
        return await self._real.write_section(task, cited, model_id)


async def test_a_compile_counts_its_redone_attempts_in_its_ledger_row(client: Client, engine: AsyncEngine):
    # Three batches: the later ones rewrite sections the first made (the writer's work).
    settings = settings_for(WIKI_AGGREGATION_PASS_ENABLED=False, WIKI_RECORD_PAGE_SIZE=10)
    await retain_sample(engine, "redo", "o", 30)
    planner = FailingOnce()
    async with running_worker(client, engine, settings, planner=planner):
        await compile_scope(client, settings, "redo", "o")
    assert planner.failed
    rows = await ledger(engine, "redo", "o")
    assert [(row["metrics"]["attempts_failed"], row["metrics"]["attempts_timed_out"],
             row["metrics"]["attempts_cancelled"]) for row in rows] == [(1, 0, 0)]
    async with engine.connect() as conn:
        run_id = (await conn.execute(text("SELECT run_id FROM wiki_compile_jobs WHERE tenant_id = 'redo'"))).scalar_one()
        redone = await redone_work(conn, "redo", "o", run_id)
    assert (redone.failed, redone.timed_out, redone.retrying) == (1, 0, [])


@pytest.mark.parametrize("attempts, finished, hours_ago, named", [
    (3, False, 0, True),   # a running compile's step on its third failed attempt
    (5, False, 2, True),
    (2, False, 0, False),  # twice is not yet retrying
    (4, True, 0, False),   # the run ended: nothing is retrying now
    (4, False, 30, False),  # nothing recent
])
async def test_the_lint_names_a_scope_whose_compile_retries_one_step(engine: AsyncEngine, attempts: int,
                                                                    finished: bool, hours_ago: int, named: bool):
    tenant, owner = "lint-retry", f"o{attempts}{int(finished)}{hours_ago}"
    scope = Scope(tenant=tenant, owner=owner)
    run_id = f"run-{uuid.uuid4()}"
    record = AttemptRecord(scope=scope, workflow_id=compile_workflow_id(tenant, owner), run_id=run_id,
                           activity_id="12", activity_type="llm.write_section", attempt=attempts,
                           step=f"writing a section of {tenant}/{owner} (s3)")
    async with engine.begin() as conn:
        await record_run_started(conn, RunRecord(scope=scope, workflow_id=record.workflow_id, run_id=run_id,
                                                 trigger="admin", model_id="claude-haiku-4-5"))
        await record_unreported_attempts(conn, record)
        await record_attempt(conn, record, "timed_out")
        await conn.execute(text("UPDATE wiki_compile_attempts SET recorded_at = now() - make_interval(hours => :h) "
                                "WHERE run_id = :run"), {"h": hours_ago, "run": run_id})
        if finished:
            await record_run_finished(conn, scope, run_id, "succeeded", {}, None)
    checks = await check_scopes(engine, LintChecksInput())
    counted = [c.count for c in checks.counts if c.check == "retrying_steps" and (c.tenant, c.owner) == (tenant, owner)]
    findings = [f for f in await named_findings(engine, tenant, owner) if f.check == "retrying_steps"]
    if named:
        assert counted == [1]
        assert [f.subject for f in findings] == [["llm.write_section"]]
        assert findings[0].detail.startswith(f"{record.step}: attempt {attempts}, the last timed out at ")
    else:
        assert counted == [] and findings == []
