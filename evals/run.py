"""Compile a corpus through the real pipeline and score it: retain, compile, compile again, rebuild.

Everything runs on real services (Postgres, a Temporal dev server, a worker with the scripted
planner), the way `wiki compile` and `wiki rebuild` do. For each tenant:

1. retain its memories and compile (trigger `admin`) until the workflow completes; score that wiki;
2. compile again with nothing new: the wiki must not change ("recompile identical");
3. `rebuild_scope` (archive, rewind, compile everything again): the active rows must equal the
   first compile's ("rebuild identical"), the difference counted row by row.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from app.operations import rebuild_scope
from app.worker import build_model_client, build_worker
from domain.memory import MemoryIn
from evals.corpus import Corpus, TenantCorpus
from evals.metrics import TenantMetrics, score
from evals.snapshot import read_snapshot, rows_for_identity
from runtime.database import engine_for, migrate
from runtime.devservices import EmbeddedPostgres, free_port, temporal_cli_path
from runtime.search_attributes import ALL_SEARCH_ATTRIBUTES
from runtime.settings import Settings, load_settings
from runtime.temporal_client import signal_compile
from store.memories import store_memories


class Identity(BaseModel):
    identical: bool
    differing_rows: int
    rows: int


class TenantResult(BaseModel):
    metrics: TenantMetrics
    recompile: Identity | None = None
    rebuild: Identity | None = None
    compile_seconds: float


# `python -m evals --model`: the model the environment names (WIKI_LLM, WIKI_MODEL_ID, ...), e.g. a local
# server's (docs/local-models.md), instead of the scripted planner.
MODEL_FROM_ENVIRONMENT = {"on": False}


def eval_settings() -> Settings:
    if MODEL_FROM_ENVIRONMENT["on"]:
        return load_settings().model_copy(update={"debounce_seconds": 0.0, "task_queue": f"eval-{uuid.uuid4()}"})
    return Settings(WIKI_LLM="scripted", WIKI_DEBOUNCE_SECONDS=0, WIKI_TASK_QUEUE=f"eval-{uuid.uuid4()}")


def _identity(before: set[tuple], after: set[tuple]) -> Identity:
    differing = len(before ^ after)
    return Identity(identical=differing == 0, differing_rows=differing, rows=len(before))


async def _compile(client: Client, settings: Settings, tenant: str, owner: str, trigger: str = "admin") -> None:
    handle = await signal_compile(client, tenant, owner, trigger=trigger, settings=settings)
    await handle.result()


async def _tenant(client: Client, engine: AsyncEngine, settings: Settings, corpus: TenantCorpus,
                  other_secrets: list[str], check_identity: bool) -> TenantResult:
    started = time.monotonic()
    await store_memories(engine, corpus.tenant, corpus.owner, [MemoryIn.model_validate(m) for m in corpus.memories])
    await _compile(client, settings, corpus.tenant, corpus.owner)
    seconds = time.monotonic() - started
    first = await read_snapshot(engine, corpus.tenant, corpus.owner)
    result = TenantResult(metrics=score(corpus, first, other_secrets), compile_seconds=round(seconds, 1))
    if check_identity:
        rows = rows_for_identity(first)
        await _compile(client, settings, corpus.tenant, corpus.owner)
        result.recompile = _identity(rows, rows_for_identity(await read_snapshot(engine, corpus.tenant, corpus.owner)))
        _, handle = await rebuild_scope(client, engine, settings, corpus.tenant, corpus.owner)
        await handle.result()
        result.rebuild = _identity(rows, rows_for_identity(await read_snapshot(engine, corpus.tenant, corpus.owner)))
    return result


async def evaluate(client: Client, engine: AsyncEngine, corpus: Corpus, *,
                   check_identity: bool = True) -> list[TenantResult]:
    """Compile every tenant of the corpus (at the same time, on one worker) and score each."""
    settings = eval_settings()
    secrets = [t.secret for t in corpus.tenants]
    async with build_worker(client, engine, settings):
        return list(await asyncio.gather(*[
            _tenant(client, engine, settings, tenant, [s for s in secrets if s != tenant.secret], check_identity)
            for tenant in corpus.tenants]))


@asynccontextmanager
async def private_services(prefix: str = "wiki-eval-") -> AsyncIterator[tuple[Client, AsyncEngine]]:
    """A throwaway embedded Postgres (migrated, not durable: it is deleted afterwards) and Temporal dev
    server, for the eval and the golden fixture's tools."""
    import tempfile

    async with AsyncExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))
        server = EmbeddedPostgres(pgdata=tmp / "pg" / "data", port=free_port(), durable=False)
        server.ensure_running()
        stack.callback(server.stop)
        engine = engine_for(server.url(), pool_size=20, max_overflow=10)
        stack.push_async_callback(engine.dispose)
        await migrate(engine)
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=str(temporal_cli_path()), search_attributes=ALL_SEARCH_ATTRIBUTES,
            data_converter=pydantic_data_converter, dev_server_log_level="error")
        stack.push_async_callback(env.shutdown)
        yield env.client, engine


# The simulator accepts any key; the SDK needs one to send.
SIMULATOR_KEY = "sim-anthropic-key"


@asynccontextmanager
async def through_simulator(base_url: str, **settings: Any) -> AsyncIterator[tuple[Settings, Any]]:
    """Settings for WIKI_LLM=anthropic and a model client whose SDK reaches the Claude simulator at
    `base_url` through its own ANTHROPIC_BASE_URL setting (set for the block, restored after)."""
    chosen = Settings(**{"WIKI_LLM": "anthropic", "ANTHROPIC_API_KEY": SIMULATOR_KEY, "WIKI_DEBOUNCE_SECONDS": 0,
                         "WIKI_TASK_QUEUE": f"sim-{uuid.uuid4()}", **settings})
    before = os.environ.get("ANTHROPIC_BASE_URL")
    os.environ["ANTHROPIC_BASE_URL"] = base_url
    model_client = build_model_client(chosen)
    try:
        yield chosen, model_client
    finally:
        await model_client.aclose()
        if before is None:
            os.environ.pop("ANTHROPIC_BASE_URL", None)
        else:
            os.environ["ANTHROPIC_BASE_URL"] = before


def publish(results: Any, out: Path | None, results_path: Path, page_path: Path,
            page: Callable[[Any], str], indent: int = 2) -> str | None:
    """An eval's results as JSON: to `out` alone when given (None back), else to `results_path` with
    its docs page `page(results)` at `page_path` (the page back, for the terminal)."""
    text = json.dumps(results, indent=indent) + "\n"
    if out is not None:
        out.write_text(text)
        return None
    results_path.write_text(text)
    shown = page(results)
    page_path.write_text(shown)
    return shown
