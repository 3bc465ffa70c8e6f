"""What every command uses: exit codes and the error handling that produces them, the database and
Temporal connections, and the checks of command-line values.

Exit codes: 0 ok, 1 operational failure (a service is down, a compile failed), 2 bad input or usage
(including a bad setting). Errors go to stderr as one line starting with "error:".
"""

from __future__ import annotations

import asyncio
import functools
import sys
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar
from uuid import UUID

import typer
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

# The group, exit codes and error printing live in cli/group.py, which `wiki --help` imports alone.
from cli.group import EXIT_FAILURE, EXIT_USAGE, OneLineErrors, print_error, process  # noqa: E402, F401
from domain.memory import RetainError, ScopeError, validate_scope_part
from domain.plan import PAGE_TYPES
from runtime.database import create_engine
from runtime.settings import ConfigError, Settings, mask_secrets

if TYPE_CHECKING:
    from temporalio.client import Client

# Failures reported as one line, by the module that defines them. A module is looked up only once
# loaded (a command that raised one of these loaded it), so a read command never imports the
# Temporal client just to name its errors.
_USAGE_FAILURES: tuple[tuple[str, str], ...] = ()
_OPERATIONAL_FAILURES = (("runtime.devservices", "ServiceError"), ("app.retain", "CompileNotSignalled"),
                         ("app.operations", "OperationRefused"), ("runtime.temporal_client", "SearchAttributeMissing"),
                         ("runtime.temporal_client", "TemporalNotHealthy"),
                         ("temporalio.service", "RPCError"))


def _loaded(kinds: tuple[tuple[str, str], ...]) -> tuple[type[BaseException], ...]:
    return tuple(getattr(sys.modules[module], name) for module, name in kinds if module in sys.modules)

T = TypeVar("T")

