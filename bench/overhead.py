"""The orchestration overhead part, and the 700-memory compile every model-path part runs.

One compile = a fresh database, the sample retained, an in-process worker on its own task queue,
an admin compile (no debounce) followed across continue-as-new until the scope is drained. The
worker's engine counts every statement and transaction it sends, which divided by the batches
gives the database round trips per batch.

The model is Claude as the product calls it: WIKI_LLM=anthropic through the anthropic SDK, streamed
over loopback HTTP to the Claude simulator (claude_sim/), found through ANTHROPIC_BASE_URL, with the
simulated latency L as its time to first token. Its usage (prompt caching included) is what the
simulator reports, so the cache hit rate is measured, not assumed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from app.worker import build_model_client, build_worker
from bench.history import ChainAnalysis
from bench.services import Services
from chaos.measure import ledger_rows
from claude_sim import ClaudeSimulator, SimConfig
from domain.memory import MemoryIn
from runtime.database import create_engine
from runtime.settings import Settings
from sample.corpus import generate_sample
from store.memories import store_memories as retain

SAMPLE_SIZE = 700
LEDGER_SUMS = (
    "records_read", "batches", "planner_calls", "section_writer_calls", "pages_created", "sections_rewritten",
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_input_tokens", "cost_usd",
    "planner_input_chars", "alias_dedup_merged", "fuzzy_dedupe_merges", "ladder_merges", "judged_merges",
    "judged_apart", "llm_retries",
)
# How a proposed new page was found to be an existing one (or judged apart from it), in the ledger.
MERGE_COUNTERS = ("alias_dedup_merged", "fuzzy_dedupe_merges", "ladder_merges", "judged_merges", "judged_apart")
# The model latencies L the overhead part compiles the sample at: none, and a fixed half second.
LATENCIES_MS = (0, 500)
log = logging.getLogger("bench.overhead")


@dataclass
class RoundTrips:
    """What one engine sent to Postgres: statements, and transactions (each a BEGIN and a COMMIT/ROLLBACK)."""

    statements: int = 0
    transactions: int = 0
    by_activity: Counter = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return self.statements + 2 * self.transactions

    def watch(self, engine: AsyncEngine) -> None:
        event.listen(engine.sync_engine, "before_cursor_execute", self._statement)
        event.listen(engine.sync_engine, "begin", self._transaction)

    def _statement(self, *_args) -> None:
        self.statements += 1
        self.by_activity[activity.info().activity_type if activity.in_activity() else "(no activity)"] += 1

    def _transaction(self, *_args) -> None:
        self.transactions += 1


class ActivityTimer(Interceptor):
    """Seconds each activity type ran on the worker, local activities included (their histories only
    record a result marker, not when they started and ended)."""

    def __init__(self) -> None:
        self.seconds: Counter = Counter()

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _TimedActivity(next, self.seconds)


class _TimedActivity(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, seconds: Counter) -> None:
        super().__init__(next)
        self._seconds = seconds

    async def execute_activity(self, input: ExecuteActivityInput):
        started = time.monotonic()
        try:
            return await super().execute_activity(input)
        finally:
            self._seconds[activity.info().activity_type] += time.monotonic() - started


@dataclass
class SampleCompile:
    latency_ms: int
    wall_seconds: float
    chain: ChainAnalysis
    round_trips: RoundTrips
    activity_seconds: Counter = field(default_factory=Counter)
    ledger: dict[str, float] = field(default_factory=dict)
    duplicate_candidates_count: int = 0
    wiki_counts: dict[str, int] = field(default_factory=dict)
    # Digests of what the wiki came out as, to tell two compiles' wikis apart without keeping them.
    wiki_digest: dict[str, str] = field(default_factory=dict)
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    # What the simulator billed: calls, and the share of prompt tokens read from the cache.
    model: dict[str, float] = field(default_factory=dict)

    @property
    def batches(self) -> int:
        return len(self.chain.compiled_batches)

    @property
    def critical_path_seconds(self) -> float:
        return self.chain.critical_path_seconds(self.latency_ms / 1000)

    def summary(self) -> dict:
        batches = max(self.batches, 1)
        return {
            "latency_ms": self.latency_ms,
            "wall_seconds": round(self.wall_seconds, 3),
            "critical_path_seconds": round(self.critical_path_seconds, 3),
            "measured_model_activity_seconds": round(self.chain.measured_model_seconds(), 3),
            "batches": self.batches,
            "workflow_runs": self.chain.runs,
            "activities_executed": sum(self.chain.activities.values()),
            "activities_by_type": dict(sorted(self.chain.activities.items())),
            "activity_seconds_by_type": self._activity_seconds(),
            "activity_retries": dict(self.chain.retries),
            "activity_retry_causes": dict(self.chain.retry_causes),
            "db_statements_by_activity": dict(sorted(self.round_trips.by_activity.items())),
            "history_events": self.chain.events,
            "history_events_per_batch": round(self.chain.events / batches, 1),
            "db_statements_per_batch": round(self.round_trips.statements / batches, 1),
            "db_transactions_per_batch": round(self.round_trips.transactions / batches, 1),
            "db_round_trips_per_batch": round(self.round_trips.total / batches, 1),
            "section_write_phases": sum(b.write_phases() for b in self.chain.batches),
            "section_write_rounds": sum(b.write_rounds() for b in self.chain.batches),
            "model_usage_by_activity": {name: dict(counts) for name, counts in sorted(self.chain.usage.items())},
            "ledger": self.ledger,
            "model": self.model,
            "duplicate_candidates_count": self.duplicate_candidates_count,
            "wiki": self.wiki_counts,
            "cpu_seconds": self.cpu_seconds,
        }


    def _activity_seconds(self) -> dict[str, dict[str, float]]:
        """Per activity type: seconds run on the worker (summed over calls, so concurrent writes add up)
        and seconds queued before a worker picked it up (remote activities only)."""
        queued = self.chain.seconds_by_activity()
        return {name: {"run": round(self.activity_seconds[name], 3),
                       "queued": queued.get(name, {}).get("queued", 0.0)}
                for name in sorted(self.activity_seconds)}


def sample_memories() -> list[MemoryIn]:
    return [MemoryIn.model_validate(row) for row in generate_sample(SAMPLE_SIZE)]


def bench_settings(**env) -> Settings:
    values = {"WIKI_LLM": "scripted", "WIKI_DEBOUNCE_SECONDS": 0, "WIKI_TASK_QUEUE": f"bench-{uuid.uuid4()}"}
    values.update(env)
    return Settings(**values)


@contextmanager
def bench_environment(**values: str) -> Iterator[None]:
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _billed(simulator: ClaudeSimulator) -> dict:
    usages = [usage for _, usage in simulator.reported_usage()]
    prompt = sum(u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens for u in usages)
    by_kind: dict[str, dict[str, int]] = {}
    for call in simulator.calls:
        if call.usage is None:
            continue
        kind = by_kind.setdefault(call.kind, {"calls": 0, "input_tokens": 0, "output_tokens": 0,
                                              "cache_read_tokens": 0, "cache_write_tokens": 0})
        kind["calls"] += 1
        kind["input_tokens"] += call.usage.input_tokens
        kind["output_tokens"] += call.usage.output_tokens
        kind["cache_read_tokens"] += call.usage.cache_read_input_tokens
        kind["cache_write_tokens"] += call.usage.cache_creation_input_tokens
    return {"provider": "anthropic SDK -> claude_sim (loopback HTTP, streamed)", "calls": len(usages),
            "prompt_tokens": prompt, "cache_read_tokens": sum(u.cache_read_input_tokens for u in usages),
            "cache_write_tokens": sum(u.cache_creation_input_tokens for u in usages),
            "cache_hit_rate": round(sum(u.cache_read_input_tokens for u in usages) / prompt, 4) if prompt else 0.0,
            "by_kind": by_kind}


async def compile_sample(services: Services, latency_ms: int, output_tokens_per_second: float = 0.0,
                         memories: list[MemoryIn] | None = None, calls_out: list | None = None,
                         trigger: str = "admin", **env: str) -> SampleCompile:
    """The sample compiled through the SDK and the simulator: time to first token `latency_ms`, and
    `output_tokens_per_second` (0: a reply arrives whole after the first token). `calls_out`, if
    given, receives the simulator's calls (what it billed, call by call). `trigger` "bootstrap_import"
    sends its model calls through Message Batches; `env` adds settings (WIKI_… names)."""
    tenant, owner = f"bench{uuid.uuid4().hex[:8]}", "eric"
    simulator = ClaudeSimulator(SimConfig(ttft_seconds=latency_ms / 1000,
                                          output_tokens_per_second=output_tokens_per_second))
    await simulator.start()
    try:
        with bench_environment(ANTHROPIC_BASE_URL=simulator.base_url):
            settings = bench_settings(WIKI_LLM="anthropic", ANTHROPIC_API_KEY=next(iter(simulator.config.api_keys)),
                                      **env)
            model_client = build_model_client(settings)
        try:
            result = await compile_sample_with(services, latency_ms, tenant, owner, settings, model_client,
                                           memories if memories is not None else sample_memories(), trigger)
        finally:
            await model_client.aclose()
    finally:
        await simulator.stop()
    result.model = _billed(simulator)
    if calls_out is not None:
        calls_out.extend(simulator.calls)
    return result


async def compile_sample_with(services: Services, latency_ms: int, tenant: str, owner: str, settings: Settings,
                          model_client, memories: list[MemoryIn], trigger: str = "admin") -> SampleCompile:
    async with services.fresh_database() as url:
        setup_engine = create_engine(url)
        worker_engine = create_engine(url)
        round_trips = RoundTrips()
        round_trips.watch(worker_engine)
        timer = ActivityTimer()
        try:
            await retain(setup_engine, tenant, owner, memories)
            async with build_worker(services.client, worker_engine, settings, interceptors=[timer],
                                    model_client=model_client):
                wall, cpu_seconds = await services.timed_compile(tenant, owner, trigger, settings)
            runs = await ledger_rows(setup_engine, tenant, owner)
            wiki_counts = await _wiki_counts(setup_engine, tenant, owner)
            wiki_digest = await _wiki_digest(setup_engine, tenant, owner)
        finally:
            await setup_engine.dispose()
            await worker_engine.dispose()
    chain = ChainAnalysis()
    for run in runs:
        chain.add_run(await services.client.get_workflow_handle(run["workflow_id"], run_id=run["run_id"])
                      .fetch_history())
    totals = {key: round(sum(r["metrics"].get(key, 0) for r in runs), 6) for key in LEDGER_SUMS}
    return SampleCompile(latency_ms=latency_ms, wall_seconds=wall, chain=chain, round_trips=round_trips,
                         activity_seconds=timer.seconds,
                         ledger=totals, wiki_counts=wiki_counts, wiki_digest=wiki_digest, cpu_seconds=cpu_seconds,
                         duplicate_candidates_count=runs[-1]["metrics"].get("duplicate_candidates_count", 0))


async def _wiki_counts(engine: AsyncEngine, tenant: str, owner: str) -> dict[str, int]:
    async with engine.connect() as conn:
        row = (await conn.execute(text("""
            SELECT (SELECT count(*) FROM wiki_pages WHERE tenant_id = :t AND owner_id = :o AND status = 'active')
                       AS active_pages,
                   (SELECT count(*) FROM wiki_unresolved_mentions
                    WHERE tenant_id = :t AND owner_id = :o AND status = 'open') AS open_mentions
        """), {"t": tenant, "o": owner})).one()
        return dict(row._mapping)


async def _wiki_digest(engine: AsyncEngine, tenant: str, owner: str) -> dict[str, str]:
    """SHA-256 of the active pages' (type, slug, section) keys, of every section's provenance (its
    memories' texts) and of the section bodies: equal digests, the same wiki."""
    queries = {
        "sections": "SELECT p.type || '/' || p.slug || '#' || s.section_slug FROM wiki_pages p "
                    "JOIN wiki_page_sections s ON s.page_id = p.id",
        # A memory's id derives from its scope, so provenance is compared by the memory's text.
        "provenance": "SELECT p.slug || '#' || s.section_slug || '<-' || coalesce(m.content, src.source_ref) "
                      "FROM wiki_pages p JOIN wiki_page_sections s ON s.page_id = p.id JOIN wiki_section_sources src "
                      "ON src.section_id = s.id LEFT JOIN memory_units m ON m.tenant_id = p.tenant_id "
                      "AND m.owner_id = p.owner_id AND m.id::text = src.source_ref",
        "bodies": "SELECT p.slug || '#' || s.section_slug || '=' || s.body_md FROM wiki_pages p "
                  "JOIN wiki_page_sections s ON s.page_id = p.id",
    }
    digests = {}
    async with engine.connect() as conn:
        for name, query in queries.items():
            rows = await conn.execute(text(f"{query} WHERE p.tenant_id = :t AND p.owner_id = :o "
                                           "AND p.status = 'active' ORDER BY 1"), {"t": tenant, "o": owner})
            digests[name] = hashlib.sha256("\n".join(row[0] for row in rows).encode()).hexdigest()[:16]
    return digests


def median_run(runs: list[dict], key: str = "wall_seconds") -> dict:
    """The run whose `key` is the (low) median: a real run, so its details agree with each other."""
    middle = statistics.median_low([run[key] for run in runs])
    return next(run for run in runs if run[key] == middle)


async def measure_overhead(services: Services, repeats: int) -> dict:
    """The sample compiled `repeats` times at each latency of LATENCIES_MS, interleaved so that a slow
    spell of the machine hits both alike; every run, and the median ones."""
    compiles: dict[int, list[dict]] = {latency: [] for latency in LATENCIES_MS}
    for repeat in range(repeats):
        for latency in LATENCIES_MS:
            result = await compile_sample(services, latency)
            compiles[latency].append(result.summary())
            log.info("700-memory compile %d/%d at L=%d ms: %.1f s", repeat + 1, repeats, latency, result.wall_seconds)
    slow = max(LATENCIES_MS)
    l0 = median_run(compiles[0])
    return {
        "overhead_ratio_runs": [round(run["wall_seconds"] / run["critical_path_seconds"], 3) for run in compiles[slow]],
        "l0": {"median": l0, "runs": compiles[0]},
        "l500": {"median": median_run(compiles[slow]), "runs": compiles[slow]},
        "sample_merges": {
            **{name: l0["ledger"][name] for name in MERGE_COUNTERS},
            "proposed_new_pages_merged": sum(l0["ledger"][name] for name in MERGE_COUNTERS if name != "judged_apart"),
            "duplicate_candidates_count": l0["duplicate_candidates_count"],
        },
    }
