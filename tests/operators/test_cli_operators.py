"""The operator commands of the `wiki` CLI against the real Postgres and Temporal dev server: compile,
status (and --watch), jobs, resume (one scope and --all-failed), rebuild, lint and the schedule, with
their bad arguments. A worker runs in the test's event loop; the CLI runs in a thread, as a user would
run it in another process."""

from __future__ import annotations

import asyncio
import json

import pytest
from temporalio import activity
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from app.retain import retain_and_signal
from app.worker import WORKFLOWS, activities_for
from domain import errors
from messages.compile import PlanBatchInput, PlanBatchResult, compile_workflow_id
from runtime.settings import Settings
from tests.compile.helpers import ledger, running_worker, sample_memories
from tests.golden.dump import dump_scope, first_difference
from tests.operators import helpers as db
from tests.operators.cli import one_error_line, scope, wiki

POLL = 0.1  # seconds between checks of a condition the test waits for


async def retain(engine, tenant: str, count: int) -> None:
    await retain_and_signal(engine, tenant, "alice", sample_memories(count), client=None)


async def test_compile_then_status_and_jobs(settings, client, engine):
    await retain(engine, "ops", 20)
    async with running_worker(client, engine, settings):
        compiled = await wiki("compile", *scope("ops"))
        assert compiled.exit_code == 0, compiled.output
        assert "Compile metrics" in compiled.stdout and "records_read" in compiled.stdout

        status = await wiki("status", *scope("ops"), "--json")
        assert status.exit_code == 0, status.output
        state = json.loads(status.stdout)
        assert state["running"] is False and state["progress"] is None
        assert (state["latest_run"]["status"], state["memories"], state["not_compiled"]) == ("succeeded", 20, 0)
        assert state["latest_run"]["metrics"]["records_read"] == 20

        text = await wiki("status", *scope("ops"))
        assert "Latest compile run (of 1)" in text.stdout and "succeeded" in text.stdout
        watched = await wiki("status", *scope("ops"), "--watch")
        assert watched.exit_code == 0 and "no compile is running for ops/alice" in watched.stdout

    jobs = await wiki("jobs", "--tenant", "ops", "--json")
    assert jobs.exit_code == 0, jobs.output
    rows = json.loads(jobs.stdout)
    assert [(r["kind"], r["tenant"], r["trigger"], r["status"]) for r in rows] == [
        ("compile", "ops", "admin", "succeeded")]
    assert "ops/alice" in (await wiki("jobs")).stdout
    assert "no ledger rows match" in (await wiki("jobs", "--status", "failed")).stdout
    assert json.loads((await wiki("jobs", "--tenant", "nobody", "--json")).stdout) == []


async def test_status_watch_follows_a_compile_until_it_ends(settings, client, engine):
    await retain(engine, "watch", 40)
    slow = settings.model_copy(update={"scripted_latency_ms": 150})
    async with running_worker(client, engine, slow):
        started = await wiki("compile", *scope("watch"), "--no-wait")
        assert started.exit_code == 0, started.output
        watched = await wiki("status", *scope("watch"), "--watch")
    assert watched.exit_code == 0, watched.output
    assert "no compile is running" not in watched.stdout
    assert "40/40 memories" in watched.stdout
    assert "Latest compile run" in watched.stdout and "succeeded" in watched.stdout
    assert "not compiled yet: 0" in watched.stdout


class RejectingPlanner:
    """llm.plan_batch that plans `good_calls` batches for real, then fails as a rejected request would."""

    MESSAGE = "the model rejected the request: invalid x-api-key"

    def __init__(self, real, good_calls: int) -> None:
        self._real = real
        self._left = good_calls

    @activity.defn(name="llm.plan_batch")
    async def plan_batch(self, request: PlanBatchInput) -> PlanBatchResult:
        if self._left == 0:
            raise ApplicationError(self.MESSAGE, type=errors.LLM_REJECTED, non_retryable=True)
        self._left -= 1
        return await self._real(request)


def worker_with_rejecting_planner(client: Client, engine, settings: Settings, good_calls: int) -> Worker:
    activities = activities_for(engine, settings)
    real = next(a for a in activities if a.__name__ == "plan_batch")
    planner = RejectingPlanner(real, good_calls)
    return Worker(client, task_queue=settings.task_queue, workflows=WORKFLOWS,
                  activities=[a for a in activities if a is not real] + [planner.plan_batch])