TenantOption = Annotated[str, typer.Option(help="Tenant id.")]
OwnerOption = Annotated[str, typer.Option(help="Owner id.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


class CliError(Exception):
    """A failure to report as one line on stderr, with the exit code to end with."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


# ------------------------------------------------------------------------------------------- errors


def message_of(error: BaseException) -> str:
    """The operator-facing text of an error (driver errors without SQLAlchemy's boilerplate)."""
    if isinstance(error, DBAPIError) and error.orig is not None:
        return f"database error: {error.orig}"
    return str(error) or type(error).__name__


def _is_temporal_unreachable(error: RuntimeError) -> bool:
    # Client.connect reports an unreachable server as a bare RuntimeError with this wording.
    return str(error).startswith("Failed client connect")


def handled(function: Callable[..., T]) -> Callable[..., T]:
    """A command whose errors become one stderr line and an exit code (register it on a Typer after)."""

    @functools.wraps(function)
    def run_command(*args: Any, **kwargs: Any) -> T:
        try:
            return function(*args, **kwargs)
        except CliError as error:
            print_error(str(error))
            raise typer.Exit(error.code) from None
        except (ConfigError, ScopeError, RetainError) as error:
            print_error(str(error))
            raise typer.Exit(EXIT_USAGE) from None
        except (SQLAlchemyError, OSError) as error:
            print_error(message_of(error))
            raise typer.Exit(EXIT_FAILURE) from None
        except Exception as error:
            if isinstance(error, _loaded(_USAGE_FAILURES)):
                print_error(str(error))
                raise typer.Exit(EXIT_USAGE) from None
            if isinstance(error, _loaded(_OPERATIONAL_FAILURES)):
                print_error(message_of(error))
                raise typer.Exit(EXIT_FAILURE) from None
            if not isinstance(error, RuntimeError):
                raise
            if not _is_temporal_unreachable(error):
                raise
            print_error(f"cannot reach Temporal: {error}")
            raise typer.Exit(EXIT_FAILURE) from None

    return run_command


# ------------------------------------------------------------------------------------------- connections


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


@asynccontextmanager
async def database(*, pre_ping: bool = True) -> AsyncIterator[AsyncEngine]:
    """The configured database (the embedded one, started if needed, when DATABASE_URL is unset)."""
    engine = create_engine(pre_ping=pre_ping)
    try:
        async with engine.connect():
            pass  # fail here, naming the database, rather than halfway through a command
    except (OSError, DBAPIError) as error:
        await engine.dispose()
        where = mask_secrets(engine.url.render_as_string(hide_password=True))
        raise CliError(f"cannot connect to the database at {where}: {message_of(error)}") from None
    try:
        yield engine
    finally:
        await engine.dispose()


async def reading(work: Callable[[AsyncConnection], Coroutine[Any, Any, T]]) -> T:
    """`work` on a connection of the configured database."""
    async with database() as engine, engine.connect() as conn:
        return await work(conn)


def read_found(work: Callable[[AsyncConnection], Coroutine[Any, Any, T | None]], missing: str) -> T:
    """`work`'s answer on a connection of the configured database; None (what it looks up is not
    there) is the error `missing`."""
    found = run(reading(work))
    if found is None:
        raise CliError(missing)
    return found


async def change(function: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
    """`function(conn, *args)` in one transaction of the configured database."""
    async with database() as engine, engine.begin() as conn:
        return await function(conn, *args)


async def temporal(settings: Settings) -> Client:
    from runtime.temporal_client import connect

    def waiting(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    process.temporal_used = True
    return await connect(settings, on_wait=waiting)


# A background worker just (re)started imports, migrates and connects before its first poll.
WORKER_START_SECONDS = 60.0
# A worker started a moment ago elsewhere (`wiki worker &` in a script) may not have polled yet.
WORKER_GRACE_SECONDS = 3.0


def _log_tail(path, lines: int = 5) -> str:
    try:
        tail = path.read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return "(no log)"
    return " | ".join(tail) or "(empty log)"


def _unserved(problem: str, advice: str, wait: bool) -> None:
    """No worker will run the work: an error for a command that waits, a warning for one that does not."""
    if wait:
        raise CliError(f"{problem}: {advice}")
    print(f"warning: {problem}: this waits until a worker polls it", file=sys.stderr)


async def require_worker(client: Client, settings: Settings, *, wait: bool = True) -> None:
    """A worker polls the task queue, or a command that would wait for it fails now, in one line, before
    changing anything (one that does not wait says so on stderr and goes on: the work waits for a worker).

    With the embedded dev server the background worker is started first if it is not running (it died,
    or `wiki dev up` was never run), and given a bounded time to start polling.
    """
    from runtime.devservices import DevWorker
    from runtime.temporal_client import live_pollers

    queue = settings.task_queue
    worker = None if settings.temporal_address else DevWorker.from_settings(settings)
    patience = WORKER_GRACE_SECONDS if wait else 0.0
    if worker is not None:
        if worker.ensure_running():
            print(f"started the background worker (log {worker.log_path})", file=sys.stderr)
        if worker.polled_queue() not in (None, queue):
            return _unserved(f"the background worker (pid {worker.pid()}) polls task queue {worker.polled_queue()}, "
                             f"not {queue}", "it keeps the settings it was started with; `wiki dev down`, then "
                             "`wiki dev up`", wait)
        # A worker started a moment ago (by this command or another) gets its time to start polling.
        patience = max(patience, WORKER_START_SECONDS - worker.running_for())
    deadline = time.monotonic() + patience
    while not await live_pollers(client, queue):
        if worker is not None and not worker.is_running():
            return _unserved("the background worker exited",
                             f"its log {worker.log_path} ends: {_log_tail(worker.log_path)}", wait)
        if time.monotonic() >= deadline:
            if worker is None:
                return _unserved(f"no worker is polling task queue {queue}",
                                 "start one with `wiki worker` (same settings), then run this again", wait)
            return _unserved(f"the background worker (pid {worker.pid()}) does not poll task queue {queue}",
                             f"see its log {worker.log_path}", wait)
        await asyncio.sleep(0.2)
    return None


# ------------------------------------------------------------------------------------------- values


def scope(tenant: str, owner: str) -> tuple[str, str]:
    return validate_scope_part("tenant", tenant), validate_scope_part("owner", owner)


def parse_page_ref(value: str) -> tuple[str, str]:
    """TYPE/SLUG as given on the command line."""
    page_type, _, slug = value.partition("/")
    if page_type not in PAGE_TYPES or not slug.strip():
        raise CliError(f"expected TYPE/SLUG with TYPE one of {', '.join(PAGE_TYPES)} (got {value!r})", EXIT_USAGE)
    return page_type, slug.strip()


def parse_memory_id(value: str) -> UUID:
    try:
        return UUID(value)
    except ValueError:
        raise CliError(f"memory id must be a UUID (got {value!r})", EXIT_USAGE) from None


def in_range(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise CliError(f"{name} must be between {low} and {high} (got {value})", EXIT_USAGE)
    return value


def confirm(question: str, yes: bool) -> None:
    """Ask before a destructive change unless --yes; no (or no terminal to answer) changes nothing."""
    if yes:
        return
    try:
        agreed = typer.confirm(question, default=False)
    except typer.Abort:
        agreed = False
    if not agreed:
        raise CliError("cancelled: nothing was changed (pass --yes to skip this question)")
