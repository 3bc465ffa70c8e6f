"""Operator actions over the Temporal client and the database: the nightly lint schedule, lint now,
resuming failed compiles and rebuilding a scope. The CLI calls these; tests call them directly too.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryReverseRequest
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionExecutionStartWorkflow,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleCalendarSpec,
    ScheduleHandle,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleRange,
    ScheduleSpec,
    ScheduleState,
    ScheduleUpdate,
    ScheduleUpdateInput,
    WorkflowExecutionStatus,
    WorkflowHandle,
)
from temporalio.common import Priority, SearchAttributePair, TypedSearchAttributes
from temporalio.service import RPCError, RPCStatusCode

from app.scope_report import latest_compile_status, scopes_by_latest_status
from domain.lint import ALL_SCOPES, NAMED_SCOPES, LintFinding, LintInput, LintReport, LintTrigger
from messages.compile import compile_workflow_id
from runtime.priority import lint_priority
from runtime.search_attributes import WIKI_OWNER, WIKI_TENANT, WIKI_TRIGGER
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.corrections import is_paused
from store.lint_checks import named_findings
from store.wiki_admin import (
    ScopeReset,
    close_ledger_run,
    close_open_ledger_rows,
    open_ledger_runs,
    reset_scope_for_rebuild,
)

LINT_SCHEDULE_ID = "wiki-lint"
# The schedule appends "-<scheduled time>" to this for each run, so runs are found by type, not id.
LINT_WORKFLOW_ID = "wiki-lint"
DEFAULT_LINT_HOUR = 2
# A night missed while the server was down is still run if it comes back within this window.
LINT_CATCHUP_WINDOW = timedelta(hours=2)
LINT_RUN_TIMEOUT = timedelta(hours=1)

# How a compile's latest run ended, as Temporal reports it, and as the ledger spells it.
_RESUMABLE = {
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.TIMED_OUT: "timed_out",
    WorkflowExecutionStatus.CANCELED: "cancelled",
}
# A `running` ledger row whose workflow is not running is a run killed before it could close its row.
_RESUMABLE_LEDGER = ["failed", "terminated", "timed_out", "cancelled", "running"]
_RESUMABLE_QUERY = ("WorkflowType = 'CompileWorkflow' AND TaskQueue = '{queue}' AND (ExecutionStatus = 'Failed' "
                    "OR ExecutionStatus = 'Terminated' OR ExecutionStatus = 'TimedOut' "
                    "OR ExecutionStatus = 'Canceled')")


class OperationRefused(Exception):
    """The action does not fit the current state; the message says why and what to do instead."""


# ------------------------------------------------------------------------------------------- lint


def _lint_search_attributes(trigger: LintTrigger) -> TypedSearchAttributes:
    # Lint covers every scope: "*" keeps `WikiTenant='*'` a way to find lint runs next to compiles.
    return TypedSearchAttributes([SearchAttributePair(WIKI_TENANT, ALL_SCOPES),
                                  SearchAttributePair(WIKI_OWNER, ALL_SCOPES),
                                  SearchAttributePair(WIKI_TRIGGER, trigger)])


def lint_schedule(settings: Settings, hour: int = DEFAULT_LINT_HOUR) -> Schedule:
    return Schedule(
        action=ScheduleActionStartWorkflow(
            "LintWorkflow", LintInput(trigger="schedule"), id=LINT_WORKFLOW_ID, task_queue=settings.task_queue,
            execution_timeout=LINT_RUN_TIMEOUT, typed_search_attributes=_lint_search_attributes("schedule"),
            static_summary="Nightly wiki lint of every scope",
            priority=lint_priority(settings) or Priority.default,
        ),
        spec=ScheduleSpec(calendars=[ScheduleCalendarSpec(hour=[ScheduleRange(hour)], minute=[ScheduleRange(0)])],
                          time_zone_name="UTC"),
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=LINT_CATCHUP_WINDOW),
        state=ScheduleState(note=_schedule_note(hour)),
    )


def _schedule_note(hour: int) -> str:
    return f"wiki lint, daily at {hour:02d}:00 UTC"


async def install_lint_schedule(client: Client, settings: Settings, *, hour: int = DEFAULT_LINT_HOUR,
                                schedule_id: str = LINT_SCHEDULE_ID) -> str:
    """Create the schedule, or update it in place: "created" or "updated". A paused schedule stays paused."""
    schedule = lint_schedule(settings, hour)
    try:
        await client.create_schedule(schedule_id, schedule)
        return "created"
    except ScheduleAlreadyRunningError:
        pass

    def keep_state(current: ScheduleUpdateInput) -> ScheduleUpdate:
        # Paused stays paused, with the reason it was paused; an active schedule describes its new time.
        state = current.description.schedule.state
        note = state.note if state.paused else schedule.state.note
        return ScheduleUpdate(schedule=dataclasses.replace(schedule, state=dataclasses.replace(state, note=note)))

    await client.get_schedule_handle(schedule_id).update(keep_state)
    return "updated"


class ScheduledRun(BaseModel):
    workflow_id: str
    scheduled_at: datetime
    started_at: datetime


class ScheduleView(BaseModel):
    id: str
    hours_utc: list[int]
    minutes: list[int]
    time_zone: str | None
    overlap: str
    catchup_window_seconds: float | None
    task_queue: str | None
    paused: bool
    note: str | None
    next_runs: list[datetime]
    recent_runs: list[ScheduledRun]


async def _existing_schedule(client: Client, schedule_id: str) -> ScheduleHandle:
    handle = client.get_schedule_handle(schedule_id)
    try:
        await handle.describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise OperationRefused(f"no schedule {schedule_id} is installed; `wiki schedule install` creates it") \
                from None
        raise
    return handle


def _range_values(ranges) -> list[int]:
    return [value for r in ranges for value in range(r.start, max(r.start, r.end) + 1, r.step or 1)]


async def describe_lint_schedule(client: Client, schedule_id: str = LINT_SCHEDULE_ID) -> ScheduleView:
    description = await (await _existing_schedule(client, schedule_id)).describe()
    schedule = description.schedule
    calendars = schedule.spec.calendars
    action = schedule.action
    return ScheduleView(
        id=schedule_id,
        hours_utc=[h for c in calendars for h in _range_values(c.hour)],
        minutes=[m for c in calendars for m in _range_values(c.minute)],
        time_zone=schedule.spec.time_zone_name,
        overlap=schedule.policy.overlap.name,
        catchup_window_seconds=(schedule.policy.catchup_window.total_seconds()
                                if schedule.policy.catchup_window else None),
        task_queue=action.task_queue if isinstance(action, ScheduleActionStartWorkflow) else None,
        paused=schedule.state.paused,
        note=schedule.state.note,
        # The server lists next times even while paused; none of them will run.
        next_runs=[] if schedule.state.paused else list(description.info.next_action_times[:3]),
        recent_runs=[ScheduledRun(workflow_id=run.action.workflow_id, scheduled_at=run.scheduled_at,
                                  started_at=run.started_at) for run in description.info.recent_actions
                     if isinstance(run.action, ScheduleActionExecutionStartWorkflow)],
    )


async def set_lint_schedule_paused(client: Client, paused: bool, schedule_id: str = LINT_SCHEDULE_ID) -> None:
    handle = await _existing_schedule(client, schedule_id)
    if paused:
        await handle.pause(note="paused with `wiki schedule pause`")
    else:
        hours = [h for c in (await handle.describe()).schedule.spec.calendars for h in _range_values(c.hour)]
        await handle.unpause(note=_schedule_note(hours[0]) if len(hours) == 1 else "unpaused")


async def delete_lint_schedule(client: Client, schedule_id: str = LINT_SCHEDULE_ID) -> None:
    await (await _existing_schedule(client, schedule_id)).delete()


async def start_lint(client: Client, settings: Settings) -> WorkflowHandle:
    """A LintWorkflow run now, outside the schedule (trigger `admin`)."""
    return await client.start_workflow(
        "LintWorkflow", LintInput(trigger="admin"), id=f"{LINT_WORKFLOW_ID}-now-{uuid.uuid4().hex[:12]}",
        task_queue=settings.task_queue, execution_timeout=LINT_RUN_TIMEOUT, result_type=LintReport,
        search_attributes=_lint_search_attributes("admin"), static_summary="Wiki lint of every scope, run now",
        priority=lint_priority(settings) or Priority.default,
    )


# ------------------------------------------------------------------------------------------- resume


async def lint_checked_counts(engine: AsyncEngine) -> tuple[int, int]:
    """(scopes, active pages) the lint checks."""
    from store.lint_checks import checked_counts

    return await checked_counts(engine)


async def named_lint_findings(engine: AsyncEngine, report: LintReport) -> list[LintFinding]:
    """What the lint found, by name, in the first scopes its report lists (the report itself only counts)."""
    return [finding for scope in report.scopes[:NAMED_SCOPES]
            for finding in await named_findings(engine, scope.tenant, scope.owner)]


async def latest_run_status(client: Client, workflow_id: str) -> WorkflowExecutionStatus | None:
    """How the workflow's latest run stands; None when Temporal has no such workflow (or forgot it)."""
    try:
        return (await client.get_workflow_handle(workflow_id).describe()).status
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return None
        raise


