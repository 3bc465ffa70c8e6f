"""Alembic environment: runs migrations over a synchronous connection handed in by `runtime.database`,
or, from the `alembic` command line, over DATABASE_URL (embedded Postgres when unset)."""

from __future__ import annotations

import asyncio

from alembic import context


def _run(connection) -> None:
    context.configure(connection=connection, target_metadata=None, transaction_per_migration=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_online_from_url(url: str) -> None:
    from runtime.database import engine_for

    engine = engine_for(url)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
        await connection.commit()
    await engine.dispose()


def main() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    from runtime.database import resolve_database_url

    asyncio.run(_run_online_from_url(resolve_database_url()))


main()
