"""Load on `wiki serve`: mixed reads and retains from 20 tokens, on loopback, bounded in time.

It is the bench's `server_load` part: `python -m bench server_load` (`make bench PARTS=server_load`) runs
it alone and writes its `server_load_*` figures and `detail.server_load` into bench/results.json
and its section of docs/BENCHMARKS.md (bench/server_load_report.py).

One scope of PAGES generated pages (bench/reads.py's generator) is read and written by TOKENS
write tokens, as a fleet of agents sharing a wiki would. `wiki serve --workers WORKERS` runs in its
own processes with its default limits. The load generator sends requests at a fixed arrival rate
(open loop: a slow answer does not slow the arrivals), MIX of them per kind, each token in turn, for
STEP_SECONDS per rate, rate after rate from RATES, and stops at the first rate the server does not
hold: a rate is held when every request got a 2xx and p95 ≤ P95_TARGET_MS. The highest rate held is
reported with its throughput and p50 / p95 / p99. Then an overload step sends OVERLOAD_CONCURRENCY
requests at a time for OVERLOAD_SECONDS without pause and counts the answers: beyond what it holds,
the server is expected to refuse with 503 or 429 and Retry-After, never a 500, and never to leave a
request unanswered (each has a REQUEST_TIMEOUT_SECONDS timeout, counted as a hang).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import tempfile
import time
from collections import Counter
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.pool import NullPool

from bench.cpu import CpuAccount
from bench.load_client import ConnectionLost, LoadClient
from bench.reads import OWNER, TENANT, generate_scope, wiki_serve, word
from bench.services import Services
from domain.tokens import new_token
from runtime.database import engine_for, execute_as_admin
from store.api_tokens import create_token

PAGES = int(os.environ.get("BENCH_LOAD_PAGES", "2000"))
TOKENS = 20
WORKERS = int(os.environ.get("BENCH_LOAD_WORKERS", "2"))
RATES = tuple(int(r) for r in os.environ.get("BENCH_LOAD_RATES", "100,200,300,400,500").split(","))
STEP_SECONDS = float(os.environ.get("BENCH_LOAD_STEP_SECONDS", "8"))
WARMUP_SECONDS = 2.0
OVERLOAD_CONCURRENCY = 300
OVERLOAD_SECONDS = 5.0
REQUEST_TIMEOUT_SECONDS = 15.0
P95_TARGET_MS = 100.0
# What an agent fleet asks of its wiki, per 100 requests.
MIX = {"get_page": 40, "search": 30, "changes": 10, "related": 5, "retain": 15}
log = logging.getLogger("bench.server_load")


@dataclass
class Step:
    rate: float
    seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    by_kind: dict[str, list[float]] = field(default_factory=dict)
    without_retry_after: int = 0
    hangs: int = 0
    transport_errors: int = 0
    cpu_seconds: dict[str, float] = field(default_factory=dict)

    def record(self, kind: str, status: int, elapsed_ms: float, retry_after: str | None) -> None:
        self.statuses[status] += 1
        if 200 <= status < 300:
            self.latencies_ms.append(elapsed_ms)
            self.by_kind.setdefault(kind, []).append(elapsed_ms)
        elif status in (429, 503) and not retry_after:
            self.without_retry_after += 1

    @property
    def answered(self) -> int:
        return sum(self.statuses.values())

    @property
    def errors(self) -> int:
        return sum(count for status, count in self.statuses.items() if not 200 <= status < 300) + self.hangs \
            + self.transport_errors

    def summary(self) -> dict:
        ordered = sorted(self.latencies_ms) or [0.0]

        def pct(fraction: float) -> float:
            return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 1)

        return {
            "offered_per_second": self.rate, "seconds": round(self.seconds, 2),
            "answered_per_second": round(self.answered / self.seconds, 1),
            "ok_per_second": round(len(self.latencies_ms) / self.seconds, 1),
            "p50_ms": pct(0.50), "p95_ms": pct(0.95), "p99_ms": pct(0.99),
            "errors": self.errors, "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "refusals_without_retry_after": self.without_retry_after, "hangs": self.hangs,
            "transport_errors": self.transport_errors,
            "p95_ms_by_kind": {kind: round(sorted(v)[min(len(v) - 1, int(0.95 * len(v)))], 1)
                               for kind, v in sorted(self.by_kind.items())},
            # CPU per answered request, by process tree: what the machine's cores paid for each one.
            "cpu_ms_per_request": {name: round(1000 * seconds / max(self.answered, 1), 2)
                                   for name, seconds in self.cpu_seconds.items()
                                   if name in ("server", "postgres", "temporal", "bench_process")},
            "machine_busy_share": self.cpu_seconds.get("machine_busy_share"),
            "other_processes_cpu_seconds": self.cpu_seconds.get("other_processes"),
        }

    def held(self) -> bool:
        return self.errors == 0 and bool(self.latencies_ms) and self.summary()["p95_ms"] <= P95_TARGET_MS


class Traffic:
    """The requests of the mix, drawn from a seeded generator: pages and words that exist in the scope."""

    def __init__(self, tokens: list[str], seed: int = 24) -> None:
        self.tokens, self.rng, self.count = tokens, random.Random(seed), 0
        # An agent polls for what changed since its last look: a minute ago.
        self.since = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
        self.kinds = [kind for kind, weight in MIX.items() for _ in range(weight)]

    def next(self) -> tuple[str, str, str, dict | None, dict | None]:
        """(kind, method, path, params, json body), with the token of this turn in the headers."""
        self.count += 1
        kind = self.rng.choice(self.kinds)
        page = self.rng.randrange(PAGES)
        page_type = ["entity", "entity", "entity", "topic", "decision"][page % 5]
        if kind == "get_page":
            return kind, "GET", f"/v1/pages/{page_type}/page-{page}", None, None
        if kind == "search":
            return kind, "GET", "/v1/search", {"q": word(page * 3), "limit": 10}, None
        if kind == "changes":
            return kind, "GET", "/v1/changes", {"since": self.since, "limit": 20}, None
        if kind == "related":
            return kind, "GET", f"/v1/pages/{page_type}/page-{page}/related", {"limit": 10}, None
        body = {"memories": [{"content": f"Load memory {self.count}: met {word(page * 3)} about "
                                         f"{word(page * 7 + 11)}.",
                              "metadata": {"entities": [{"name": word(page * 3).title(), "type": "person"}]}}]}
        return kind, "POST", "/v1/memories", None, body

    def token(self) -> str:
        return self.tokens[self.count % len(self.tokens)]


async def _send(http: LoadClient, traffic: Traffic, step: Step) -> None:
    kind, method, path, params, body = traffic.next()
    raw = http.encode(method, path, params, body, traffic.token())
    started = time.perf_counter()
    try:
        status, retry_after = await http.request(raw)
    except TimeoutError:
        step.hangs += 1
        return
    except (ConnectionLost, OSError):
        step.transport_errors += 1
        return
    step.record(kind, status, (time.perf_counter() - started) * 1000, retry_after)


async def open_loop(http: LoadClient, traffic: Traffic, rate: float, seconds: float) -> Step:
    """Requests at `rate` per second for `seconds`, whatever the answers' speed; waits for every answer."""
    step = Step(rate=rate, seconds=seconds)
    pending: set[asyncio.Task] = set()
    started = time.monotonic()
    for number in range(int(rate * seconds)):
        delay = started + number / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)  # the arrival schedule itself
        task = asyncio.create_task(_send(http, traffic, step))
        pending.add(task)
        task.add_done_callback(pending.discard)
    if pending:
        await asyncio.wait(pending)
    step.seconds = max(seconds, time.monotonic() - started)
    return step