async def test_resume_finishes_a_failed_compile_from_the_cursor(settings, client, engine):
    await retain(engine, "fail", 30)  # three batches of ten
    async with worker_with_rejecting_planner(client, engine, settings, good_calls=1):
        failed = await wiki("compile", *scope("fail"))
    one_error_line(failed, 1, f"compile failed: {RejectingPlanner.MESSAGE}")
    with pytest.raises(WorkflowFailureError) as failure:
        await client.get_workflow_handle("compile:fail:alice").result()
    assert failure.value.cause.message == RejectingPlanner.MESSAGE  # what the Temporal UI shows
    assert failure.value.cause.type == "CompileFailed"
    status = await wiki("status", *scope("fail"))
    assert f"error: {RejectingPlanner.MESSAGE}" in status.stdout and "not compiled yet: 20" in status.stdout

    async with running_worker(client, engine, settings):
        resumed = await wiki("resume", *scope("fail"))
        assert resumed.exit_code == 0, resumed.output
        assert "compile resumed from the stored cursor: workflow compile:fail:alice" in resumed.stdout
        again = await wiki("resume", *scope("fail"))
    one_error_line(again, 1, "the latest compile of fail/alice completed: nothing to resume")

    rows = await ledger(engine, "fail", "alice")
    assert [(r["trigger"], r["status"]) for r in rows] == [("admin", "failed"), ("resume", "succeeded")]
    assert rows[0]["error"] == RejectingPlanner.MESSAGE
    # The failed run committed its first batch; the resumed run read only the other twenty.
    assert [r["metrics"]["records_read"] for r in rows] == [10, 20]
    cursor = await db.rows(engine, "SELECT count(*) AS n FROM wiki_compile_plans WHERE tenant_id = 'fail'")
    assert cursor[0].n == 0  # every staged plan was applied and cleaned up


async def _visible(client: Client, query: str) -> None:
    for _ in range(200):
        if [w async for w in client.list_workflows(query)]:
            return
        await asyncio.sleep(POLL)
    raise AssertionError(f"no workflow matched {query}")


async def test_resume_all_failed_finds_scopes_in_the_ledger_and_in_temporal(settings, client, engine):
    await retain(engine, "killed", 10)
    await retain(engine, "forgotten", 10)
    await retain(engine, "fine", 10)
    # A compile terminated before any worker ran it: Temporal knows it, the ledger does not.
    start = await wiki("compile", *scope("killed"), "--no-wait")
    assert start.exit_code == 0, start.output
    await client.get_workflow_handle("compile:killed:alice").terminate("operator test")
    await _visible(client, f"WorkflowId = 'compile:killed:alice' AND ExecutionStatus = 'Terminated' "
                           f"AND TaskQueue = '{settings.task_queue}'")
    # A run whose ledger row says it failed, long enough ago that Temporal no longer has it.
    await db.ledger_row(engine, status="failed", days_old=3, tenant="forgotten", owner="alice")
    await db.ledger_row(engine, status="succeeded", days_old=3, tenant="fine", owner="alice")

    async with running_worker(client, engine, settings):
        resumed = await wiki("resume", "--all-failed")
        assert resumed.exit_code == 0, resumed.output
        assert "resumed forgotten/alice" in resumed.stdout and "resumed killed/alice" in resumed.stdout
        assert "fine/alice" not in resumed.stdout
        for tenant in ("killed", "forgotten"):
            await client.get_workflow_handle(compile_workflow_id(tenant, "alice")).result()
    for tenant in ("killed", "forgotten"):
        rows = await ledger(engine, tenant, "alice")
        assert rows[-1]["trigger"] == "resume" and rows[-1]["status"] == "succeeded"
        assert sum(r["metrics"].get("records_read", 0) for r in rows) == 10


async def test_resume_refuses_while_a_compile_runs_and_when_nothing_ran(settings, client, engine):
    await retain(engine, "busy", 5)
    await wiki("compile", *scope("busy"), "--no-wait")  # no worker: it stays running
    try:
        busy = await wiki("resume", *scope("busy"))
        one_error_line(busy, 1, "the compile of busy/alice is running (compile:busy:alice): nothing to resume")
        rebuild = await wiki("rebuild", *scope("busy"), "--yes")
        one_error_line(rebuild, 1, "the compile of busy/alice is running")
    finally:
        await client.get_workflow_handle("compile:busy:alice").terminate("test over")
    never = await wiki("resume", *scope("never"))
    one_error_line(never, 1, "no compile has run for never/alice: nothing to resume")


