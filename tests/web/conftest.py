"""One compiled wiki and one running `wiki serve` app shared by every web-view test of the session that
asks for it (a test that changes the wiki puts it back): the sample corpus retained into scope web/alice and compiled by the scripted planner on
a real worker, a second scope (rival/alice) compiled from a few memories of its own, a third
(moves/alice) whose facts changed, tokens of each
rights, and the API with its web view served by uvicorn on a loopback port."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import WorkflowEnvironment

from domain.memory import MemoryIn
from runtime.database import engine_for, execute_as_admin
from runtime.devservices import EmbeddedPostgres
from servers.http_api import create_app
from store.memories import store_memories
from tests.compile.helpers import compile_scope, retain_sample, running_worker, test_settings
from tests.servers.conftest import serving
from tests.servers.wiki import token_for

TENANT, OWNER = "web", "alice"
RIVAL = "rival"
# The sample's size for the shared wiki; the 700-memory check runs in the benchmark part `web`.
SAMPLE = int(os.environ.get("WIKI_WEB_TEST_SAMPLE", "120"))
RIVAL_MEMORIES = [
    "Rival note: lunch at Franklin Barbecue with Priya, the secret rival brisket.",
    "Rival note: Priya moved to Lisbon in May.",
    "Rival note: <img src=x onerror=alert(1)> Priya said <script>alert('x')</script> [see](javascript:alert(1)) "
    "and https://evil.example/steal about Franklin Barbecue.",
]

# A third scope where facts changed: a home that moved (the old one superseded) and an employer with
# two rival values of one moment (disputed).
MOVES = "moves"
_ALICE = {"entities": [{"name": "Alice Moreau", "type": "entity", "kind": "person"}]}
MOVES_MEMORIES = [
    ("Alice Moreau goes climbing on Saturdays.", "2026-01-04T10:00:00Z"),
    ("Alice Moreau lives in Austin.", "2026-01-10T09:00:00Z"),
    ("Alice Moreau works for Acme.", "2026-03-01T09:00:00Z"),
    ("Alice Moreau works for Globex.", "2026-03-01T09:00:00Z"),
    ("Alice Moreau moved to Denver.", "2026-06-03T18:00:00Z"),
]


@dataclass(frozen=True)
class ServedWiki:
    base: str
    database_url: str
    engine: AsyncEngine
    read_token: str
    operator_token: str
    rival_token: str
    moves_token: str


@pytest_asyncio.fixture(scope="session")
async def served_wiki(postgres_server: EmbeddedPostgres, template_database: str,
                      temporal_env: WorkflowEnvironment) -> AsyncIterator[ServedWiki]:
    name = f"web_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    await execute_as_admin(postgres_server.url("postgres"), f"CREATE DATABASE {name} TEMPLATE {template_database}")
    engine = engine_for(postgres_server.url(name), pool_size=10, max_overflow=10)
    try:
        # A crawl of every view goes faster than one token's default rate.
        settings = test_settings(WIKI_HTTP_RATE_PER_SECOND=10_000, WIKI_HTTP_RATE_BURST=10_000)
        await retain_sample(engine, TENANT, OWNER, SAMPLE)
        await store_memories(engine, RIVAL, OWNER, [MemoryIn(content=text) for text in RIVAL_MEMORIES])
        await store_memories(engine, MOVES, OWNER, [MemoryIn(content=text, metadata=_ALICE, occurred_at=at)
                                                    for text, at in MOVES_MEMORIES])
        async with running_worker(temporal_env.client, engine, settings):
            await compile_scope(temporal_env.client, settings, TENANT, OWNER)
            await compile_scope(temporal_env.client, settings, RIVAL, OWNER)
            await compile_scope(temporal_env.client, settings, MOVES, OWNER)
        tokens = (await token_for(engine, TENANT, rights="read"), await token_for(engine, TENANT, rights="operator"),
                  await token_for(engine, RIVAL, rights="read"), await token_for(engine, MOVES, rights="read"))

        async def no_temporal():
            raise AssertionError("the web view never connects to Temporal")

        async with serving(create_app(engine, no_temporal, settings)) as base:
            yield ServedWiki(base, postgres_server.url(name), engine, *tokens)
    finally:
        await engine.dispose()
        await execute_as_admin(postgres_server.url("postgres"), f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