async def closed_loop(http: LoadClient, traffic: Traffic, concurrency: int, seconds: float) -> Step:
    """`concurrency` requests at a time without pause for `seconds`."""
    step = Step(rate=0, seconds=seconds)
    deadline = time.monotonic() + seconds

    async def client() -> None:
        while time.monotonic() < deadline:
            await _send(http, traffic, step)

    started = time.monotonic()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    step.seconds = time.monotonic() - started
    step.rate = round(step.answered / step.seconds, 1)
    return step


async def prepare(database_url: str) -> list[str]:
    """The generated scope and TOKENS write tokens for it."""
    engine = engine_for(database_url, poolclass=NullPool)
    try:
        started = time.monotonic()
        counts = await generate_scope(engine, PAGES)
        log.info("generated %d pages in %.1f s", counts["wiki_pages"], time.monotonic() - started)
        tokens = [new_token() for _ in range(TOKENS)]
        async with engine.begin() as conn:
            for number, token in enumerate(tokens):
                await create_token(conn, TENANT, OWNER, token, name=f"agent-{number}", rights="write")
    finally:
        await engine.dispose()
    # The scope as autovacuum keeps a wiki that grew over time: the generator's single transaction leaves
    # every page in the full-text index's pending list, which each search would scan until autovacuum
    # happens to come by during the measurement.
    await execute_as_admin(database_url, "VACUUM (ANALYZE)")
    return tokens


