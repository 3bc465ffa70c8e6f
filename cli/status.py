"""What the compiles are doing and did: `wiki status` (one scope, live or from the ledger), `wiki jobs`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer
from rich import box
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import WorkflowExecutionStatus
from temporalio.client import WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from app.operations import reconcile_open_runs
from app.scope_report import JobRow, RedoneWork, ledger_rows, list_jobs, memory_counts, redone_work
from cli.common import (
    EXIT_FAILURE,
    EXIT_USAGE,
    CliError,
    JsonOption,
    OwnerOption,
    TenantOption,
    database,
    handled,
    in_range,
    run,
    scope,
    temporal,
)
from cli.output import Col, WideOption, cost_text, out, print_json, print_workflow_location, table
from domain.memory import validate_scope_part
from domain.progress import progress_text, time_left_text
from messages.compile import Progress as CompileProgress
from messages.compile import compile_workflow_id
from runtime.settings import Settings, get_settings

PROGRESS_POLL_SECONDS = 0.5
# Without a worker the server holds a query until its deadline; status should not hang that long.
PROGRESS_QUERY_TIMEOUT = timedelta(seconds=5)

LEDGER_STATUSES = ("running", "succeeded", "failed", "continued", "cancelled", "terminated", "timed_out")
MAX_JOBS = 1000


async def progress_of(handle: WorkflowHandle) -> CompileProgress | None:
    try:
        return await handle.query("progress", result_type=CompileProgress, rpc_timeout=PROGRESS_QUERY_TIMEOUT)
    except (WorkflowQueryFailedError, RPCError):
        return None  # between runs (continue-as-new), closed, or no worker to answer


async def _is_running(handle: WorkflowHandle) -> bool:
    try:
        description = await handle.describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return description.status == WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING


def _starts_at(progress: CompileProgress) -> str:
    until = progress.debounce_until
    assert until is not None
    seconds = max(0, round((until - datetime.now(UTC)).total_seconds()))
    return (f"{until.astimezone(UTC):%H:%M:%S} UTC (in {seconds} s) unless more memories arrive; "
            f"`wiki compile --tenant {progress.scope.tenant} --owner {progress.scope.owner}` starts it now")


def _progress_table(progress: CompileProgress) -> Table:
    caps = progress.caps
    compiled = progress_text(progress.memories_compiled, progress.memories_total, progress.seconds_left,
                             progress.memories_per_second)
    rows = [
        ("run", f"{progress.run_no} (trigger {progress.trigger})"),
        ("phase", progress.phase),
        *([("memories", compiled)] if compiled else []),
        *([("compiles at", _starts_at(progress))] if progress.debounce_until else []),
        ("cursor", progress.cursor),
        ("batches done", progress.batches_done),
        ("caps used this run", f"{progress.records_read}/{caps.max_records} memories, "
                               f"{progress.pages_created}/{caps.max_new_pages} new pages, "
                               f"{progress.sections_rewritten}/{caps.max_sections_rewritten} sections rewritten"),
        *([] if get_settings().llm == "scripted" else
          [("tokens", f"{progress.input_tokens} in, {progress.output_tokens} out")]),
        ("cost so far", cost_text(progress.cost_usd, get_settings())),
        ("wake-ups waiting", progress.pending_wakeups),
    ]
    title = "Compile waiting for a quiet period" if progress.debounce_until else "Compile running now"
    return table(title, ["", "value"], rows)


def _ledger_cost(metrics: dict) -> str:
    if "cost_usd" not in metrics:
        return ""
    return "scripted" if get_settings().llm == "scripted" else f"${float(metrics['cost_usd']):.4f}"


def ledger_table(title: str, rows: list[JobRow]) -> Table:
    """One line per workflow run, oldest first; compact enough for an 80-column terminal."""
    result = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for header in ("trigger", "status", "records\nread", "pages\ncreated", "sections\nrewritten", "cost",
                   "started\n(UTC)"):
        result.add_column(header, no_wrap=True)
    for row in rows:
        metrics = row.metrics
        result.add_row(row.trigger, row.status, str(metrics.get("records_read", 0)),
                       str(metrics.get("pages_created", 0)), str(metrics.get("sections_rewritten", 0)),
                       _ledger_cost(metrics), row.started_at.strftime("%m-%d %H:%M"))
    return result


@dataclass
class ScopeStatus:
    workflow_id: str
    running: bool
    progress: CompileProgress | None
    latest_run: JobRow | None
    runs: int
    memories: int
    not_compiled: int
    redone: RedoneWork | None = None  # the latest run's attempts that did not complete


async def _scope_status(settings: Settings, tenant: str, owner: str) -> ScopeStatus:
    client = await temporal(settings)
    workflow_id = compile_workflow_id(tenant, owner)
    handle = client.get_workflow_handle(workflow_id)
    running = await _is_running(handle)
    progress = await progress_of(handle) if running else None
    async with database() as engine:
        # Runs terminated, timed out or cancelled never closed their ledger row: Temporal says how they ended.
        await reconcile_open_runs(client, engine, tenant, owner)
        async with engine.connect() as conn:
            ledger = await ledger_rows(conn, tenant, owner)
            memories, pending = await memory_counts(conn, tenant, owner)
            redone = await redone_work(conn, tenant, owner, ledger[-1].run_id) if ledger else None
    return ScopeStatus(workflow_id, running, progress, ledger[-1] if ledger else None, len(ledger), memories,
                       pending, redone)


def _print_redone(redone: RedoneWork | None) -> None:
    """The work the latest run redid: attempts Temporal retried after a timeout, a cancellation or a failure."""
    if redone is None or not redone.any:
        return
    out.print(f"activity attempts redone in the latest run: {redone.timed_out} timed out, {redone.cancelled} "
              f"cancelled, {redone.failed} failed", soft_wrap=True)
    for step in redone.retrying:
        why = step.last_outcome.replace("_", " ") + (f" ({step.last_error})" if step.last_error else "")
        out.print(f"retrying: {step.activity_type}, {step.step}: attempt {step.attempts} {why}", soft_wrap=True)


def _print_status(status: ScopeStatus, settings: Settings, tenant: str, owner: str) -> None:
    if status.progress is not None:
        out.print(_progress_table(status.progress))
    elif status.running:
        out.print(f"workflow {status.workflow_id} is running but did not answer its progress query: is a worker "
                  f"polling task queue {settings.task_queue}?", soft_wrap=True)
    if not status.running and status.latest_run is not None:
        out.print(ledger_table(f"Latest compile run (of {status.runs})", [status.latest_run]))
        if status.latest_run.error:
            out.print(f"error: {status.latest_run.error}", soft_wrap=True)
    elif not status.running:
        out.print(f"no compile has run for {tenant}/{owner} yet")
    _print_redone(status.redone)
    out.print(f"memories stored: {status.memories}; not compiled yet: {status.not_compiled}")
    print_workflow_location(settings, status.workflow_id)


@dataclass
class _Backlog:
    """Memories compiled since the watch began, and how many there are to compile in all.

    The scope's cursor only moves when a batch commits, so the count of memories after it is the
    truth across retries and continue-as-new; memories retained meanwhile grow the total.
    """

    done: int = 0
    previous: int | None = None

    def update(self, not_compiled: int) -> tuple[int, int]:
        if self.previous is not None and not_compiled < self.previous:
            self.done += self.previous - not_compiled
        self.previous = not_compiled
        return self.done, self.done + not_compiled


def _watch_line(progress: CompileProgress | None) -> str:
    if progress is None:
        return "waiting for the workflow's progress"
    left = time_left_text(progress.seconds_left)
    left = f", {left}" if left else ""
    if get_settings().llm == "scripted":
        return f"run {progress.run_no} {progress.phase}, batch {progress.batches_done}{left}, scripted, no model cost"
    return (f"run {progress.run_no} {progress.phase}, batch {progress.batches_done}{left}, "
            f"{progress.input_tokens + progress.output_tokens} tokens, ${progress.cost_usd:.4f}")


async def _follow(handle: WorkflowHandle, engine: AsyncEngine, tenant: str, owner: str) -> None:
    """A live progress bar of the scope's compile, until its workflow is no longer running."""
    backlog = _Backlog()
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("memories"), TimeElapsedColumn())
    with Progress(*columns, console=out) as bar:
        task = bar.add_task("starting", total=None)
        while True:
            running = await _is_running(handle)
            progress = await progress_of(handle) if running else None
            async with engine.connect() as conn:
                _, not_compiled = await memory_counts(conn, tenant, owner)
            done, total = backlog.update(not_compiled)
            bar.update(task, completed=done, total=total,
                       description=_watch_line(progress) if running else "compile ended")
            if not running:
                return
            await asyncio.sleep(PROGRESS_POLL_SECONDS)


