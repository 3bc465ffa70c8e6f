"""The fairness part: one tenant bootstraps many memories while small tenants retain at random moments,
all sharing one model quota, with task queue priority and fairness on and then off.

Every model call goes through the anthropic SDK to one Claude simulator (claude_sim/) in the bench
process, at a realistic speed and with per-minute rate limits on requests, input and output tokens:
the provider quota the fleet shares. One worker process (bench/scope_worker.py, the product's workers as
`app.worker.build_workers` composes them) serves the compile queue and the model queue
(`WIKI_LLM_TASK_QUEUE`), whose rate limit (`WIKI_LLM_MAX_PER_SECOND`, enforced by Temporal for every
worker of the queue) is derived from the simulator's limits by `domain/model_quota.py` from the mean
call size a short calibration run measured.

Phases, each on a fresh database and its own task queues:
1. calibration: a small bootstrap with no latency and no limits, for the mean tokens per call;
2. the big tenant alone: its bootstrap, for its throughput when it has the quota to itself;
3. the small tenants alone (an idle system): each retains its memories at its random moments;
4. both at once, compiles started with priorities and fairness keys (the product's default);
5. both at once, compiles started with neither (`WIKI_FAIRNESS_ENABLED=false`): plain first in, first out.
The small tenants' moments are the same in 3, 4 and 5 (seeded). Each small retain's time is split into
where it went (the model, running activities, the queue, workflow tasks) from its compile's history by
bench/fairness_trace.py.

`python -m bench fairness` runs this part alone; `BENCH_FAIR_*` variables (`workload_from_env`) reshape it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from app.retain import retain_and_signal
from bench import fairness_report, fairness_trace, quota
from bench.provenance import ROOT, load_average
from bench.services import Services
from claude_sim import ClaudeSimulator, Limits, SimConfig
from domain.fairness import DEFAULT_TENANT_QUOTA_SHARE
from domain.memory import MemoryIn
from domain.model_quota import ProviderLimits, calls_per_second
from runtime.database import create_engine
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from sample.corpus import generate_sample
from store.memories import store_memories

READY_TIMEOUT_SECONDS = 60
PHASE_TIMEOUT_SECONDS = 3600
MEASURED_THROUGH = "anthropic-sdk"
BIG_TENANT = "big"
log = logging.getLogger("bench.fairness")


@dataclass(frozen=True)
class FairnessWorkload:
    # A 10,000-memory bootstrap scaled down so five phases fit on a shared 2-core machine, keeping its
    # shape: the bootstrap needs several times the model calls of the small tenants' compiles (a call the
    # small tenants spend is one the big tenant cannot have, whatever the order), and more than the quota
    # allows (its ten agents compile at once), so the quota, not its own pace, bounds it.
    big_scopes: int = 10
    big_memories_per_scope: int = 250
    small_tenants: int = 20
    small_memories: int = 20
    small_retains: int = 2  # each small tenant's memories arrive in this many retains
    # The small tenants' retains fall at random moments within this share of the big tenant's time alone.
    window_share: float = 0.6
    seed: int = 30
    ttft_seconds: float = 0.6
    output_tokens_per_second: float = 150.0
    requests_per_minute: int = 600
    input_tokens_per_minute: int = 3_000_000
    output_tokens_per_minute: int = 180_000
    calibration_memories: int = 300
    calibration_scopes: int = 2

    @property
    def limits(self) -> Limits:
        return Limits(requests_per_minute=self.requests_per_minute,
                      input_tokens_per_minute=self.input_tokens_per_minute,
                      output_tokens_per_minute=self.output_tokens_per_minute)

    @property
    def big_memories(self) -> int:
        return self.big_scopes * self.big_memories_per_scope


def workload_from_env() -> FairnessWorkload:
    """The default workload, with BENCH_FAIR_BIG_SCOPES, BENCH_FAIR_BIG_MEMORIES_PER_SCOPE,
    BENCH_FAIR_SMALL_TENANTS, BENCH_FAIR_SMALL_RETAINS, BENCH_FAIR_RPM, BENCH_FAIR_ITPM and BENCH_FAIR_OTPM
    taken from the environment."""
    default = FairnessWorkload()
    env = os.environ.get
    return dataclasses.replace(
        default,
        big_scopes=int(env("BENCH_FAIR_BIG_SCOPES", default.big_scopes)),
        big_memories_per_scope=int(env("BENCH_FAIR_BIG_MEMORIES_PER_SCOPE", default.big_memories_per_scope)),
        small_tenants=int(env("BENCH_FAIR_SMALL_TENANTS", default.small_tenants)),
        small_retains=int(env("BENCH_FAIR_SMALL_RETAINS", default.small_retains)),
        requests_per_minute=int(env("BENCH_FAIR_RPM", default.requests_per_minute)),
        input_tokens_per_minute=int(env("BENCH_FAIR_ITPM", default.input_tokens_per_minute)),
        output_tokens_per_minute=int(env("BENCH_FAIR_OTPM", default.output_tokens_per_minute)),
    )


@dataclass(frozen=True)
class Retain:
    tenant: str
    at_seconds: float  # from the phase's start
    memories: list[MemoryIn]


def big_scopes(workload: FairnessWorkload, scopes: int, per_scope: int) -> dict[str, list[MemoryIn]]:
    rows = generate_sample(scopes * per_scope, seed=workload.seed)
    return {f"agent{index:02d}": [MemoryIn.model_validate(row) for row in rows[index * per_scope:(index + 1) * per_scope]]
            for index in range(scopes)}


def small_schedule(workload: FairnessWorkload, window_seconds: float) -> list[Retain]:
    """Every small tenant's retains: its memories in `small_retains` parts, at random moments of the window."""
    rng = random.Random(workload.seed)
    per_retain = workload.small_memories // workload.small_retains
    out = []
    for index in range(workload.small_tenants):
        rows = generate_sample(workload.small_memories, seed=1000 + index)
        memories = [MemoryIn.model_validate(row) for row in rows]
        moments = sorted(rng.uniform(0, window_seconds) for _ in range(workload.small_retains))
        for part, moment in enumerate(moments):
            out.append(Retain(f"small{index:02d}", moment, memories[part * per_retain:(part + 1) * per_retain]))
    return sorted(out, key=lambda retain: retain.at_seconds)


