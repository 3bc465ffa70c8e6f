"""The services every benchmark runs against: one embedded Postgres and one Temporal dev server.

Each measured run gets its own freshly migrated database (a copy of a migrated template), so one
run's wiki never slows or changes the next, and its own tenant and task queue.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from bench.cpu import CpuAccount, find_process
from runtime.database import engine_for, execute_as_admin, migrate
from runtime.devservices import EmbeddedPostgres, fairness_args, free_port, temporal_cli_path
from runtime.search_attributes import ALL_SEARCH_ATTRIBUTES
from runtime.settings import Settings
from runtime.temporal_client import signal_compile

TEMPLATE_DB = "bench_template"
_database_numbers = itertools.count(1)


@dataclass
class Services:
    postgres: EmbeddedPostgres
    temporal: WorkflowEnvironment

    @property
    def client(self) -> Client:
        return self.temporal.client

    @property
    def temporal_address(self) -> str:
        return self.client.service_client.config.target_host

    def cpu_account(self, **more_trees: int) -> CpuAccount:
        """CPU accounting of a measurement: Postgres, the Temporal server, this process and `more_trees`."""
        port = self.temporal_address.rsplit(":", 1)[1]
        trees = {"postgres": self.postgres.pid(), "temporal": find_process("start-dev", f"--port {port}")}
        return CpuAccount(trees={name: pid for name, pid in {**trees, **more_trees}.items() if pid})

    async def timed_compile(self, tenant: str, owner: str, trigger: str, settings: Settings,
                            **more_trees: int) -> tuple[float, float]:
        """Signal one compile of the scope and wait for its result: (wall seconds, CPU seconds of the
        services, this process and `more_trees` over that time)."""
        cpu = self.cpu_account(**more_trees)
        cpu.start()
        started = time.monotonic()
        handle = await signal_compile(self.client, tenant, owner, trigger=trigger,  # type: ignore[arg-type]
                                      settings=settings)
        await handle.result()
        return time.monotonic() - started, cpu.stop()

    @asynccontextmanager
    async def fresh_database(self, template_url: str | None = None) -> AsyncIterator[str]:
        """The URL of a new database, dropped afterwards: a copy of the migrated template, or of another
        database of this server (which must have no open connection)."""
        template = make_url(template_url).database if template_url else TEMPLATE_DB
        name = f"bench_{next(_database_numbers)}"
        await self._admin(f"CREATE DATABASE {name} TEMPLATE {template}")
        try:
            yield self.postgres.url(name)
        finally:
            await self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    async def _admin(self, *statements: str) -> None:
        await execute_as_admin(self.postgres.url("postgres"), *statements)

    async def _migrate_template(self) -> None:
        await self._admin(f"DROP DATABASE IF EXISTS {TEMPLATE_DB}", f"CREATE DATABASE {TEMPLATE_DB}")
        engine = engine_for(self.postgres.url(TEMPLATE_DB), poolclass=NullPool)
        try:
            await migrate(engine)
        finally:
            await engine.dispose()


@asynccontextmanager
async def running_services() -> AsyncIterator[Services]:
    with tempfile.TemporaryDirectory(prefix="wiki-bench-") as tmp:
        # Throwaway data: the fast, non-durable settings (the product default is durable).
        postgres = EmbeddedPostgres(pgdata=Path(tmp) / "pg", port=free_port(), durable=False)
        postgres.ensure_running()
        try:
            temporal = await WorkflowEnvironment.start_local(
                dev_server_existing_path=str(temporal_cli_path()), dev_server_extra_args=fairness_args(), search_attributes=ALL_SEARCH_ATTRIBUTES,
                data_converter=pydantic_data_converter, dev_server_log_level="error",
            )
            try:
                services = Services(postgres=postgres, temporal=temporal)
                await services._migrate_template()
                yield services
            finally:
                await temporal.shutdown()
        finally:
            postgres.stop()
