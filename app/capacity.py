"""What one worker process runs at once, sized to what it can serve.

- CPU: CPU-bound steps run on a pool of one thread per CPU the process may use
  (planners/cpu_pool.py), so they never hold the event loop that sends heartbeats.
- Activities: with the scripted planner every activity computes; it alternates short database
  reads and writes (on the loop) with its computation (on the pool). `SCRIPTED_SLOTS_PER_CPU`
  activities per CPU keep the pool busy while others read or write; more only wait for the pool,
  holding their memories in memory (measured by the `bootstrap` bench part's slot sweep). With a
  model, an activity waits on the network: as many as the model quota keeps busy, its calls a
  second (WIKI_LLM_MAX_PER_SECOND) times `MODEL_CALL_SECONDS`, else `MODEL_SLOTS`.
- Database: every activity and local activity holds at most one connection at a time, so the
  worker's pool holds one per slot; no activity ever waits for a connection.
- Section writes: a batch keeps at most its worker's activity slots, less two (the plan of the next
  batch and a ledger step run beside them), in flight, so every write it schedules starts at once
  and none waits in the queue against its timeouts (the workflow asks with `compile.worker_capacity`).

WIKI_WORKER_ACTIVITY_SLOTS and WIKI_WORKER_CPU_THREADS override the derived sizes.
"""

from __future__ import annotations

import math

from pydantic import BaseModel

from planners import cpu_pool
from runtime.settings import Settings

SCRIPTED_SLOTS_PER_CPU = 4
# A model call's typical length (a plan takes longer, a section write less), to turn a rate into a number
# of calls in flight (Little's law).
MODEL_CALL_SECONDS = 20.0
MODEL_SLOTS = 40
MIN_SLOTS = 4
MAX_SLOTS = 200
# Local activities (a batch's read, resolve and apply) run one at a time per compile on its worker.
LOCAL_ACTIVITY_SLOTS = 16
# Beside a batch's section writes: the next batch's plan and a ledger or judge step.
SLOTS_BESIDE_WRITES = 2


class WorkerCapacity(BaseModel):
    cpu_threads: int
    activity_slots: int
    local_activity_slots: int

    @property
    def database_connections(self) -> int:
        return self.activity_slots + self.local_activity_slots

    @property
    def section_writes(self) -> int:
        """The section writes one batch may have in flight on this worker."""
        return max(1, self.activity_slots - SLOTS_BESIDE_WRITES)


def worker_capacity(settings: Settings, *, cpu_bound: bool) -> WorkerCapacity:
    """The worker's sizes; `cpu_bound`: its planner computes its answers (the scripted planner)."""
    threads = settings.worker_cpu_threads or cpu_pool.available_cpus()
    if settings.worker_activity_slots:
        return WorkerCapacity(cpu_threads=threads, activity_slots=settings.worker_activity_slots,
                              local_activity_slots=LOCAL_ACTIVITY_SLOTS)
    if cpu_bound:
        slots = threads * SCRIPTED_SLOTS_PER_CPU
    elif settings.llm_max_per_second is not None:
        slots = math.ceil(settings.llm_max_per_second * MODEL_CALL_SECONDS)
    else:
        slots = MODEL_SLOTS
    return WorkerCapacity(cpu_threads=threads, activity_slots=min(MAX_SLOTS, max(MIN_SLOTS, slots)),
                          local_activity_slots=LOCAL_ACTIVITY_SLOTS)
