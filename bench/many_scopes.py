"""Metric 3: many scopes compiled at once under a global model rate limit, by 1 and then 2 worker processes.

Each scope already has a wiki (its first 50 sample memories compiled once, in a template database
every measured run copies) and 50 new memories waiting: so the measured compile rewrites existing
sections, as a steady-state scope's compile does, instead of only creating pages. All scopes'
compiles start together. The worker processes (bench/scope_worker.py) serve the model activities
on their own task queue, capped at `limit_per_second` by Temporal; the simulated provider's quota
is above that cap, so any 429 it answers means the cap did not hold across processes.
"""

from __future__ import annotations

import asyncio
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

from app.worker import build_worker
from bench.history import ChainAnalysis
from bench.overhead import bench_settings, sample_memories
from bench.provider import SimulatedProvider
from bench.services import Services
from domain.memory import MemoryIn
from runtime.database import create_engine
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.memories import retain

ROOT = Path(__file__).resolve().parent.parent
READY_TIMEOUT_SECONDS = 60
RUN_TIMEOUT_SECONDS = 900
WARM_UP_CONCURRENCY = 20  # runtime.database.create_engine's pool: 10 + 10 overflow


@dataclass(frozen=True)
class Workload:
    scopes: int = 100
    memories_per_scope: int = 50
    latency_ms: int = 200
    limit_per_second: float = 40.0
    provider_quota_per_second: float = 50.0


@dataclass
class ManyScopesRun:
    workers: int
    wall_seconds: float
    memories: int
    model_calls: int
    achieved_calls_per_second: float
    steady_calls_per_second: float
    busiest_second: int
    provider_429s: int
    cpu_seconds: dict[str, float]
    activity_retries: dict[str, int]
    activity_retry_causes: dict[str, int]

    def summary(self, workload: Workload) -> dict:
        return {
            "worker_processes": self.workers,
            "wall_seconds": round(self.wall_seconds, 3),
            "memories": self.memories,
            "memories_per_second": round(self.memories / self.wall_seconds, 2),
            "model_calls": self.model_calls,
            "model_calls_per_second": round(self.achieved_calls_per_second, 2),
            "rate_limit_utilisation": round(self.achieved_calls_per_second / workload.limit_per_second, 3),
            "steady_calls_per_second": round(self.steady_calls_per_second, 2),
            "steady_rate_limit_utilisation": round(self.steady_calls_per_second / workload.limit_per_second, 3),
            "busiest_second_calls": self.busiest_second,
            "provider_429s": self.provider_429s,
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
    """A database where every scope has compiled its first memories and has the next ones retained."""
    settings = bench_settings()
    sample = sample_memories()
    async with services.fresh_database() as url:
        engine = create_engine(url)
        try:
            for index, (tenant, owner) in enumerate(scopes(workload)):
                await retain(engine, tenant, owner, scope_memories(index, workload, sample)[0])
            # No more activities at once than the engine has connections: preparation, not measurement.
            async with build_worker(services.client, engine, settings, max_concurrent_activities=WARM_UP_CONCURRENCY):
                handles = await asyncio.gather(*[
                    signal_compile(services.client, tenant, owner, trigger="admin", settings=settings)
                    for tenant, owner in scopes(workload)])
                await asyncio.gather(*[handle.result() for handle in handles])
            for index, (tenant, owner) in enumerate(scopes(workload)):
                await retain(engine, tenant, owner, scope_memories(index, workload, sample)[1])
        finally:
            await engine.dispose()
        yield url


async def compile_many_scopes(services: Services, warmed_url: str, workload: Workload,
                              workers: int) -> ManyScopesRun:
    run_tag = uuid.uuid4().hex[:8]
    provider = SimulatedProvider(quota_per_second=workload.provider_quota_per_second)
    server = await provider.serve()
    provider_port = server.sockets[0].getsockname()[1]
    async with services.fresh_database(warmed_url) as url:
        env = {
            "DATABASE_URL": url, "TEMPORAL_ADDRESS": services.temporal_address, "WIKI_LLM": "scripted",
            "WIKI_DEBOUNCE_SECONDS": "0", "WIKI_TASK_QUEUE": f"many-{run_tag}", "WIKI_LLM_TASK_QUEUE": f"llm-{run_tag}",
            "WIKI_LLM_MAX_PER_SECOND": str(workload.limit_per_second),
            "WIKI_SCRIPTED_LATENCY_MS": str(workload.latency_ms), "BENCH_PROVIDER": f"127.0.0.1:{provider_port}",
        }
        settings = Settings(**env)
        warm_runs = await _ledger_runs(url)
        processes = [await _start_worker_process(env, Path(tempfile.gettempdir()) / f"wiki-bench-{run_tag}-{i}.log")
                     for i in range(workers)]
        try:
            cpu = services.cpu_account(**{f"worker_process_{i + 1}": p.pid for i, p in enumerate(processes)})
            cpu.start()
            started = time.monotonic()
            handles = await asyncio.gather(*[
                signal_compile(services.client, tenant, owner, trigger="admin", settings=settings)
                for tenant, owner in scopes(workload)])
            # Bounded: a worker process that dies would otherwise leave the bench waiting forever.
            await asyncio.wait_for(asyncio.gather(*[handle.result() for handle in handles]), RUN_TIMEOUT_SECONDS)
            wall = time.monotonic() - started
            cpu_seconds = cpu.stop()
        finally:
            for process in processes:
                await _stop_worker_process(process)
            server.close()
            await server.wait_closed()
        chain = ChainAnalysis()
        for workflow_id, run_id in sorted(set(await _ledger_runs(url)) - set(warm_runs)):
            chain.add_run(await services.client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history())
    return ManyScopesRun(
        workers=workers, wall_seconds=wall, memories=workload.scopes * workload.memories_per_scope,
        model_calls=len(provider.accepted), achieved_calls_per_second=provider.achieved_per_second(),
        steady_calls_per_second=provider.steady_per_second(),
        busiest_second=provider.busiest_second(), provider_429s=provider.throttled, cpu_seconds=cpu_seconds,
        activity_retries=dict(chain.retries), activity_retry_causes=dict(chain.retry_causes),
    )


async def _start_worker_process(env: dict[str, str], log_path: Path) -> asyncio.subprocess.Process:
    """A bench worker process, once it polls; its log (activity retries are logged there) goes to `log_path`."""
    with log_path.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.scope_worker", cwd=ROOT, env={**os.environ, **env},
            stdout=asyncio.subprocess.PIPE, stderr=log, stdin=asyncio.subprocess.DEVNULL,
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
