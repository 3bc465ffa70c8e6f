"""The web view: p50 / p95 of each view (home, page, memory, graph, runs, search) on a 10,000-page
scope, the home and the graph also right after a write; and on the compiled 700-memory sample, that
every page renders.

`python -m bench web` runs this part alone.

The 10,000-page scope is the reads part's generated scope (bench/reads.py) plus three claims per
section, each citing one or two memories, one of them linking to another page, and a ledger of
compile runs. `wiki serve` runs as its own process; one keep-alive client sends the requests one
after the other, with the bearer token (a browser's cookie is looked up the same way). A view the
server keeps per scope revision (home, graph, page) is measured as served again; the home and the
graph are measured a second time with a committed write to the scope before each request, so each
of those is read afresh.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlencode

import httpx
from markupsafe import escape
from sqlalchemy import text
from sqlalchemy.pool import NullPool

from app.worker import build_worker
from bench.reads import OWNER, PAGES, TENANT, generate_scope, wiki_serve, word
from bench.services import Services
from domain.memory import MemoryIn
from domain.tokens import new_token
from runtime.database import engine_for
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from sample.corpus import generate_sample
from store.api_tokens import create_token
from store.memories import store_memories

REQUESTS = int(os.environ.get("BENCH_WEB_REQUESTS", "300"))
WARMUP_REQUESTS = 30
# The views whose address is always the same (home, graph, runs) are asked fewer times.
SAME_VIEW_REQUESTS = max(20, REQUESTS // 3)
AFTER_WRITE_REQUESTS = max(10, REQUESTS // 10)
VIEWS = ("home", "page", "memory", "graph", "runs", "search")
TARGET_P95_MS = 100.0
TARGETS_MS = {view: TARGET_P95_MS for view in VIEWS}
AFTER_WRITE_VIEWS = ("home", "graph")
RUNS = 200
SAMPLE_MEMORIES = 700
UNLIMITED = {"WIKI_HTTP_RATE_PER_SECOND": "100000", "WIKI_HTTP_RATE_BURST": "100000"}
_KINDS = ["entity", "entity", "entity", "topic", "decision"]
# What each view's page always holds (a response without it is a failure, not a figure).
_CHECK = {"home": "Recent changes", "page": 'class="claim ', "memory": "Everything citing it", "graph": "<svg",
          "runs": 'class="runs"', "search": "Pages matching"}
log = logging.getLogger("bench.web")

_CLAIMS = [
    """
    INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, status, confidence,
                                     corroboration, first_seen_at, last_seen_at)
    SELECT md5('claim' || i || '/' || n || '/' || c)::uuid, md5('section' || i || '/' || n)::uuid, c,
           CASE WHEN c = 1 THEN 'Seen with [page ' || ((i * 7 + 1) % :pages) || '](/wiki/entity/page-'
                                || ((i * 7 + 1) % :pages) || ') on claim ' || c || ' of section ' || n || '.'
                ELSE 'Claim ' || c || ' of section ' || n || ' on page ' || i || ', **said twice**.' END,
           'claim ' || c || ' ' || n || ' ' || i, 'fact',
           CASE WHEN c = 3 THEN 'unverified' ELSE 'verified' END,
           CASE WHEN c = 2 THEN 0.8 ELSE 0.7 END, CASE WHEN c = 2 THEN 2 ELSE 1 END, now(), now()
    FROM generate_series(0, :pages - 1) AS i, generate_series(1, 3) AS n, generate_series(1, 3) AS c
    """,
    """
    INSERT INTO wiki_claim_sources (claim_id, tenant_id, owner_id, memory_id)
    SELECT md5('claim' || i || '/' || n || '/' || c)::uuid, :tenant, :owner,
           CAST(md5('memory' || ((i + m) % :pages))::uuid AS text)
    FROM generate_series(0, :pages - 1) AS i, generate_series(1, 3) AS n, generate_series(1, 3) AS c,
         generate_series(0, 1) AS m
    WHERE m = 0 OR c = 2
    """,
    # The ledger: compile runs of the scope, one an hour, the last one still running.
    """
    INSERT INTO wiki_compile_jobs (id, kind, tenant_id, owner_id, workflow_id, run_id, trigger, status, metrics,
                                   started_at, finished_at)
    SELECT md5('run' || r)::uuid, 'compile', :tenant, :owner, 'wiki-compile-' || :tenant || '-' || :owner,
           md5('run-id' || r), CASE WHEN r % 10 = 0 THEN 'admin' ELSE 'memory_retain' END,
           CASE WHEN r = :runs - 1 THEN 'running' ELSE 'succeeded' END,
           jsonb_build_object('records_read', 50 + r % 7, 'pages_created', r % 5),
           now() - make_interval(hours => :runs - r), now() - make_interval(hours => :runs - r) + interval '3 minutes'
    FROM generate_series(0, :runs - 1) AS r
    """,
    "ANALYZE",
]
# A committed write to the scope before a request measured "after a write": a claim seen again.
_WRITE = """
    UPDATE wiki_section_claims SET last_seen_at = now() WHERE id = md5('claim' || :page || '/1/1')::uuid
