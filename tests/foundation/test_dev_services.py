"""The embedded Postgres `wiki dev up` starts is durable: fsync and synchronous_commit on.

It is the documented default store when DATABASE_URL is unset, so a commit it acknowledged must
survive a power loss. Only throwaway servers (this test session's, the benchmarks') run fast.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.pool import NullPool

from runtime.database import engine_for
from runtime.devservices import EmbeddedPostgres, free_port
from runtime.settings import get_settings
from tests.operators.cli import wiki

DURABILITY = ("fsync", "synchronous_commit", "full_page_writes")


async def _show(server: EmbeddedPostgres) -> dict[str, str]:
    engine = engine_for(server.url(), poolclass=NullPool)
    try:
        async with engine.connect() as conn:
            return {name: (await conn.execute(text(f"SHOW {name}"))).scalar_one() for name in DURABILITY}
    finally:
        await engine.dispose()


@pytest.fixture
def dev_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> EmbeddedPostgres:
    """The default settings (no DATABASE_URL), with the data and port of this test only. Temporal is
    named as external, so `wiki dev up` starts Postgres alone."""
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(tmp_path, 0o755)  # as root, the embedded Postgres runs as its own system user
    port = free_port()
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("WIKI_DATA_DIR", str(data))
    monkeypatch.setenv("WIKI_DEV_POSTGRES_PORT", str(port))
    monkeypatch.setenv("TEMPORAL_ADDRESS", "127.0.0.1:9")
    get_settings.cache_clear()
    server = EmbeddedPostgres.from_settings(get_settings())
    yield server
    server.stop()
    get_settings.cache_clear()


async def test_dev_up_runs_postgres_durable_and_restarts_one_left_running_fast(dev_env: EmbeddedPostgres):
    up = await wiki("dev", "up")
    assert up.exit_code == 0, up.output
    assert await _show(dev_env) == {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
    assert not dev_env.running_fast()
    assert (await wiki("dev", "down")).exit_code == 0

    # A server an earlier version started (it always used the fast settings) on the same data ...
    fast = EmbeddedPostgres(pgdata=dev_env.pgdata, port=dev_env.port, durable=False)
    fast.ensure_running()
    assert (await _show(fast))["fsync"] == "off" and fast.running_fast()
    # ... is restarted durable by the next command that uses it, keeping its data.
    again = await wiki("dev", "up")
    assert again.exit_code == 0, again.output
    assert await _show(dev_env) == {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
    engine = engine_for(dev_env.url(), poolclass=NullPool)
    try:
        async with engine.connect() as conn:
            assert (await conn.execute(text("SELECT count(*) FROM memory_units"))).scalar_one() == 0
    finally:
        await engine.dispose()
