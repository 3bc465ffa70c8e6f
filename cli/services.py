"""The services and processes the product runs on: `wiki dev up/down/status`, `wiki migrate`, `wiki worker`."""

from __future__ import annotations

import logging

import typer
from sqlalchemy.engine import make_url

from cli.common import database, handled, process, run
from cli.output import out, table
from runtime.database import migrate, migrate_sync
from runtime.devservices import DevTemporal, EmbeddedPostgres, port_is_open
from runtime.settings import Settings, get_settings

dev_app = typer.Typer(help="The embedded Postgres and Temporal dev server.", no_args_is_help=True)


def ensure_dev_services(settings: Settings) -> None:
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


def print_services(settings: Settings) -> None:
    rows = [_postgres_row(settings), *_temporal_rows(settings)]
    out.print(table("Services", ["service", "listens on", "state"], rows))


@dev_app.command("up")
@handled
def dev_up() -> None:
    """Start the embedded Postgres (and migrate it) and the Temporal dev server, unless configured elsewhere."""
    settings = get_settings()
    ensure_dev_services(settings)
    if not settings.database_url:
        migrate_sync(EmbeddedPostgres.from_settings(settings).url())
    print_services(settings)


@dev_app.command("down")
@handled
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


@dev_app.command("status")
@handled
def dev_status() -> None:
    """Where Postgres, Temporal and its Web UI listen, and whether they are up (starts nothing)."""
    print_services(get_settings())


@handled
def migrate_command() -> None:
    """Upgrade the configured database to the latest schema (alembic upgrade head)."""
    get_settings()

    async def upgrade() -> None:
        async with database() as engine:
            await migrate(engine)

    run(upgrade())
    out.print("database schema is at the latest revision")


@handled
def worker_command() -> None:
    """Run a worker: poll the task queue and run compiles until SIGINT/SIGTERM."""
    settings = get_settings()
    from app.worker import run_worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    process.temporal_used = True
    run(run_worker(settings))