"""


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def _memory_id(number: int) -> uuid.UUID:
    """The id the generated scope gives memory `number` (md5('memory' || number) in SQL)."""
    return uuid.UUID(hashlib.md5(f"memory{number}".encode()).hexdigest())


def _search_words(rng: random.Random) -> str:
    """A title word, two title words or a word's prefix, as the reads part searches."""
    page = rng.randrange(PAGES)
    choice = rng.randrange(3)
    return (word(page * 3) if choice == 0 else f"{word(page * 3)} {word(page * 7 + 11)}" if choice == 1
            else word(page * 13 + 5)[:4])


def request_plan(rng: random.Random) -> dict[str, list[str]]:
    """The addresses each view is asked for, warm-up first."""
    many, same = REQUESTS + WARMUP_REQUESTS, SAME_VIEW_REQUESTS + WARMUP_REQUESTS
    return {
        "home": ["/"] * same,
        "page": [f"/wiki/{_KINDS[p % 5]}/page-{p}" for p in (rng.randrange(PAGES) for _ in range(many))],
        "memory": [f"/memories/{_memory_id(rng.randrange(PAGES))}" for _ in range(many)],
        "graph": ["/graph"] * same,
        "runs": ["/runs"] * same,
        "search": [f"/search?{urlencode({'q': _search_words(rng)})}" for _ in range(many)],
    }


async def _timed(http: httpx.AsyncClient, view: str, paths: list[str], warmup: int = WARMUP_REQUESTS,
                 before: Callable[[int], Awaitable[None]] | None = None) -> dict:
    timings = []
    load_start = os.getloadavg()
    for index, path in enumerate(paths):
        if before is not None:
            await before(index)
        started = time.perf_counter()
        response = await http.get(path)
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200 or _CHECK[view] not in response.text:
            raise RuntimeError(f"GET {path}: {response.status_code} {response.text[:200]}")
        if index >= warmup:
            timings.append(elapsed)
    return {"requests": len(timings), "p50_ms": round(statistics.median(timings), 2),
            "p95_ms": round(_percentile(timings, 0.95), 2), "max_ms": round(max(timings), 2),
            "load_average": [round(value, 2) for value in (*load_start, *os.getloadavg())]}