async def test_rebuild_asks_first_then_rebuilds_the_same_wiki(settings, client, engine):
    await retain(engine, "rb", 30)
    async with running_worker(client, engine, settings):
        assert (await wiki("compile", *scope("rb"))).exit_code == 0
        before = await dump_scope(engine, "rb", "alice")
        pages = len(before["pages"])
        mentions = len(before["mentions"])
        declined = await wiki("rebuild", *scope("rb"), stdin="n\n")
        one_error_line(declined, 1, "cancelled: nothing was changed")
        no_terminal = await wiki("rebuild", *scope("rb"))
        one_error_line(no_terminal, 1, "cancelled: nothing was changed")
        rebuilt = await wiki("rebuild", *scope("rb"), "--yes")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert f"removed {pages} pages and {mentions} unresolved mentions" in rebuilt.stdout
    # Every row the first compile wrote, and nothing else: ids, bodies, sources, links, mentions.
    after = await dump_scope(engine, "rb", "alice")
    assert first_difference(before, after) is None, first_difference(before, after)
    assert all(row["status"] == "active" for row in after["pages"])
    rows = await ledger(engine, "rb", "alice")
    assert [r["trigger"] for r in rows] == ["admin", "rebuild"]
    assert rows[-1]["metrics"]["records_read"] == 30


async def test_lint_now_and_the_schedule_commands(settings, client, engine):
    huge = await db.page(engine, "lintcli", "alice", "huge", body="z" * 8500)
    await db.section(engine, huge, "notes", "- Cites nothing.", 1)
    async with running_worker(client, engine, settings):
        report = await wiki("lint", "--json")
        assert report.exit_code == 0, report.output
        parsed = json.loads(report.stdout)
        assert parsed["ok"] is True and parsed["trigger"] == "admin" and parsed["totals"]["oversize_pages"] == 1
        [scope_report] = parsed["scopes"]
        assert scope_report["problem_pages"] == [{"page": "entity/huge", "check": "unsourced_sections", "count": 1}]
        printed = await wiki("lint")
        assert "1 oversize pages" in printed.stdout and "lintcli/alice" in printed.stdout
        # The findings table names the page with the provenance problem beside the other checks' findings.
        assert "Findings" in printed.stdout and "entity/huge" in printed.stdout
        assert "sections citing nothing" in printed.stdout

    missing = await wiki("schedule", "show")
    one_error_line(missing, 1, "no schedule wiki-lint is installed")
    try:
        created = await wiki("schedule", "install")
        assert created.exit_code == 0 and "lint schedule created" in created.stdout
        assert "daily at 02:00 UTC" in created.stdout and "SKIP" in created.stdout
        updated = await wiki("schedule", "install", "--hour", "4")
        assert "lint schedule updated" in updated.stdout and "daily at 04:00 UTC" in updated.stdout
        assert (await wiki("schedule", "pause")).exit_code == 0
        shown = json.loads((await wiki("schedule", "show", "--json")).stdout)
        assert (shown["hours_utc"], shown["paused"], shown["task_queue"]) == ([4], True, settings.task_queue)
        assert (await wiki("schedule", "unpause")).exit_code == 0
        assert json.loads((await wiki("schedule", "show", "--json")).stdout)["paused"] is False
    finally:
        deleted = await wiki("schedule", "delete")
    assert deleted.exit_code == 0 and "lint schedule deleted" in deleted.stdout
    assert (await wiki("schedule", "show")).exit_code == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["jobs", "--status", "bogus"], "status must be one of running, succeeded"),
        (["jobs", "--limit", "0"], "limit must be between 1 and 1000 (got 0)"),
        (["jobs", "--tenant", "a b"], "tenant must be 1-128 characters"),
        (["resume"], "give --tenant and --owner (or --all-failed)"),
        (["resume", "--all-failed", "--tenant", "t"], "give either --all-failed or --tenant and --owner"),
        (["schedule", "install", "--hour", "24"], "hour must be between 0 and 23 (got 24)"),
        (["status", "--tenant", "t/x", "--owner", "o"], "tenant must be 1-128 characters"),
        (["rebuild", "--tenant", "t", "--owner", "o o", "--yes"], "owner must be 1-128 characters"),
    ],
)
async def test_bad_arguments_exit_2_with_one_line(settings, args, message):
    one_error_line(await wiki(*args), 2, message)