@dataclass
class Phase:
    name: str
    wall_seconds: float = 0.0
    big_seconds: float | None = None
    big_memories: int = 0
    small_latencies: list[float] = field(default_factory=list)
    # Each retain's latency and where it went (bench/fairness_trace.py).
    small_breakdowns: list[tuple[float, dict[str, float]]] = field(default_factory=list)
    admitted: list[quota.Charge] = field(default_factory=list)
    throttled: int = 0
    load: dict[str, list[float]] = field(default_factory=dict)

    def summary(self, limits: Limits) -> dict:
        out: dict = {"wall_seconds": round(self.wall_seconds, 1), "load_average": self.load,
                     "model_calls": len(self.admitted), "provider_429s": self.throttled}
        if self.big_seconds is not None:
            out["big_tenant"] = {"memories": self.big_memories, "seconds": round(self.big_seconds, 1),
                                 "memories_per_second": round(self.big_memories / self.big_seconds, 3)}
        if self.small_latencies:
            ordered = sorted(self.small_latencies)
            out["small_tenants"] = {"retains": len(ordered), "p50_seconds": round(statistics.median(ordered), 2),
                                    "p95_seconds": round(percentile(ordered, 0.95), 2),
                                    "max_seconds": round(ordered[-1], 2)}
            if self.small_breakdowns:
                out["small_tenants"]["where_the_time_went"] = fairness_trace.summarise(
                    self.small_breakdowns, percentile(ordered, 0.95))
        if self.admitted and limits.requests_per_minute:
            used = quota.utilisation(self.admitted, limits, self.wall_seconds)
            binding = max(used, key=lambda name: used[name]["utilisation"])
            out["quota"] = {"binding_limit": binding, "utilisation": used[binding]["utilisation"], "limits": used}
        return out