async def bench_large_scope(database_url: str, data_dir: Path) -> dict:
    engine = engine_for(database_url, poolclass=NullPool)
    try:
        counts = await generate_scope(engine)
        async with engine.begin() as conn:
            for statement in _CLAIMS:
                params = {name: value for name, value in
                          {"tenant": TENANT, "owner": OWNER, "pages": PAGES, "runs": RUNS}.items()
                          if f":{name}" in statement}
                await conn.execute(text(statement), params)
            for table in ("wiki_section_claims", "wiki_compile_jobs"):
                counts[table] = (await conn.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one()
        token = new_token()
        async with engine.begin() as conn:
            await create_token(conn, TENANT, OWNER, token, name="bench")
    finally:
        await engine.dispose()
    plan = request_plan(random.Random(28))
    writer = engine_for(database_url, pool_size=1, max_overflow=0)
    written = random.Random(29)

    async def write(_: int) -> None:
        async with writer.begin() as conn:
            await conn.execute(text(_WRITE), {"page": str(written.randrange(PAGES))})

    views: dict[str, dict] = {}
    after_write: dict[str, dict] = {}
    try:
        async with wiki_serve(database_url, data_dir, environment=UNLIMITED) as (base, _), httpx.AsyncClient(
                base_url=base, timeout=30, headers={"Authorization": f"Bearer {token}"}) as http:
            for view in VIEWS:
                views[view] = await _timed(http, view, plan[view])
                log.info("%s: p50 %.1f ms, p95 %.1f ms (load %s)", view, views[view]["p50_ms"],
                         views[view]["p95_ms"], views[view]["load_average"][:3])
            for view in AFTER_WRITE_VIEWS:
                paths = plan[view][:AFTER_WRITE_REQUESTS + 3]
                after_write[view] = await _timed(http, view, paths, warmup=3, before=write)
                log.info("%s after a write: p50 %.1f ms, p95 %.1f ms", view, after_write[view]["p50_ms"],
                         after_write[view]["p95_ms"])
    finally:
        await writer.dispose()
    return {"scope": counts, "views": views, "after_write": after_write}


async def _compiled_sample(services: Services, database_url: str) -> None:
    """The 700-memory sample retained into sample/alice and compiled by the scripted planner."""
    settings = Settings(WIKI_LLM="scripted", WIKI_DEBOUNCE_SECONDS=0, WIKI_TASK_QUEUE=f"bench-web-{uuid.uuid4()}")
    engine = engine_for(database_url, pool_size=10, max_overflow=10)
    try:
        memories = [MemoryIn.model_validate(row) for row in generate_sample(SAMPLE_MEMORIES, 7)]
        await store_memories(engine, "sample", "alice", memories)
        async with build_worker(services.client, engine, settings):
            handle = await signal_compile(services.client, "sample", "alice", trigger="admin", settings=settings)
            await handle.result()
    finally:
        await engine.dispose()


async def check_sample(services: Services) -> dict:
    """Compile the 700-memory sample, then open every active page in the web view: status, title, claims;
    and the graph, which must list every active page."""
    async with services.fresh_database() as url:
        await _compiled_sample(services, url)
        engine = engine_for(url, poolclass=NullPool)
        try:
            token = new_token()
            async with engine.begin() as conn:
                await create_token(conn, "sample", "alice", token, name="bench")
                rows = (await conn.execute(text("""
                    SELECT p.type, p.slug, p.title,
                           (SELECT count(*) FROM wiki_page_sections s JOIN wiki_section_claims c ON c.section_id = s.id
                            WHERE s.page_id = p.id) AS claims
                    FROM wiki_pages p WHERE p.tenant_id = 'sample' AND p.owner_id = 'alice' AND p.status = 'active'
                """))).all()
        finally:
            await engine.dispose()
        rendered, failures = 0, []
        with tempfile.TemporaryDirectory(prefix="wiki-bench-web-") as data_dir:
            async with wiki_serve(url, Path(data_dir), environment=UNLIMITED) as (base, _), httpx.AsyncClient(
                    base_url=base, timeout=30, headers={"Authorization": f"Bearer {token}"}) as http:
                for row in rows:
                    shown = await http.get(f"/wiki/{row.type}/{row.slug}")
                    ok = (shown.status_code == 200 and f"<h1>{escape(row.title)}</h1>" in shown.text
                          and shown.text.count('<li class="claim ') == row.claims)
                    rendered += ok
                    if not ok:
                        failures.append(f"{row.type}/{row.slug}: {shown.status_code}")
                graph = (await http.get("/graph")).text
    listed = set(re.findall(r'<tr><td><a class="page-link type-\w+" href="/wiki/(\w+/[^"]+)"', graph))
    return {"memories": SAMPLE_MEMORIES, "active_pages": len(rows), "rendered": rendered,
            "claims": sum(row.claims for row in rows), "failures": failures[:10],
            "graph_lists_every_page": listed == {f"{row.type}/{row.slug}" for row in rows}}


async def measure_web(services: Services, repeats: int) -> dict:
    """The web part (`repeats` does not apply: each view gets its own number of requests)."""
    sample = await check_sample(services)
    async with services.fresh_database() as url:
        with tempfile.TemporaryDirectory(prefix="wiki-bench-web-") as data_dir:
            large = await bench_large_scope(url, Path(data_dir))
    return {**large, "sample": sample, "targets_p95_ms": TARGETS_MS,
            "method": f"{REQUESTS} sequential requests of a page, a memory and a search (random ones) and "
                      f"{SAME_VIEW_REQUESTS} of the home, the graph and the runs, each view after {WARMUP_REQUESTS} "
                      "warm-up requests; one keep-alive httpx client with a bearer token, `wiki serve` in its own "
                      "process, same machine",
            "after_write_method": f"{AFTER_WRITE_REQUESTS} requests, each after a committed write to the scope "
                                  "(a claim seen again) from another connection"}