def _refuse_if_running(status: WorkflowExecutionStatus | None, tenant: str, owner: str, advice: str) -> None:
    if status == WorkflowExecutionStatus.RUNNING:
        raise OperationRefused(
            f"the compile of {tenant}/{owner} is running ({compile_workflow_id(tenant, owner)}): {advice}; "
            f"follow it with `wiki status --tenant {tenant} --owner {owner} --watch`")


# Called once the action is known to fit the state, before anything changes (the CLI checks for a worker).
BeforeStart = Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


async def resume_scope(client: Client, engine: AsyncEngine, settings: Settings, tenant: str,
                       owner: str, *, before_start: BeforeStart = _nothing) -> WorkflowHandle:
    """Start a new compile run (trigger `resume`) after a failed, terminated, timed-out or cancelled one.

    The new run reads from the scope's cursor in Postgres, where the last committed batch left it, so
    nothing is lost and nothing is compiled twice.
    """
    workflow_id = compile_workflow_id(tenant, owner)
    status = await latest_run_status(client, workflow_id)
    _refuse_if_running(status, tenant, owner, "nothing to resume")
    if status is None:
        async with engine.connect() as conn:
            ledger_status = await latest_compile_status(conn, tenant, owner)
        if ledger_status is None:
            raise OperationRefused(f"no compile has run for {tenant}/{owner}: nothing to resume; "
                                   f"`wiki compile --tenant {tenant} --owner {owner}` starts one")
        if ledger_status not in _RESUMABLE_LEDGER:
            raise OperationRefused(f"the latest compile of {tenant}/{owner} {ledger_status}: nothing to resume")
        # Temporal no longer knows the run that left a row open; it surely ended without closing it.
        ended_as = "terminated"
    elif status not in _RESUMABLE:
        raise OperationRefused(
            f"the latest compile of {tenant}/{owner} completed: nothing to resume; "
            f"`wiki compile --tenant {tenant} --owner {owner}` compiles new memories now")
    else:
        ended_as = _RESUMABLE[status]
    await before_start()
    async with engine.begin() as conn:
        await close_open_ledger_rows(conn, tenant, owner, workflow_id, ended_as)
    # A resume also serves a forget or edit left pending (its wake-up failed, or a --no-compile retain).
    return await signal_compile(client, tenant, owner, trigger="resume", settings=settings, forget=True)


