"""The 700-memory sample compiled once per session, and a fresh copy of it for each test that reads it.

Compiling the sample takes a quarter of a minute; the golden, leaf-pass, aggregation and overlap tests
each check other properties of that one compile (same memories, same settings, same scope). The
compile runs once, into a database of its own that then serves as a template: each test gets a file
copy of it (CREATE DATABASE ... TEMPLATE, milliseconds), so a test may change its copy freely.

Loaded by tests/conftest.py as a plugin, so every test directory sees the fixtures.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import NullPool
from temporalio.testing import WorkflowEnvironment

from runtime.database import engine_for, execute_as_admin
from runtime.devservices import EmbeddedPostgres
from tests.golden.make_fixture import OWNER, TENANT, compile_sample

# Loggers whose warnings the tests of the shared compile look at (the planner says when a plan ahead
# fell back to the wiki as it stands).
WATCHED_LOGGERS = ("activities.planning",)


@dataclass(frozen=True)
class CompiledSample:
    """The session's compile of the sample: the template database holding the compiled scope, the
    compile workflow's result, and the warnings the watched loggers wrote while it ran."""

    template: str
    tenant: str
    owner: str
    result: dict
    warnings: tuple[str, ...]


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest_asyncio.fixture(scope="session")
async def compiled_sample(postgres_server: EmbeddedPostgres, template_database: str,
                          temporal_env: WorkflowEnvironment) -> AsyncIterator[CompiledSample]:
    """The sample (700 memories, seed 7) retained into golden/alice of a migrated database and compiled
    to the end by `tests.golden.make_fixture.compile_sample`; read it through `compiled_sample_engine`."""
    name = f"sample700_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = postgres_server.url("postgres")
    await execute_as_admin(admin, f"CREATE DATABASE {name} TEMPLATE {template_database}")
    collect = _Collect()
    loggers = [logging.getLogger(logger) for logger in WATCHED_LOGGERS]
    for logger in loggers:
        logger.addHandler(collect)
    # No pooled connection may outlive the compile: a template database must have no sessions to be copied.
    engine = engine_for(postgres_server.url(name), poolclass=NullPool)
    try:
        result = await compile_sample(temporal_env.client, engine)
    finally:
        await engine.dispose()
        for logger in loggers:
            logger.removeHandler(collect)
    try:
        yield CompiledSample(name, TENANT, OWNER, result, tuple(collect.messages))
    finally:
        await execute_as_admin(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest_asyncio.fixture
async def compiled_sample_engine(postgres_server: EmbeddedPostgres,
                                 compiled_sample: CompiledSample) -> AsyncIterator[AsyncEngine]:
    """An engine on a fresh copy of the compiled sample's database (the test's own, to change at will)."""
    name = f"sample_copy_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = postgres_server.url("postgres")
    await execute_as_admin(admin, f"CREATE DATABASE {name} TEMPLATE {compiled_sample.template}")
    engine = engine_for(postgres_server.url(name), pool_size=10, max_overflow=10)
    try:
        yield engine
    finally:
        await engine.dispose()
        await execute_as_admin(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
