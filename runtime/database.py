"""Database URL resolution, engine creation and migrations."""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from runtime.settings import ConfigError, Settings, get_settings, mask_secrets

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def to_asyncpg_url(url: str) -> str:
    """Accept the usual spellings (postgres://, postgresql://, postgresql+asyncpg://) and use asyncpg."""
    try:
        parsed = make_url(url)
    except Exception as error:
        raise ConfigError(f"DATABASE_URL: not a database URL ({mask_secrets(str(error))})") from None
    if parsed.get_backend_name() not in ("postgres", "postgresql"):
        raise ConfigError(f"DATABASE_URL: expected a postgresql:// URL, got {parsed.get_backend_name()}://")
    return parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def resolve_database_url() -> str:
    """DATABASE_URL when set; otherwise the embedded Postgres under $WIKI_DATA_DIR, started if needed."""
    settings = get_settings()
    if settings.database_url:
        return to_asyncpg_url(settings.database_url)
    from runtime.devservices import EmbeddedPostgres

    return EmbeddedPostgres.from_settings(settings).ensure_running()


# asyncpg words a value it cannot encode into its own message ("invalid input for query argument $2:
# 'the memory text…' (expected …)"), which hide_parameters does not reach.
_DRIVER_ECHO = re.compile(r"(invalid input for query argument \$\d+): .*?(\s\([^()]*\))?$", re.DOTALL)


def _hide_values_in_driver_errors(context) -> None:
    wrapped = context.sqlalchemy_exception
    errors = [wrapped, getattr(wrapped, "orig", None), context.original_exception]
    errors += [error.__cause__ for error in errors if error is not None]
    for failed in errors:
        if failed is not None and failed.args and isinstance(failed.args[0], str):
            hidden = _DRIVER_ECHO.sub(lambda m: f"{m.group(1)}: (value hidden){m.group(2) or ''}", failed.args[0])
            failed.args = (hidden, *failed.args[1:])


def engine_for(url: str, **options) -> AsyncEngine:
    """The one way this project makes an engine: statement parameters (memory text, token hashes) never
    appear in an error or a log line; a failed statement is reported by its SQL alone."""
    engine = create_async_engine(url, hide_parameters=True, **options)
    event.listen(engine.sync_engine, "handle_error", _hide_values_in_driver_errors)
    return engine


def create_engine(url: str | None = None, *, pool_size: int | None = None,
                  settings: Settings | None = None, pre_ping: bool = True) -> AsyncEngine:
    """The configured pool (WIKI_DB_POOL_SIZE steady connections, WIKI_DB_POOL_OVERFLOW more under
    bursts, WIKI_DB_POOL_TIMEOUT_SECONDS to wait for one); `pool_size` overrides the steady size and
    adds as many again for bursts.

    `pre_ping` tests each connection as it leaves the pool (one round trip): the worker's long steps
    survive a database restart that way. A server answering many short requests turns it off: a
    request that meets a connection the restart broke is answered 503 with Retry-After, and the pool
    drops that connection."""
    settings = settings or get_settings()
    steady = pool_size or settings.db_pool_size
    overflow = pool_size if pool_size else settings.db_pool_overflow
    return engine_for(url or resolve_database_url(), pool_size=steady, max_overflow=overflow,
                      pool_timeout=settings.db_pool_timeout_seconds, pool_pre_ping=pre_ping)


def _alembic_config(connection=None):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


async def migrate(engine: AsyncEngine, revision: str = "head") -> None:
    """Upgrade the schema to `revision` (idempotent)."""
    from alembic import command

    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(_alembic_config(sync), revision))


async def downgrade(engine: AsyncEngine, revision: str = "base") -> None:
    from alembic import command

    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.downgrade(_alembic_config(sync), revision))


async def execute_as_admin(url: str, *statements: str) -> None:
    """Run statements one by one outside a transaction (CREATE / DROP DATABASE cannot run inside one),
    on a connection of their own that is closed afterwards."""
    engine = engine_for(to_asyncpg_url(url), poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            for statement in statements:
                await conn.execute(text(statement))
    finally:
        await engine.dispose()