async def _watch(settings: Settings, tenant: str, owner: str) -> ScopeStatus:
    client = await temporal(settings)
    handle = client.get_workflow_handle(compile_workflow_id(tenant, owner))
    if await _is_running(handle):
        async with database() as engine:
            await _follow(handle, engine, tenant, owner)
    else:
        out.print(f"no compile is running for {tenant}/{owner}")
    return await _scope_status(settings, tenant, owner)


@handled
def status_command(
    tenant: TenantOption,
    owner: OwnerOption,
    watch: Annotated[bool, typer.Option(help="A live progress bar until the running compile ends; "
                                             "exits 1 if it did not succeed.")] = False,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """The scope's running compile (its progress query), else its latest ledger row."""
    settings = get_settings()
    tenant, owner = scope(tenant, owner)
    status = run(_watch(settings, tenant, owner) if watch else _scope_status(settings, tenant, owner))
    if json_output:
        print_json(status)
    else:
        _print_status(status, settings, tenant, owner)
    latest = status.latest_run
    if watch and not status.running and latest is not None and latest.status not in ("succeeded", "continued"):
        raise typer.Exit(EXIT_FAILURE)


def _jobs_table(rows: list[JobRow]) -> Table:
    """Newest first. A scope or kind shared by every row goes into the title, to leave room for the rest."""
    scopes = {f"{row.tenant}/{row.owner}" if row.tenant else "every scope" for row in rows}
    kinds = {row.kind for row in rows}
    title = "Ledger, newest first"
    if len(kinds) == 1:
        title += f" · {next(iter(kinds))} runs"
    if len(scopes) == 1:
        title += f" · {next(iter(scopes))}"
    columns = [Col("started\n(UTC)", "key"), *([Col("scope", "key")] if len(scopes) > 1 else []),
               *([Col("kind", "key")] if len(kinds) > 1 else []), Col("trigger", "key"), Col("status", "key"),
               Col("read", "num"), Col("pages", "num"), Col("cost", "num")]
    body = []
    for row in rows:
        metrics = row.metrics
        scope_name = f"{row.tenant}/{row.owner}" if row.tenant else "every scope"
        body.append([row.started_at.strftime("%m-%d %H:%M"), *([scope_name] if len(scopes) > 1 else []),
                     *([row.kind] if len(kinds) > 1 else []), row.trigger, row.status + ("*" if row.error else ""),
                     *_read_and_pages(row.kind, metrics), _ledger_cost(metrics)])
    return table(title, columns, body, boxed=False)


def _read_and_pages(kind: str, metrics: dict) -> list[str]:
    """A run's memories read and pages created; a forget receipt's memories forgotten and pages removed."""
    if kind == "forget":
        removed = metrics.get("pages_removed", 0)  # a list of ids (an older receipt: a count)
        emptied = (metrics.get("outcome") or {}).get("pages_emptied", 0)
        pages = (len(removed) if isinstance(removed, list) else int(removed)) + emptied
        return [f"-{metrics.get('memories_forgotten', 0)}", f"-{pages}"]
    return [str(metrics.get("records_read", "")), str(metrics.get("pages_created", ""))]


def _print_job_errors(rows: list[JobRow]) -> None:
    for row in rows:
        if row.error:
            scope_name = f"{row.tenant}/{row.owner}" if row.tenant else "every scope"
            out.print(f"* {row.kind} of {scope_name} started {row.started_at:%m-%d %H:%M}: {row.error}")


async def _jobs(tenant: str | None, owner: str | None, status: str | None, limit: int) -> list[JobRow]:
    async with database() as engine, engine.connect() as conn:
        return await list_jobs(conn, tenant=tenant, owner=owner, status=status, limit=limit)


@handled
def jobs_command(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant.")] = None,
    owner: Annotated[str | None, typer.Option(help="Only this owner.")] = None,
    status: Annotated[str | None, typer.Option(help=f"Only this status: {', '.join(LEDGER_STATUSES)}.")] = None,
    limit: Annotated[int, typer.Option(help=f"At most this many rows (1-{MAX_JOBS}).")] = 20,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """The ledger: one row per compile run and per lint run, and each forget's receipt, newest first."""
    get_settings()
    if tenant is not None:
        tenant = validate_scope_part("tenant", tenant)
    if owner is not None:
        owner = validate_scope_part("owner", owner)
    if status is not None and status not in LEDGER_STATUSES:
        raise CliError(f"status must be one of {', '.join(LEDGER_STATUSES)} (got {status!r})", EXIT_USAGE)
    rows = run(_jobs(tenant, owner, status, in_range("limit", limit, 1, MAX_JOBS)))
    if json_output:
        print_json(rows)
    elif rows:
        out.print(_jobs_table(rows))
        _print_job_errors(rows)
    else:
        out.print("no ledger rows match")