@dataclass
class ResumeOutcome:
    tenant: str
    owner: str
    workflow_id: str
    resumed: bool
    reason: str | None = None  # why a scope was left alone


async def resumable_scopes(client: Client, engine: AsyncEngine, settings: Settings) -> list[tuple[str, str]]:
    """Scopes whose latest compile may have ended badly: from the ledger, and from Temporal's visibility
    (which still knows runs whose ledger row was pruned or never written). resume_scope decides."""
    async with engine.connect() as conn:
        scopes = set(await scopes_by_latest_status(conn, _RESUMABLE_LEDGER))
    query = _RESUMABLE_QUERY.format(queue=settings.task_queue.replace("'", "''"))
    async for execution in client.list_workflows(query):
        attributes = execution.typed_search_attributes
        tenant, owner = attributes.get(WIKI_TENANT), attributes.get(WIKI_OWNER)
        if tenant and owner:
            scopes.add((tenant, owner))
    return sorted(scopes)


async def resume_all_failed(client: Client, engine: AsyncEngine, settings: Settings) -> list[ResumeOutcome]:
    outcomes = []
    for tenant, owner in await resumable_scopes(client, engine, settings):
        workflow_id = compile_workflow_id(tenant, owner)
        try:
            await resume_scope(client, engine, settings, tenant, owner)
            outcomes.append(ResumeOutcome(tenant, owner, workflow_id, resumed=True))
        except OperationRefused as refused:
            outcomes.append(ResumeOutcome(tenant, owner, workflow_id, resumed=False, reason=str(refused)))
    return outcomes