def percentile(ordered: list[float], share: float) -> float:
    """The nearest-rank percentile of sorted values."""
    rank = max(1, -(-len(ordered) * share // 1))
    return ordered[int(rank) - 1]


async def run_phase(services: Services, name: str, *, simulator_config: SimConfig, worker_env: dict[str, str],
                    big: dict[str, list[MemoryIn]], small: list[Retain], fairness: bool) -> Phase:
    phase = Phase(name, load={"start": load_average()})
    run_tag = uuid.uuid4().hex[:8]
    async with ClaudeSimulator(simulator_config) as simulator, services.fresh_database() as url:
        env = {"DATABASE_URL": url, "TEMPORAL_ADDRESS": services.temporal_address, "WIKI_LLM": "anthropic",
               "ANTHROPIC_BASE_URL": simulator.base_url, "ANTHROPIC_API_KEY": next(iter(simulator.config.api_keys)),
               "WIKI_DEBOUNCE_SECONDS": "0", "WIKI_LLM_BATCH_MODE": "off", "WIKI_TASK_QUEUE": f"fair-{run_tag}",
               "WIKI_LLM_TASK_QUEUE": f"fair-llm-{run_tag}", "WIKI_FAIRNESS_ENABLED": str(fairness).lower(),
               **worker_env}
        settings = Settings(**env)
        engine = create_engine(url)
        try:
            for owner, memories in big.items():
                await store_memories(engine, BIG_TENANT, owner, memories)
            process = await start_worker_process(env, Path(tempfile.gettempdir()) / f"wiki-bench-fair-{run_tag}.log")
            try:
                started = time.monotonic()

                async def bootstrap() -> None:
                    handles = [await signal_compile(services.client, BIG_TENANT, owner, trigger="bootstrap_import",
                                                    settings=settings) for owner in big]
                    await asyncio.gather(*[handle.result() for handle in handles])
                    phase.big_seconds = time.monotonic() - started

                async def retain(event: Retain) -> None:
                    await asyncio.sleep(max(0.0, started + event.at_seconds - time.monotonic()))
                    at, retained_at = time.monotonic(), datetime.now(UTC).replace(tzinfo=None)
                    outcome = await retain_and_signal(engine, event.tenant, "agent", event.memories,
                                                      client=services.client, settings=settings)
                    assert outcome.compile is not None
                    await outcome.compile.result()
                    latency = time.monotonic() - at
                    phase.small_latencies.append(latency)
                    traced.append((latency, outcome.compile.id, outcome.compile.result_run_id, retained_at))

                traced: list[tuple[float, str, str | None, datetime]] = []
                work = [retain(event) for event in small] + ([bootstrap()] if big else [])
                await asyncio.wait_for(asyncio.gather(*work), PHASE_TIMEOUT_SECONDS)
                phase.wall_seconds = time.monotonic() - started
                speed = fairness_trace.ModelSpeed(simulator_config.ttft_seconds,
                                                  simulator_config.output_tokens_per_second)
                for latency, workflow_id, run_id, retained_at in traced:
                    phase.small_breakdowns.append((latency, await fairness_trace.retain_breakdown(
                        services.client, workflow_id, run_id, retained_at, latency, speed)))
            finally:
                await stop_worker_process(process)
        finally:
            await engine.dispose()
        phase.admitted = quota.charges(simulator.calls)
        phase.throttled = sum(1 for call in simulator.calls if call.status == 429)
    phase.big_memories = sum(len(memories) for memories in big.values())
    phase.load["end"] = load_average()
    log.info("fairness phase %s: %.1f s, %d model calls, %d 429s", name, phase.wall_seconds, len(phase.admitted),
             phase.throttled)
    return phase


async def start_worker_process(env: dict[str, str], log_path: Path) -> asyncio.subprocess.Process:
    """A bench worker process (`python -m bench.scope_worker`), once it polls."""
    with log_path.open("wb") as log_file:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.scope_worker", cwd=ROOT, env={**os.environ, **env},
            stdout=asyncio.subprocess.PIPE, stderr=log_file, stdin=asyncio.subprocess.DEVNULL)
    line = await asyncio.wait_for(process.stdout.readline(), READY_TIMEOUT_SECONDS)
    if line.strip() != b"ready":
        await stop_worker_process(process)
        raise RuntimeError(f"bench worker process {process.pid} did not start; see {log_path}")
    return process


async def stop_worker_process(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
    await process.wait()


def mean_call_size(admitted: list[quota.Charge]) -> tuple[float, float]:
    return (statistics.fmean(charge.input_tokens for charge in admitted),
            statistics.fmean(charge.output_tokens for charge in admitted))


async def measure_fairness(services: Services, repeats: int) -> dict:
    """The fairness part's detail: the workload, the derived queue rate and every phase's figures."""
    workload = workload_from_env()
    limits = workload.limits
    calibration = await run_phase(
        services, "calibration", simulator_config=SimConfig(), worker_env={}, small=[], fairness=True,
        big=big_scopes(workload, workload.calibration_scopes, workload.calibration_memories // workload.calibration_scopes))
    mean_input, mean_output = mean_call_size(calibration.admitted)
    rate = calls_per_second(ProviderLimits(limits.requests_per_minute, limits.input_tokens_per_minute,
                                           limits.output_tokens_per_minute), mean_input, mean_output)
    assert rate is not None, "the workload sets the simulator's limits"
    rate = round(rate, 3)
    log.info("mean call: %.0f input, %.0f output tokens; model queue limited to %.3f calls/s", mean_input, mean_output,
             rate)
    realistic = SimConfig(ttft_seconds=workload.ttft_seconds, output_tokens_per_second=workload.output_tokens_per_second,
                          limits=limits)
    worker_env = {"WIKI_LLM_MAX_PER_SECOND": str(rate)}
    big = big_scopes(workload, workload.big_scopes, workload.big_memories_per_scope)

    async def phase(name: str, *, with_big: bool, schedule: list[Retain], fairness: bool = True) -> dict:
        run = await run_phase(services, name, simulator_config=realistic, worker_env=worker_env,
                              big=big if with_big else {}, small=schedule, fairness=fairness)
        summary = run.summary(limits)
        # The model queue's own rate: how much of what Temporal would have dispatched the phase asked for.
        summary["queue_rate_used"] = round(len(run.admitted) / (rate * run.wall_seconds), 3)
        return summary

    phases = {"big_alone": await phase("big_alone", with_big=True, schedule=[])}
    window = workload.window_share * phases["big_alone"]["big_tenant"]["seconds"]
    schedule = small_schedule(workload, window)
    phases["small_alone"] = await phase("small_alone", with_big=False, schedule=schedule)
    phases["fairness_on"] = await phase("fairness_on", with_big=True, schedule=schedule)
    phases["fairness_off"] = await phase("fairness_off", with_big=True, schedule=schedule, fairness=False)
    return fairness_report.build(
        workload={**dataclasses.asdict(workload), "measured_through": MEASURED_THROUGH,
                  "tenant_quota_share": DEFAULT_TENANT_QUOTA_SHARE},
        calibration={"model_calls": len(calibration.admitted), "mean_input_tokens": round(mean_input),
                     "mean_output_tokens": round(mean_output), "llm_max_per_second": rate},
        window_seconds=round(window, 1), phases=phases)
