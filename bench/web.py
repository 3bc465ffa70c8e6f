"""The web view: p50 / p95 of rendering a page (claims, citations, backlinks, related) on a 10,000-page
scope, of the home and of the graph; and on the compiled 700-memory sample, that every page renders.

`python -m bench web` runs this part alone.

The 10,000-page scope is the reads part's generated scope (bench/reads.py) plus three claims per
section, each citing one or two memories, one of them linking to another page. `wiki serve` runs as
its own process; one keep-alive client sends the requests one after the other, with the bearer
token (a browser's cookie is looked up the same way).
"""

from __future__ import annotations

import logging
import os
import random
import re
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from markupsafe import escape
from sqlalchemy import text
from sqlalchemy.pool import NullPool

from app.worker import build_worker
from bench.reads import OWNER, PAGES, TENANT, generate_scope, wiki_serve
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
TARGETS_MS = {"page": 100.0}
SAMPLE_MEMORIES = 700
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
    "ANALYZE",
]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


async def _timed(http: httpx.AsyncClient, paths: list[str], check: str) -> dict:
    timings = []
    for index, path in enumerate(paths):
        started = time.perf_counter()
        response = await http.get(path)
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200 or check not in response.text:
            raise RuntimeError(f"GET {path}: {response.status_code} {response.text[:200]}")
        if index >= WARMUP_REQUESTS:
            timings.append(elapsed)
    return {"requests": len(timings), "p50_ms": round(statistics.median(timings), 2),
            "p95_ms": round(_percentile(timings, 0.95), 2), "max_ms": round(max(timings), 2)}


async def bench_large_scope(database_url: str, data_dir: Path) -> dict:
    engine = engine_for(database_url, poolclass=NullPool)
    try:
        counts = await generate_scope(engine)
        async with engine.begin() as conn:
            for statement in _CLAIMS:
                params = {name: value for name, value in {"tenant": TENANT, "owner": OWNER, "pages": PAGES}.items()
                          if f":{name}" in statement}
                await conn.execute(text(statement), params)
            counts["wiki_section_claims"] = (await conn.execute(text("SELECT count(*) FROM wiki_section_claims"))
                                             ).scalar_one()
        token = new_token()
        async with engine.begin() as conn:
            await create_token(conn, TENANT, OWNER, token, name="bench")
    finally:
        await engine.dispose()
    rng = random.Random(28)
    kinds = ["entity", "entity", "entity", "topic", "decision"]
    pages = [rng.randrange(PAGES) for _ in range(REQUESTS + WARMUP_REQUESTS)]
    views: dict[str, dict] = {}
    headers = {"Authorization": f"Bearer {token}"}
    async with wiki_serve(database_url, data_dir) as (base, _), httpx.AsyncClient(base_url=base, timeout=30,
                                                                                  headers=headers) as http:
        views["page"] = await _timed(http, [f"/wiki/{kinds[p % 5]}/page-{p}" for p in pages], 'class="claim ')
        few = WARMUP_REQUESTS + max(20, REQUESTS // 10)
        views["home"] = await _timed(http, ["/"] * few, "Recent changes")
        views["graph"] = await _timed(http, ["/graph"] * few, "<svg")
    for view, figures in views.items():
        log.info("%s: p50 %.1f ms, p95 %.1f ms", view, figures["p50_ms"], figures["p95_ms"])
    return {"scope": counts, "views": views}


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
        unlimited = {"WIKI_HTTP_RATE_PER_SECOND": "100000", "WIKI_HTTP_RATE_BURST": "100000"}
        with tempfile.TemporaryDirectory(prefix="wiki-bench-web-") as data_dir:
            async with wiki_serve(url, Path(data_dir), environment=unlimited) as (base, _), httpx.AsyncClient(
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
            "method": f"{REQUESTS} sequential page views (random pages) after {WARMUP_REQUESTS} warm-up ones, "
                      "one keep-alive httpx client with a bearer token, `wiki serve` in its own process, same machine"}
