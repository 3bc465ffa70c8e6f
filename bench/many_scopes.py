"""The many-scopes part: many scopes compiled at once, sharing one model quota, by 1 and then 2
worker processes.

Each scope already has a wiki (its first 50 sample memories compiled once, in a template database
every measured run copies) and 50 new memories waiting: so the measured compile rewrites existing
sections, as a steady-state scope's compile does, instead of only creating pages. All scopes'
compiles start together. The worker processes (bench/scope_worker.py) are the product's workers with
WIKI_LLM=anthropic: every model call goes through the anthropic SDK, streamed over loopback HTTP, to
one Claude simulator (claude_sim/) in the bench process, found through ANTHROPIC_BASE_URL. The
simulator's rate limits — requests, input tokens and output tokens per minute — are the quota all
processes share: over them it answers 429 with retry-after and the anthropic-ratelimit-* headers,
and the product waits and retries as it would against Anthropic. bench/quota.py turns the calls the
simulator recorded into how much of each limit the run used.

`python -m bench many_scopes` runs this part alone (BENCH_REPEATS times each, default 3).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text

from app.worker import build_model_client, build_worker
from bench import many_scopes_report, quota
from bench.history import ChainAnalysis
from bench.overhead import bench_environment, bench_settings, sample_memories
from bench.provenance import ROOT
from bench.services import Services
from claude_sim import ClaudeSimulator, Limits, SimConfig
from domain.memory import MemoryIn
from runtime.database import create_engine
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.memories import store_memories as retain

READY_TIMEOUT_SECONDS = 60
RUN_TIMEOUT_SECONDS = 1800
WARM_UP_CONCURRENCY = 20  # runtime.database.create_engine's pool: 10 + 10 overflow
MEASURED_THROUGH = "anthropic-sdk"
WORKER_PROCESSES = (1, 2)
log = logging.getLogger("bench.many_scopes")


@dataclass(frozen=True)
class Workload:
    scopes: int = 100
    memories_per_scope: int = 50
    # The model's speed as the simulator plays it (bench/cost_realistic.py's realistic figures).
    ttft_seconds: float = 0.6
    output_tokens_per_second: float = 150.0
    # The simulator's rate limits (per minute), output to input tokens 1:5. Sized so that the workload's
    # output (~660k tokens) takes about four minutes of quota, several times one scope's own sequence
    # of calls at this speed, so the quota and not a scope's own pace bounds the run.
    requests_per_minute: int = 500
    input_tokens_per_minute: int = 750_000
    output_tokens_per_minute: int = 150_000
    # WIKI_LLM_MAX_PER_SECOND for the workers: None leaves it unset, so the provider's 429s alone throttle.
    llm_max_per_second: float | None = None

    @property
    def limits(self) -> Limits:
        return Limits(requests_per_minute=self.requests_per_minute,
                      input_tokens_per_minute=self.input_tokens_per_minute,
                      output_tokens_per_minute=self.output_tokens_per_minute)


def workload_from_env() -> Workload:
    """The default workload, with any of BENCH_MANY_SCOPES, BENCH_MANY_TTFT_SECONDS,
    BENCH_MANY_OUTPUT_TOKENS_PER_SECOND, BENCH_SIM_RPM, BENCH_SIM_ITPM, BENCH_SIM_OTPM and
    BENCH_LLM_MAX_PER_SECOND set in the environment instead."""
    default = Workload()
    env = os.environ.get
    cap = env("BENCH_LLM_MAX_PER_SECOND")
    return Workload(
        scopes=int(env("BENCH_MANY_SCOPES", default.scopes)),
        ttft_seconds=float(env("BENCH_MANY_TTFT_SECONDS", default.ttft_seconds)),
        output_tokens_per_second=float(env("BENCH_MANY_OUTPUT_TOKENS_PER_SECOND", default.output_tokens_per_second)),
        requests_per_minute=int(env("BENCH_SIM_RPM", default.requests_per_minute)),
        input_tokens_per_minute=int(env("BENCH_SIM_ITPM", default.input_tokens_per_minute)),
        output_tokens_per_minute=int(env("BENCH_SIM_OTPM", default.output_tokens_per_minute)),
        llm_max_per_second=float(cap) if cap else None,
    )


@dataclass
class ManyScopesRun:
    workers: int
    wall_seconds: float
    memories: int
    admitted: list[quota.Charge]
    throttled: int
    last_throttled_seconds: float | None  # when the last 429 was answered, from the start of the compiles
    other_errors: dict[str, int]
    limits: Limits
    cpu_seconds: dict[str, float]
    activity_retries: dict[str, int]
    activity_retry_causes: dict[str, int]

    def summary(self) -> dict:
        used = quota.utilisation(self.admitted, self.limits, self.wall_seconds)
        binding = max(used, key=lambda name: used[name]["utilisation"])
        steady = quota.steady_utilisation(self.admitted, self.limits)
        span = self.admitted[-1].at - self.admitted[0].at if len(self.admitted) > 1 else 0.0
        return {
            "measured_through": MEASURED_THROUGH,
            "worker_processes": self.workers,
            "wall_seconds": round(self.wall_seconds, 3),
            "memories": self.memories,
            "memories_per_second": round(self.memories / self.wall_seconds, 2),
            "model_calls": len(self.admitted),
            "model_calls_per_second": round((len(self.admitted) - 1) / span, 2) if span else 0.0,
            "rate_limit_utilisation": used[binding]["utilisation"],
            "binding_limit": binding,
            "limits": used,
            "steady_rate_limit_utilisation": steady.get(binding),
            "steady_utilisation_by_limit": steady,
            "busiest_minute": {name: quota.busiest_minute(self.admitted, name) for name in used},
            "provider_429s": self.throttled,
            "last_429_at_seconds": None if self.last_throttled_seconds is None else round(self.last_throttled_seconds, 1),
            "provider_other_errors": self.other_errors,
            "cpu_seconds": self.cpu_seconds,
            "activity_retries": self.activity_retries,
            "activity_retry_causes": self.activity_retry_causes,
        }


def scope_memories(scope_index: int, workload: Workload, sample: list[MemoryIn]) -> tuple[list, list]:
    """(already compiled, new) slices of the sample, without ids: ids derive from the scope, so
    scopes never share a memory."""
    size = workload.memories_per_scope
    start = (scope_index * size) % (len(sample) - 2 * size + 1)
    fresh = [m.model_copy(update={"id": None}) for m in sample[start:start + 2 * size]]
    return fresh[:size], fresh[size:]


def scopes(workload: Workload) -> list[tuple[str, str]]:
    return [("many", f"owner{index:03d}") for index in range(workload.scopes)]


@asynccontextmanager
async def warmed_scopes(services: Services, workload: Workload) -> AsyncIterator[str]:
    """A database where every scope has compiled its first memories (through the SDK and a simulator
    with no latency and no limits: preparation, not measurement) and has the next ones retained."""
    sample = sample_memories()
    async with services.fresh_database() as url, ClaudeSimulator(SimConfig()) as simulator:
        with bench_environment(ANTHROPIC_BASE_URL=simulator.base_url):
            settings = bench_settings(WIKI_LLM="anthropic", ANTHROPIC_API_KEY=next(iter(simulator.config.api_keys)))
            model_client = build_model_client(settings)
        engine = create_engine(url)
        try:
            for index, (tenant, owner) in enumerate(scopes(workload)):
                await retain(engine, tenant, owner, scope_memories(index, workload, sample)[0])
            # No more activities at once than the engine has connections.
            async with build_worker(services.client, engine, settings, model_client=model_client,
                                    max_concurrent_activities=WARM_UP_CONCURRENCY):
                handles = await asyncio.gather(*[
                    signal_compile(services.client, tenant, owner, trigger="admin", settings=settings)
                    for tenant, owner in scopes(workload)])
                await asyncio.gather(*[handle.result() for handle in handles])
            for index, (tenant, owner) in enumerate(scopes(workload)):
                await retain(engine, tenant, owner, scope_memories(index, workload, sample)[1])
        finally:
            await engine.dispose()
            await model_client.aclose()
        yield url


async def compile_many_scopes(services: Services, warmed_url: str, workload: Workload,
                              workers: int) -> ManyScopesRun:
    run_tag = uuid.uuid4().hex[:8]
    simulator = ClaudeSimulator(SimConfig(ttft_seconds=workload.ttft_seconds,
                                          output_tokens_per_second=workload.output_tokens_per_second,
                                          limits=workload.limits))
    await simulator.start()
    try:
        async with services.fresh_database(warmed_url) as url:
            env = {
                "DATABASE_URL": url, "TEMPORAL_ADDRESS": services.temporal_address, "WIKI_LLM": "anthropic",
                "ANTHROPIC_BASE_URL": simulator.base_url, "ANTHROPIC_API_KEY": next(iter(simulator.config.api_keys)),
                "WIKI_DEBOUNCE_SECONDS": "0", "WIKI_TASK_QUEUE": f"many-{run_tag}",
                "WIKI_LLM_TASK_QUEUE": f"llm-{run_tag}",
            }
            if workload.llm_max_per_second:
                env["WIKI_LLM_MAX_PER_SECOND"] = str(workload.llm_max_per_second)
            settings = Settings(**env)
            warm_runs = await _ledger_runs(url)
            processes = [await _start_worker_process(env, Path(tempfile.gettempdir()) /
                                                     f"wiki-bench-{run_tag}-{i}.log") for i in range(workers)]
            try:
                cpu = services.cpu_account(**{f"worker_process_{i + 1}": p.pid for i, p in enumerate(processes)})
                cpu.start()
                started = time.monotonic()
                handles = await asyncio.gather(*[
                    signal_compile(services.client, tenant, owner, trigger="admin", settings=settings)
                    for tenant, owner in scopes(workload)])
                # Bounded: a worker process that dies would otherwise leave the bench waiting forever.
                await asyncio.wait_for(asyncio.gather(*[handle.result() for handle in handles]),
                                       RUN_TIMEOUT_SECONDS)
                wall = time.monotonic() - started
                cpu_seconds = cpu.stop()
            finally:
                for process in processes:
                    await _stop_worker_process(process)
            chain = ChainAnalysis()
            for workflow_id, run_id in sorted(set(await _ledger_runs(url)) - set(warm_runs)):
                chain.add_run(await services.client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history())
    finally:
        await simulator.stop()
    refused = [call.at - started for call in simulator.calls if call.status == 429]
    errors: dict[str, int] = {}
    for call in simulator.calls:
        if call.status not in (200, 429):
            errors[str(call.status)] = errors.get(str(call.status), 0) + 1
    return ManyScopesRun(
        workers=workers, wall_seconds=wall, memories=workload.scopes * workload.memories_per_scope,
        admitted=quota.charges(simulator.calls), throttled=len(refused),
        last_throttled_seconds=max(refused) if refused else None,
        other_errors=errors, limits=workload.limits, cpu_seconds=cpu_seconds,
        activity_retries=dict(chain.retries), activity_retry_causes=dict(chain.retry_causes),
    )


async def _start_worker_process(env: dict[str, str], log_path: Path) -> asyncio.subprocess.Process:
    """A bench worker process, once it polls; its log (activity retries are logged there) goes to `log_path`."""
    with log_path.open("wb") as log_file:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.scope_worker", cwd=ROOT, env={**os.environ, **env},
            stdout=asyncio.subprocess.PIPE, stderr=log_file, stdin=asyncio.subprocess.DEVNULL,
        )
    line = await asyncio.wait_for(process.stdout.readline(), READY_TIMEOUT_SECONDS)
    if line.strip() != b"ready":
        await _stop_worker_process(process)
        raise RuntimeError(f"bench worker process {process.pid} did not start (exit {process.returncode}); "
                           f"see {log_path}")
    return process


async def _stop_worker_process(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
    await process.wait()


async def _ledger_runs(url: str) -> list[tuple[str, str]]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(text("SELECT workflow_id, run_id FROM wiki_compile_jobs"))
            return [(row.workflow_id, row.run_id) for row in rows]
    finally:
        await engine.dispose()


async def measure(services: Services, workload: Workload, repeats: int,
                  worker_processes: tuple[int, ...]) -> dict[int, list[dict]]:
    """Every run's summary, by worker processes: `repeats` runs of each, interleaved."""
    runs: dict[int, list[dict]] = {workers: [] for workers in worker_processes}
    async with warmed_scopes(services, workload) as warmed:
        log.info("%d scopes warmed", workload.scopes)
        for repeat in range(repeats):
            for workers in worker_processes:
                run = (await compile_many_scopes(services, warmed, workload, workers)).summary()
                runs[workers].append(run)
                log.info("many scopes %d/%d with %d worker process(es): %.1f s, %.2f memories/s, %s limit used "
                         "%.0f%%, %d 429s", repeat + 1, repeats, workers, run["wall_seconds"],
                         run["memories_per_second"], run["binding_limit"], 100 * run["rate_limit_utilisation"],
                         run["provider_429s"])
    return runs


def workload_dict(workload: Workload) -> dict:
    return {**dataclasses.asdict(workload), "measured_through": MEASURED_THROUGH}


async def measure_many_scopes(services: Services, repeats: int) -> dict:
    """The many-scopes part: the environment's workload (`workload_from_env`), every run and the medians."""
    workload = workload_from_env()
    return many_scopes_report.build(await measure(services, workload, repeats, WORKER_PROCESSES),
                                    workload_dict(workload))