async def measure(base: str, tokens: list[str], cpu_trees: dict[str, int]) -> dict:
    traffic = Traffic(tokens)

    async def accounted(run) -> Step:
        account = CpuAccount(trees=cpu_trees)
        account.start()
        step = await run
        step.cpu_seconds = account.stop()
        return step

    http = LoadClient(base, OVERLOAD_CONCURRENCY, REQUEST_TIMEOUT_SECONDS)
    try:
        await open_loop(http, traffic, RATES[0], WARMUP_SECONDS)
        steps: list[dict] = []
        held: dict | None = None
        for rate in RATES:
            step = await accounted(open_loop(http, traffic, rate, STEP_SECONDS))
            summary = step.summary()
            steps.append(summary)
            log.info("offered %d/s: %.0f ok/s, p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, errors %d %s; CPU ms per "
                     "request %s, machine busy %s", rate, summary["ok_per_second"], summary["p50_ms"],
                     summary["p95_ms"], summary["p99_ms"], summary["errors"], summary["statuses"],
                     summary["cpu_ms_per_request"], summary["machine_busy_share"])
            if not step.held():
                break
            held = summary
        overload = (await accounted(closed_loop(http, traffic, OVERLOAD_CONCURRENCY, OVERLOAD_SECONDS))).summary()
        log.info("overload (%d at a time): %s answers/s, statuses %s, hangs %d, transport errors %d",
                 OVERLOAD_CONCURRENCY, overload["answered_per_second"], overload["statuses"], overload["hangs"],
                 overload["transport_errors"])
    finally:
        await http.aclose()
    return {"steps": steps, "held": held, "overload": overload}


def _run_fast(main: Coroutine[Any, Any, dict]) -> dict:
    try:
        import uvloop
    except ImportError:  # no uvloop on this platform: asyncio's own loop
        return asyncio.run(main)
    return uvloop.run(main)


async def bench_server_load(database_url: str, temporal_address: str, data_dir: Path,
                            service_pids: dict[str, int] | None = None) -> dict:
    load_before = [round(v, 2) for v in os.getloadavg()]  # other work on the machine shares its cores
    tokens = await prepare(database_url)
    async with wiki_serve(database_url, data_dir, "--workers", str(WORKERS),
                          environment={"TEMPORAL_ADDRESS": temporal_address}) as (base, pid):
        trees = {"server": pid, **(service_pids or {})}
        # The generator runs on its own thread's uvloop: the cheapest event loop at hand, without
        # changing the loop of the rest of the bench.
        figures = await asyncio.to_thread(_run_fast, measure(base, tokens, trees))
    return {
        "load_average_before": load_before,
        "load_average_after": [round(v, 2) for v in os.getloadavg()], "cpus": os.cpu_count(),
        "pages": PAGES, "tokens": TOKENS, "workers": WORKERS, "mix_percent": MIX,
        "targets": {"requests_per_second": 300, "p95_ms": P95_TARGET_MS, "errors": 0},
        "method": f"open loop at fixed arrival rates {list(RATES)} req/s for {STEP_SECONDS:g} s each (after a "
                  f"{WARMUP_SECONDS:g} s warm-up), stopping at the first rate not held (any non-2xx, or p95 over "
                  f"{P95_TARGET_MS:g} ms); then {OVERLOAD_CONCURRENCY} requests at a time for {OVERLOAD_SECONDS:g} s. "
                  f"`wiki serve --workers {WORKERS}` with its default limits and the load generator (keep-alive "
                  "connections parsed by httptools, on its own thread's uvloop) share the machine's cores with Postgres and the Temporal dev server, all on loopback",
        **figures,
    }


async def measure_server_load(services: Services, repeats: int) -> dict:
    """The server_load part on a fresh database of the bench's Postgres (`repeats` does not apply: the
    part steps through its rates once)."""
    async with services.fresh_database() as url:
        with tempfile.TemporaryDirectory(prefix="wiki-bench-load-") as data_dir:
            # Postgres answers the reads; the Temporal dev server takes each retain's wake-up.
            return await bench_server_load(url, services.temporal_address, Path(data_dir),
                                           services.cpu_account().trees)
