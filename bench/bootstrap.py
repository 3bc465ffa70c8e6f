"""The bench part `bootstrap`: a year of memories imported in one compile.

10,000 memories of the sample generator (BENCH_BOOTSTRAP_MEMORIES) retained at once, then compiled
by one signal, as `wiki compile` does, by one worker process (bench/scope_worker.py: the product's
workers as `wiki worker` composes them, with its own CPU pool, slots and pool):

- offline: the scripted planner (`wiki compile`, trigger admin);
- simulator: the anthropic SDK against the Claude simulator in Message Batches mode (`wiki compile
  --bootstrap`: leaf plans, section writes, aggregation plans and merge judges through batches; the
  simulator ends a batch at once and the workflow polls every second).

For each: wall time, memories a second, the worker process's peak memory (VmHWM), CPU seconds by
process, the activity attempts (from the runs' histories: every regular activity's attempts, every
local activity) and those that did not complete: timed out, cancelled or failed, from the ledger's
counts (activities/attempts.py) and, for regular activities, from the histories (a later attempt's
`last_failure`). The machine is shared: the load average is recorded at the start and the end.

Two smaller measurements explain the design's choices: where CPU-bound steps run
(`offload`: 32 section rewrites of the 10,000-memory sample inline on the event loop, on threads,
on processes: wall time and the loop's longest stall) and how many activities a worker runs per CPU
(`slots`: BENCH_BOOTSTRAP_SWEEP_MEMORIES memories, 1,000 by default, compiled at 1, 2, 4 and 8 slots
per CPU), and how many memories a batch takes offline (`page_sizes`: BENCH_BOOTSTRAP_PAGE_MEMORIES
memories, 3,000 by default, compiled 50, 200 and 500 to a batch; the scripted planner's default,
SCRIPTED_PAGE_SIZE, was chosen from it).
"""

from __future__ import annotations

import logging
import os
import tempfile
import uuid
from pathlib import Path

from temporalio.api.enums.v1 import EventType

from app.capacity import SCRIPTED_SLOTS_PER_CPU
from bench.fairness import start_worker_process, stop_worker_process
from bench.offload import measure_offload
from bench.provenance import load_average
from bench.services import Services
from chaos.measure import ledger_rows
from claude_sim import ClaudeSimulator, SimConfig
from domain.memory import MemoryIn
from planners.cpu_pool import available_cpus
from runtime.database import create_engine
from runtime.history_events import local_activity
from runtime.settings import SCRIPTED_PAGE_SIZE, Settings
from sample.corpus import generate_sample
from store.memories import store_memories

MEMORIES = int(os.environ.get("BENCH_BOOTSTRAP_MEMORIES", "10000"))
SWEEP_MEMORIES = int(os.environ.get("BENCH_BOOTSTRAP_SWEEP_MEMORIES", "1000"))
SWEEP_SLOTS_PER_CPU = (1, 2, 4, 8)
PAGE_MEMORIES = int(os.environ.get("BENCH_BOOTSTRAP_PAGE_MEMORIES", "3000"))
SWEEP_PAGE_SIZES = (50, 200, 500)
OWNER = "eric"
log = logging.getLogger("bench.bootstrap")


