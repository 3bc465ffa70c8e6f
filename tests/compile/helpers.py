"""Shared helpers of the compile tests: a worker on a private task queue, the sample, a wiki snapshot."""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from app.worker import build_worker
from chaos.measure import ledger_rows
from domain.memory import MemoryIn
from runtime.settings import Settings
from runtime.temporal_client import live_pollers, signal_compile
from sample.corpus import generate_sample
from store.memories import store_memories


def test_settings(**overrides) -> Settings:
    values = {"WIKI_LLM": "scripted", "WIKI_DEBOUNCE_SECONDS": 0, "WIKI_TASK_QUEUE": f"tq-{uuid.uuid4()}"}
    values.update(overrides)
    return Settings(**values)


test_settings.__test__ = False  # a helper, not a test, wherever it is imported


@asynccontextmanager
async def running_worker(client: Client, engine: AsyncEngine, settings: Settings, **options):
    """A worker on the settings' task queue, polling by the time the block starts (so a command that
    checks for a worker finds it)."""
    worker = build_worker(client, engine, settings, **options)
    async with worker:
        async def polling() -> list[str]:
            return await live_pollers(client, worker.task_queue)

        await poll(polling, timeout=30, every=0.05, what=f"a poller on {worker.task_queue}")
        yield worker


def sample_memories(count: int, seed: int = 7) -> list[MemoryIn]:
    return [MemoryIn.model_validate(row) for row in generate_sample(count, seed)]


async def retain_sample(engine: AsyncEngine, tenant: str, owner: str, count: int, seed: int = 7) -> int:
    result = await store_memories(engine, tenant, owner, sample_memories(count, seed))
    return result.changed


async def compile_scope(client: Client, settings: Settings, tenant: str, owner: str, trigger="admin") -> dict:
    handle = await signal_compile(client, tenant, owner, trigger=trigger, settings=settings)
    return await handle.result()


WIKI_TABLE_QUERIES = {
    "pages": "SELECT id, type, slug, title, summary, body_md, status, parent_page_id FROM wiki_pages "
             "WHERE tenant_id = :t AND owner_id = :o ORDER BY type, slug",
    "sections": "SELECT s.id, s.page_id, s.section_slug, s.heading, s.body_md, s.position FROM wiki_page_sections s "
                "JOIN wiki_pages p ON p.id = s.page_id WHERE p.tenant_id = :t AND p.owner_id = :o "
                "ORDER BY s.page_id, s.section_slug",
    "aliases": "SELECT a.page_id, a.alias, a.source FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id "
               "WHERE p.tenant_id = :t AND p.owner_id = :o ORDER BY a.page_id, a.alias",
    "links": "SELECT l.from_page_id, l.to_page_id, l.kind, l.context FROM wiki_page_links l "
             "JOIN wiki_pages p ON p.id = l.from_page_id WHERE p.tenant_id = :t AND p.owner_id = :o "
             "ORDER BY 1, 2, 3",
    "mentions": "SELECT id, alias, alias_normalized, mention_count, suggested_type, status, promoted_page_id, "
                "jsonb_path_query_array(sample_contexts, '$[*].quote') AS quotes FROM wiki_unresolved_mentions "
                "WHERE tenant_id = :t AND owner_id = :o ORDER BY alias_normalized, status",
    "sources": "SELECT ss.section_id, ss.source_kind, ss.source_ref FROM wiki_section_sources ss "
               "JOIN wiki_page_sections s ON s.id = ss.section_id JOIN wiki_pages p ON p.id = s.page_id "
               "WHERE p.tenant_id = :t AND p.owner_id = :o ORDER BY 1, 3",
    "cursor": "SELECT last_record_updated_at, last_record_id FROM wiki_compile_cursors "
              "WHERE tenant_id = :t AND owner_id = :o",
}


async def wiki_snapshot(engine: AsyncEngine, tenant: str, owner: str) -> dict[str, list[tuple]]:
    """Every row of the scope's wiki, without timestamps: equal snapshots mean the same wiki."""
    snapshot = {}
    async with engine.connect() as conn:
        for name, query in WIKI_TABLE_QUERIES.items():
            rows = await conn.execute(text(query), {"t": tenant, "o": owner})
            snapshot[name] = [tuple(row) for row in rows]
    return snapshot


# A scope's compile runs in the ledger, oldest first: the fault suite's reader, so the tests read what it reads.
ledger = ledger_rows


def ledger_total(rows: list[dict], key: str) -> float:
    return sum(row["metrics"].get(key, 0) for row in rows)


async def poll(check, *, timeout: float, what: str, every: float = 0.05, error: type[Exception] = AssertionError):
    """Re-evaluate `check` until it returns something truthy, for at most `timeout` seconds (a bounded
    wait on a condition, never a sleep standing in for synchronisation)."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise error(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(every)


@contextmanager
def own_process(args: list[str], log_path: Path, **popen: Any) -> Iterator[subprocess.Popen]:
    """`args` as a separate process writing its output to `log_path`, killed (if still alive) and reaped
    on the way out, however the block ends."""
    with log_path.open("ab") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, **popen)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
