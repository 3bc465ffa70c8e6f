"""Database URL resolution, engine creation and migrations."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from runtime.settings import ConfigError, get_settings

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def to_asyncpg_url(url: str) -> str:
    """Accept the usual spellings (postgres://, postgresql://, postgresql+asyncpg://) and use asyncpg."""
    try:
        parsed = make_url(url)
    except Exception as error:
        raise ConfigError(f"DATABASE_URL: not a database URL ({error})") from None
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


def create_engine(url: str | None = None, *, pool_size: int = 10) -> AsyncEngine:
    """`pool_size` steady connections, as many again under bursts."""
    return create_async_engine(url or resolve_database_url(), pool_size=pool_size, max_overflow=pool_size,
                               pool_pre_ping=True)


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
    engine = create_async_engine(to_asyncpg_url(url), poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            for statement in statements:
                await conn.execute(text(statement))
    finally:
        await engine.dispose()