def peak_memory_mib(pid: int) -> float:
    """The process's peak resident memory (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


async def history_attempts(services: Services, runs: list[dict]) -> dict[str, int]:
    """Activity attempts in the runs' histories: a regular activity's last started event carries its
    attempt number (and the previous attempt's failure); a local activity's marker, one attempt."""
    counts = {"regular_activities": 0, "regular_attempts": 0, "local_activities": 0, "retried_after_timeout": 0,
              "retried_after_cancel": 0, "retried_after_failure": 0}
    for run in runs:
        history = await services.client.get_workflow_handle(run["workflow_id"], run_id=run["run_id"]).fetch_history()
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                started = event.activity_task_started_event_attributes
                counts["regular_activities"] += 1
                counts["regular_attempts"] += started.attempt
                if started.attempt > 1 and started.HasField("last_failure"):
                    failure = started.last_failure
                    kind = ("retried_after_timeout" if failure.HasField("timeout_failure_info") else
                            "retried_after_cancel" if failure.HasField("canceled_failure_info") else
                            "retried_after_failure")
                    counts[kind] += 1
            elif local_activity(event) is not None:
                counts["local_activities"] += 1
    return counts


async def import_once(services: Services, name: str, memories: list[MemoryIn], env: dict[str, str],
                      trigger: str) -> dict:
    """Retain `memories` in a fresh database, start a worker process, compile them with one signal."""
    tenant, run_tag = f"boot{uuid.uuid4().hex[:6]}", uuid.uuid4().hex[:8]
    async with services.fresh_database() as url:
        env = {"DATABASE_URL": url, "TEMPORAL_ADDRESS": services.temporal_address, "WIKI_DEBOUNCE_SECONDS": "0",
               "WIKI_TASK_QUEUE": f"boot-{run_tag}", **env}
        settings = Settings(**env)
        engine = create_engine(url)
        try:
            await store_memories(engine, tenant, OWNER, memories)
            process = await start_worker_process(env, Path(tempfile.gettempdir()) / f"wiki-bench-boot-{run_tag}.log")
            try:
                load_start = load_average()
                wall, cpu_seconds = await services.timed_compile(tenant, OWNER, trigger, settings, worker=process.pid)
                load_end = load_average()
                peak = peak_memory_mib(process.pid)
            finally:
                await stop_worker_process(process)
            runs = await ledger_rows(engine, tenant, OWNER)
        finally:
            await engine.dispose()
    attempts = await history_attempts(services, runs)
    redone = {key: sum(int(run["metrics"].get(f"attempts_{key}", 0)) for run in runs)
              for key in ("timed_out", "cancelled", "failed")}
    compiled = sum(int(run["metrics"].get("records_read", 0)) for run in runs)
    result = {
        "memories": len(memories), "memories_compiled": compiled, "trigger": trigger,
        "completed": runs[-1]["status"] == "succeeded" and compiled == len(memories),
        "wall_seconds": round(wall, 1), "memories_per_second": round(compiled / wall, 2) if wall else 0.0,
        "peak_worker_memory_mib": peak, "runs": len(runs), "load_average": {"start": load_start, "end": load_end},
        "cpu_seconds": cpu_seconds,
        "activity_attempts": attempts["regular_attempts"] + attempts["local_activities"] + redone["failed"],
        "attempts_timed_out": redone["timed_out"], "attempts_cancelled": redone["cancelled"],
        "attempts_failed": redone["failed"], "history": attempts,
    }
    log.info("bootstrap %s: %d memories in %.0f s, %d attempts timed out, %d cancelled", name, compiled, wall,
             redone["timed_out"], redone["cancelled"])
    return result


async def measure_slots(services: Services) -> list[dict]:
    """The offline import of SWEEP_MEMORIES memories at several activity slots per CPU."""
    memories = [MemoryIn.model_validate(row) for row in generate_sample(SWEEP_MEMORIES)]
    sweep = []
    for per_cpu in SWEEP_SLOTS_PER_CPU:
        slots = per_cpu * available_cpus()
        run = await import_once(services, f"slots {slots}", memories,
                                {"WIKI_LLM": "scripted", "WIKI_WORKER_ACTIVITY_SLOTS": str(slots)}, "admin")
        sweep.append({"slots_per_cpu": per_cpu, "activity_slots": slots,
                      **{key: run[key] for key in ("wall_seconds", "memories_per_second", "peak_worker_memory_mib",
                                                   "attempts_timed_out", "attempts_cancelled", "load_average",
                                                   "cpu_seconds")}})
    return sweep


async def measure_page_sizes(services: Services) -> list[dict]:
    """The offline import of PAGE_MEMORIES memories at several batch sizes (WIKI_RECORD_PAGE_SIZE)."""
    memories = [MemoryIn.model_validate(row) for row in generate_sample(PAGE_MEMORIES)]
    sweep = []
    for page_size in SWEEP_PAGE_SIZES:
        run = await import_once(services, f"page size {page_size}", memories,
                                {"WIKI_LLM": "scripted", "WIKI_RECORD_PAGE_SIZE": str(page_size)}, "admin")
        sweep.append({"page_size": page_size, **{key: run[key] for key in (
            "memories", "wall_seconds", "memories_per_second", "peak_worker_memory_mib", "runs",
            "attempts_timed_out", "attempts_cancelled", "load_average", "cpu_seconds")}})
    return sweep


async def measure_bootstrap(services: Services, repeats: int) -> dict:
    memories = [MemoryIn.model_validate(row) for row in generate_sample(MEMORIES)]
    offline = await import_once(services, "offline", memories, {"WIKI_LLM": "scripted"}, "admin")
    async with ClaudeSimulator(SimConfig()) as simulator:
        simulated = await import_once(services, "simulator", memories, {
            "WIKI_LLM": "anthropic", "ANTHROPIC_BASE_URL": simulator.base_url,
            "ANTHROPIC_API_KEY": next(iter(simulator.config.api_keys)), "WIKI_LLM_BATCH_MODE": "auto",
            "WIKI_LLM_BATCH_POLL_SECONDS": "1", "WIKI_LLM_BATCH_WINDOW_SECONDS": "0"}, "bootstrap_import")
        simulated["model_calls"] = len([call for call in simulator.calls if call.usage is not None])
        simulated["batched_model_calls"] = len([call for call in simulator.calls if call.batch_id])
    return {"cpus": available_cpus(), "slots_per_cpu": SCRIPTED_SLOTS_PER_CPU, "page_size": SCRIPTED_PAGE_SIZE,
            "offline": offline, "simulator_batches": simulated, "offload": await measure_offload(),
            "slots": await measure_slots(services), "page_sizes": await measure_page_sizes(services)}
