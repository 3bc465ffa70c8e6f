"""Read latency over HTTP on a 10,000-page scope: p50 / p95 of search, get_page and related.

`python -m bench reads` runs this part alone.

The scope is generated in SQL (seconds, not a compile of 10,000 pages): pages whose titles and
bodies draw on an 8,000-word synthetic vocabulary (each word in ~100 pages, so a search ranks a
realistic number of matches), three cited sections per page, two aliases per page, and ~5 links per
page with reciprocal pairs (cycles) and 100 hub pages that 10% of the links point at. `wiki serve`
runs as its own process; one keep-alive client sends the requests one after the other.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import NullPool

from bench.services import Services
from domain.tokens import new_token
from runtime.database import engine_for
from runtime.devservices import free_port
from store.api_tokens import create_token

PAGES = 10_000
TENANT, OWNER = "bench", "reader"
REQUESTS_PER_ENDPOINT = int(os.environ.get("BENCH_READ_REQUESTS", "300"))
WARMUP_REQUESTS = 30
TARGETS_MS = {"search": 50.0, "get_page": 50.0, "related": 150.0}
log = logging.getLogger("bench.reads")

# Syllables make an 8,000-word vocabulary of three-syllable words (20 ** 3); word k is syllables
# k % 20, k / 20 % 20 and k / 400 % 20.
_SYLLABLES = ["ba", "ko", "li", "mu", "ne", "ra", "si", "to", "vu", "xe",
              "da", "fo", "gi", "hu", "je", "pa", "qo", "ri", "su", "wy"]
_WORD = ("(SELECT s[1 + ({k}) % 20] || s[1 + (({k}) / 20) % 20] || s[1 + (({k}) / 400) % 20] "
         "FROM (SELECT CAST(:syllables AS text[]) AS s) AS v)")


def word(k: int) -> str:
    k %= 8000
    return _SYLLABLES[k % 20] + _SYLLABLES[(k // 20) % 20] + _SYLLABLES[(k // 400) % 20]


def _w(expression: str) -> str:
    return _WORD.format(k=f"(({expression}) % 8000 + 8000) % 8000")


GENERATE = [
    # Pages: title of two words and the page number; a summary; a body of 60 words.
    f"""
    INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title, summary, body_md, hubness_score,
                            last_compiled_at, created_at, updated_at)
    SELECT md5('page' || i)::uuid, :tenant, :owner,
           (ARRAY['entity', 'entity', 'entity', 'topic', 'decision'])[1 + i % 5],
           'page-' || i,
           initcap({_w('i * 3')}) || ' ' || initcap({_w('i * 7 + 11')}) || ' ' || i,
           'About ' || {_w('i * 3')} || ' and ' || {_w('i * 13 + 5')} || '.',
           (SELECT string_agg({_w('i * j * 31 + j')}, ' ') FROM generate_series(1, 60) AS j),
           CASE WHEN i < 100 THEN 50 ELSE 0 END,
           now() - make_interval(hours => i % 2000), now() - make_interval(hours => i % 2000),
           now() - make_interval(hours => i % 2000)
    FROM generate_series(0, :pages - 1) AS i
    """,
    # Memories the sections cite: one per page.
    """
    INSERT INTO memory_units (id, tenant_id, owner_id, content, created_at, updated_at)
    SELECT md5('memory' || i)::uuid, :tenant, :owner, 'Memory number ' || i || ' about page ' || i || '.',
           now() - make_interval(hours => i % 2000), now() - make_interval(hours => i % 2000)
    FROM generate_series(0, :pages - 1) AS i
    """,
    # Three sections per page, each citing two memories.
    f"""
    INSERT INTO wiki_page_sections (id, page_id, section_slug, heading, body_md, position, created_at, updated_at)
    SELECT md5('section' || i || '/' || n)::uuid, md5('page' || i)::uuid,
           (ARRAY['overview', 'notes', 'related'])[n], (ARRAY['Overview', 'Notes', 'Related'])[n],
           (SELECT string_agg({_w('i * n * 17 + j')}, ' ') FROM generate_series(1, 40) AS j), n,
           now() - make_interval(hours => i % 2000), now() - make_interval(hours => i % 2000)
    FROM generate_series(0, :pages - 1) AS i, generate_series(1, 3) AS n
    """,
    """
    INSERT INTO wiki_section_sources (id, section_id, source_kind, source_ref)
    SELECT gen_random_uuid(), md5('section' || i || '/' || n)::uuid, 'memory_unit',
           CAST(md5('memory' || ((i + m) % :pages))::uuid AS text)
    FROM generate_series(0, :pages - 1) AS i, generate_series(1, 3) AS n, generate_series(0, 1) AS m
    """,
    # Aliases: the normalised title, and the first title word alone.
    f"""
    INSERT INTO wiki_page_aliases (id, page_id, alias)
    SELECT gen_random_uuid(), md5('page' || i)::uuid, a
    FROM generate_series(0, :pages - 1) AS i,
         LATERAL (VALUES (lower({_w('i * 3')} || ' ' || {_w('i * 7 + 11')} || ' ' || i)),
                         ({_w('i * 3')} || ' ' || i)) AS aliases(a)
    """,
    # Links: three "random" references per page, one to a hub, and reciprocal co-mention pairs.
    """
    INSERT INTO wiki_page_links (id, from_page_id, to_page_id, kind, context)
    SELECT gen_random_uuid(), md5('page' || i)::uuid, md5('page' || t)::uuid, 'reference', NULL
    FROM generate_series(0, :pages - 1) AS i,
         LATERAL (SELECT DISTINCT t FROM (VALUES ((i * 7 + 1) % :pages), ((i * 13 + 5) % :pages),
                                                 ((i * 101 + 29) % :pages), (i % 100)) AS v(t)
                  WHERE t <> i) AS targets
    """,
    """
    INSERT INTO wiki_page_links (id, from_page_id, to_page_id, kind, context)
    SELECT gen_random_uuid(), md5('page' || a)::uuid, md5('page' || b)::uuid, 'reference', 'co_mention:bench'
    FROM generate_series(0, :pages - 2, 2) AS i, LATERAL (VALUES (i, i + 1), (i + 1, i)) AS pairs(a, b)
    ON CONFLICT DO NOTHING
    """,
    "ANALYZE",
]


async def generate_scope(engine: AsyncEngine, pages: int = PAGES) -> dict[str, int]:
    params = {"tenant": TENANT, "owner": OWNER, "pages": pages, "syllables": _SYLLABLES}
    async with engine.begin() as conn:
        for statement in GENERATE:
            used = {name: value for name, value in params.items() if f":{name}" in statement}
            await conn.execute(text(statement), used)
    # ANALYZE ran inside that transaction and is committed with it: the planner sees 10,000 pages.
    async with engine.connect() as conn:
        counts = {}
        for table in ("wiki_pages", "wiki_page_sections", "wiki_page_aliases", "wiki_page_links",
                      "wiki_section_sources", "memory_units"):
            counts[table] = (await conn.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one()
    return counts


@asynccontextmanager
async def wiki_serve(database_url: str, data_dir: Path, *options: str,
                     environment: dict[str, str] | None = None) -> AsyncIterator[tuple[str, int]]:
    """`wiki serve` (with `options`) in its own process on a loopback port; its base URL once it
    answers, and its pid."""
    port = free_port()
    wiki = str(Path(sys.executable).with_name("wiki"))
    process = await asyncio.create_subprocess_exec(
        wiki, "serve", "--host", "127.0.0.1", "--port", str(port), *options,
        env={**os.environ, "DATABASE_URL": database_url, "WIKI_DATA_DIR": str(data_dir), **(environment or {})},
        stderr=asyncio.subprocess.PIPE, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        async with httpx.AsyncClient(base_url=base, timeout=2) as http:
            while True:
                if process.returncode is not None:
                    raise RuntimeError(f"wiki serve exited: {(await process.stderr.read()).decode()}")
                try:
                    if (await http.get("/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("wiki serve did not answer within 60 s")
                await asyncio.sleep(0.1)  # waiting for another process to listen: nothing to await on
        yield base, process.pid
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 60)


def _requests(rng: random.Random, count: int) -> dict[str, list[tuple[str, dict]]]:
    pages = [rng.randrange(PAGES) for _ in range(count)]
    kinds = ["entity", "entity", "entity", "topic", "decision"]
    searches = []
    for i in range(count):
        page = rng.randrange(PAGES)
        choice = i % 3
        query = (word(page * 3) if choice == 0 else  # a title word
                 f"{word(page * 3)} {word(page * 7 + 11)}" if choice == 1 else  # two title words
                 word(page * 13 + 5)[:4])  # a prefix
        searches.append(("/v1/search", {"q": query, "limit": 10}))
    return {
        "search": searches,
        "get_page": [(f"/v1/pages/{kinds[p % 5]}/page-{p}", {}) for p in pages],
        "related": [(f"/v1/pages/{kinds[p % 5]}/page-{p}/related", {"limit": 10}) for p in reversed(pages)],
    }


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


async def measure(base: str, token: str, count: int = REQUESTS_PER_ENDPOINT) -> dict:
    rng = random.Random(15)
    plan = _requests(rng, count + WARMUP_REQUESTS)
    figures: dict[str, dict] = {}
    async with httpx.AsyncClient(base_url=base, timeout=30, headers={"Authorization": f"Bearer {token}"}) as http:
        for endpoint, calls in plan.items():
            timings, hits = [], []
            for index, (path, params) in enumerate(calls):
                started = time.perf_counter()
                response = await http.get(path, params=params)
                elapsed = (time.perf_counter() - started) * 1000
                response.raise_for_status()
                if index >= WARMUP_REQUESTS:
                    timings.append(elapsed)
                    body = response.json()
                    hits.append(len(body.get("hits", [])) if endpoint != "get_page" else body["total_chars"])
            figures[endpoint] = {
                "requests": len(timings), "p50_ms": round(statistics.median(timings), 2),
                "p95_ms": round(_percentile(timings, 0.95), 2), "max_ms": round(max(timings), 2),
                "mean_results": round(statistics.mean(hits), 1),
            }
            log.info("%s: p50 %.1f ms, p95 %.1f ms over %d requests", endpoint, figures[endpoint]["p50_ms"],
                     figures[endpoint]["p95_ms"], len(timings))
    return figures


async def bench_reads(database_url: str, data_dir: Path) -> dict:
    """Generate the scope in `database_url` (migrated, empty), serve it, measure; the figures."""
    engine = engine_for(database_url, poolclass=NullPool)
    try:
        started = time.monotonic()
        counts = await generate_scope(engine)
        log.info("generated %d pages in %.1f s", counts["wiki_pages"], time.monotonic() - started)
        token = new_token()
        async with engine.begin() as conn:
            await create_token(conn, TENANT, OWNER, token, name="bench")
    finally:
        await engine.dispose()
    async with wiki_serve(database_url, data_dir) as (base, _):
        figures = await measure(base, token)
    return {
        "scope": counts,
        "endpoints": figures,
        "targets_p95_ms": TARGETS_MS,
        "method": f"{REQUESTS_PER_ENDPOINT} sequential requests per endpoint after {WARMUP_REQUESTS} warm-up ones, "
                  "one keep-alive httpx client, `wiki serve` in its own process, same machine",
    }


def read_p95(reads: dict) -> dict[str, float]:
    return {endpoint: figures["p95_ms"] for endpoint, figures in reads["endpoints"].items()}


async def measure_reads(services: Services, repeats: int) -> dict:
    """The reads part on a fresh database of the bench's Postgres (`repeats` does not apply: each
    endpoint gets REQUESTS_PER_ENDPOINT requests)."""
    async with services.fresh_database() as url:
        with tempfile.TemporaryDirectory(prefix="wiki-bench-reads-") as data_dir:
            return await bench_reads(url, Path(data_dir))