# ------------------------------------------------------------------------------------------- reconcile


async def _ended_because(client: Client, workflow_id: str, run_id: str) -> str | None:
    """The reason given to `temporal workflow terminate` (or cancel), from the run's last history event."""
    response = await client.workflow_service.get_workflow_execution_history_reverse(
        GetWorkflowExecutionHistoryReverseRequest(
            namespace=client.namespace, execution=WorkflowExecution(workflow_id=workflow_id, run_id=run_id),
            maximum_page_size=1))
    for event in response.history.events:
        if event.HasField("workflow_execution_terminated_event_attributes"):
            return event.workflow_execution_terminated_event_attributes.reason or None
    return None


async def reconcile_open_runs(client: Client, engine: AsyncEngine, tenant: str, owner: str) -> int:
    """Close the ledger rows of runs that ended outside the workflow, as Temporal reports them.

    A run that is terminated, times out or is cancelled never runs its own ending, so its row would
    say `running` for ever. Each open row is checked against its own run (by run id), so a run that
    started meanwhile is never touched; rows of runs Temporal no longer knows are left to `wiki resume`.
    """
    async with engine.connect() as conn:
        runs = await open_ledger_runs(conn, tenant, owner)
    closed = 0
    for workflow_id, run_id in runs:
        try:
            status = (await client.get_workflow_handle(workflow_id, run_id=run_id).describe()).status
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:
                continue
            raise
        if status not in _RESUMABLE:
            continue
        ended_as = _RESUMABLE[status]
        if ended_as == "terminated":
            reason = await _ended_because(client, workflow_id, run_id)
            why = "terminated outside the workflow" + (f": {reason}" if reason else "")
        else:
            why = f"{ended_as.replace('_', ' ')} before the run could record its end"
        async with engine.begin() as conn:
            closed += await close_ledger_run(conn, tenant, owner, run_id, ended_as, why)
    return closed


# ------------------------------------------------------------------------------------------- rebuild


async def rebuild_scope(client: Client, engine: AsyncEngine, settings: Settings, tenant: str,
                        owner: str, *, before_start: BeforeStart = _nothing) -> tuple[ScopeReset, WorkflowHandle]:
    """Empty the scope's wiki, rewind its cursor, and compile every memory again (trigger `rebuild`).

    The result is the wiki a first compile of the same memories writes, row for row.

    Refused while a compile runs: rewinding its cursor under it would fail its next batch.
    """
    _refuse_if_running(await latest_run_status(client, compile_workflow_id(tenant, owner)), tenant, owner,
                       "rebuild once it has ended")
    async with engine.connect() as conn:
        if await is_paused(conn, tenant, owner):
            raise OperationRefused(f"{tenant}/{owner} is paused: a rebuild would empty it and compile nothing; "
                                   f"`wiki scope resume --tenant {tenant} --owner {owner}` first")
    await before_start()
    async with engine.begin() as conn:
        reset = await reset_scope_for_rebuild(conn, tenant, owner)
    return reset, await signal_compile(client, tenant, owner, trigger="rebuild", settings=settings)
