"""The services and processes the product runs on: `wiki dev up/down/status`, `wiki migrate`, `wiki worker`."""

from __future__ import annotations

import logging

import typer
from sqlalchemy.engine import make_url

from cli.common import database, handled, process, run
from cli.output import Col, out, table
from runtime.database import migrate
from runtime.devservices import DevTemporal, DevWorker, EmbeddedPostgres, port_is_open
from runtime.settings import Settings, get_settings, mask_secrets

dev_app = typer.Typer(help="The embedded Postgres and Temporal dev server.", no_args_is_help=True)


def ensure_dev_services(settings: Settings) -> None:
    """Start the embedded servers whose URL/address is not configured (reused when already running)."""
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
        return ("Postgres", mask_secrets(url.render_as_string(hide_password=True)),
                f"{_reachable(url.host, url.port or 5432)} (external: DATABASE_URL)")
    postgres = EmbeddedPostgres.from_settings(settings)
    state = "running" if postgres.is_running() else "stopped"
    return "Postgres", mask_secrets(postgres.url().replace("+asyncpg", "")), f"{state} (embedded)"


def _temporal_rows(settings: Settings) -> list[tuple[str, str, str]]:
    if settings.temporal_address:
        host, _, port = settings.temporal_address.rpartition(":")
        state = _reachable(host, int(port)) if port.isdigit() else "unknown"
        return [
            ("Temporal", f"{settings.temporal_address} (namespace {settings.temporal_namespace})",
             f"{state} (external: TEMPORAL_ADDRESS)"),
            ("Temporal Web UI", "your cluster's Web UI", "external"),
        ]
    temporal = DevTemporal.from_settings(settings)
    state = "running" if temporal.is_running() else "stopped"
    return [
        ("Temporal", temporal.address, f"{state} (embedded dev server, namespace {settings.temporal_namespace})"),
        ("Temporal Web UI", temporal.ui_url, f"{state} (embedded)"),
    ]


def _worker_row(settings: Settings) -> tuple[str, str, str]:
    where = f"task queue {settings.task_queue}"
    if settings.temporal_address:
        return "Worker", where, "yours to run: `wiki worker`"
    worker = DevWorker.from_settings(settings)
    pid = worker.pid()
    return "Worker", where, f"running (background, pid {pid})" if pid else "stopped (background)"


def print_services(settings: Settings) -> None:
    rows = [_postgres_row(settings), *_temporal_rows(settings), _worker_row(settings)]
    out.print(table("Services", [Col("service", "key"), Col("listens on", "key"), Col("state")], rows, boxed=False))
    if not (settings.database_url and settings.temporal_address):
        out.print(f"data and logs of the embedded services: {settings.data_dir.resolve()}", soft_wrap=True)


def start_dev_worker(settings: Settings) -> None:
    """The background worker, when Temporal is the embedded dev server (an external cluster has its own)."""
    if settings.temporal_address:
        return
    worker = DevWorker.from_settings(settings)
    if worker.ensure_running():
        out.print(f"started the background worker (pid {worker.pid()}, log {worker.log_path})", soft_wrap=True)


@dev_app.command("up")
@handled
def dev_up() -> None:
    """Start the embedded Postgres (and migrate it), the Temporal dev server and a background worker,
    each unless configured elsewhere; a worker that died is started again."""
    settings = get_settings()
    ensure_dev_services(settings)
    migrate_configured()  # before the worker starts: it would migrate too, concurrently
    start_dev_worker(settings)
    print_services(settings)


@dev_app.command("down")
@handled
def dev_down() -> None:
    """Stop the background worker and the embedded services (their data stays under WIKI_DATA_DIR)."""
    settings = get_settings()
    # The worker first: it uses the other two, and finishes the activities in flight on SIGTERM.
    services = (("worker", DevWorker.from_settings(settings)),
                ("Temporal dev server", DevTemporal.from_settings(settings)),
                ("Postgres", EmbeddedPostgres.from_settings(settings)))
    stopped = [name for name, service in services if service.stop()]
    out.print(f"stopped: {', '.join(stopped)}" if stopped else "no embedded service was running")


@dev_app.command("status")
@handled
def dev_status() -> None:
    """Where Postgres, Temporal, its Web UI and the worker listen, and whether they are up (starts nothing)."""
    print_services(get_settings())


def migrate_configured() -> None:
    """`alembic upgrade head` on the configured database (the embedded one, started if needed)."""

    async def upgrade() -> None:
        async with database() as engine:
            await migrate(engine)

    run(upgrade())


@handled
def migrate_command() -> None:
    """Upgrade the configured database to the latest schema (alembic upgrade head)."""
    get_settings()
    migrate_configured()
    out.print("database schema is at the latest revision")


@handled
def worker_command() -> None:
    """Run a worker: poll the task queue and run compiles until SIGINT/SIGTERM."""
    settings = get_settings()
    from app.worker import run_worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Alembic narrates every migration step it checks at INFO: noise at each start of a worker.
    logging.getLogger("alembic").setLevel(logging.WARNING)
    process.temporal_used = True
    run(run_worker(settings))
