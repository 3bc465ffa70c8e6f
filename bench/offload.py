"""Where a worker's CPU-bound steps should run (planners/cpu_pool.py chose threads from this).

A batch's worth of section rewrites (the 32 largest sections of the 10,000-memory sample but the
first, each from at most 1,500 of its memories, as the scripted writer rebuilds them) run four ways
on one event loop while a probe task measures how late the loop wakes it (the longest stall: what
an activity's heartbeat would wait): inline on the loop, on one thread per CPU, on four threads per
CPU, and on one process per CPU (whose inputs must be pickled across). Each way is timed once, warm.
"""

from __future__ import annotations

import asyncio
import collections
import pickle
import time
import uuid
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

from bench.provenance import load_average
from domain.context import MemoryRecord
from domain.memory import MemoryIn
from planners.cpu_pool import available_cpus
from planners.scripted.condense import condensed_body
from planners.scripted.subjects import hints_of
from sample.corpus import generate_sample

MEMORIES = 10_000
SECTIONS = 32
SECTION_MEMORIES = 1_500
PROBE_SECONDS = 0.05
Job = tuple[str, str, str, list[MemoryRecord]]


def rewrite_jobs() -> list[Job]:
    memories = []
    for index, row in enumerate(generate_sample(MEMORIES)):
        memory = MemoryIn.model_validate(row)
        at = memory.occurred_at
        assert at is not None
        memories.append(MemoryRecord(id=memory.id or uuid.uuid5(uuid.NAMESPACE_OID, str(index)), content=memory.content,
                                     metadata=memory.metadata, created_at=at, updated_at=at))
    by_name: dict[tuple[str, str], list[MemoryRecord]] = collections.defaultdict(list)
    for memory in memories:
        for hint in hints_of(memory):
            by_name[(hint.type, hint.name)].append(memory)
    largest = sorted(by_name.items(), key=lambda item: -len(item[1]))[1:SECTIONS + 1]
    return [(page_type, {"topic": "highlights"}.get(page_type, "notes"), name, cited[:SECTION_MEMORIES])
            for (page_type, name), cited in largest]


def rewrite(job: Job) -> str:
    page_type, slug, title, cited = job
    return condensed_body(page_type, slug, title, cited) or ""


async def _probe(stop: asyncio.Event) -> float:
    worst = 0.0
    while not stop.is_set():
        asked = time.perf_counter()
        await asyncio.sleep(PROBE_SECONDS)
        worst = max(worst, time.perf_counter() - asked - PROBE_SECONDS)
    return worst


async def _one_way(jobs: list[Job], executor: Executor | None) -> dict:
    loop = asyncio.get_running_loop()
    if isinstance(executor, ProcessPoolExecutor):  # start the processes before the clock
        await asyncio.gather(*[loop.run_in_executor(executor, rewrite, jobs[-1]) for _ in range(available_cpus())])
    stop = asyncio.Event()
    probe = asyncio.create_task(_probe(stop))
    await asyncio.sleep(0)
    started = time.perf_counter()

    async def one(job: Job) -> str:
        if executor is None:
            return rewrite(job)
        return await loop.run_in_executor(executor, rewrite, job)

    await asyncio.gather(*[one(job) for job in jobs])
    wall = time.perf_counter() - started
    stop.set()
    return {"wall_seconds": round(wall, 2), "longest_loop_stall_ms": round(await probe * 1000), "load": load_average()}


async def _all_ways(jobs: list[Job]) -> dict:
    cpus = available_cpus()
    for job in jobs:  # warm the caches (sentence splits) every way shares
        rewrite(job)
    ways: dict[str, dict] = {"inline on the event loop": await _one_way(jobs, None)}
    for name, executor in ((f"{cpus} threads (one per CPU)", ThreadPoolExecutor(cpus)),
                           (f"{4 * cpus} threads", ThreadPoolExecutor(4 * cpus)),
                           (f"{cpus} processes", ProcessPoolExecutor(cpus))):
        with executor:
            ways[name] = await _one_way(jobs, executor)
    return ways


async def measure_offload() -> dict:
    jobs = await asyncio.to_thread(rewrite_jobs)
    pickled = len(pickle.dumps(jobs))
    # On a loop of its own (a thread), so the bench's own loop is not the one measured.
    ways = await asyncio.to_thread(asyncio.run, _all_ways(jobs))
    return {"sections": len(jobs), "memories": sum(len(job[3]) for job in jobs),
            "pickled_mib": round(pickled / 2**20, 1), "ways": ways}
