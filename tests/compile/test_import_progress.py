"""A compile reports itself while it imports, and keeps no more section writes in flight than its worker
runs at once.

- Progress: 40 memories in batches of 10, two runs of 20 (continue-as-new). The second run's first plan
  is held until the test has read the `progress` query: 20 of 40 memories compiled, and already an
  estimate of the time left, because the rate is the chain's since its first batch (carried across
  continue-as-new), not the second run's, which has compiled nothing yet. At the end: 40 of 40.
- Window: a worker of 3 activity slots runs 1 section write at once beside the plan of the next batch
  and a ledger step; the histories show `compile.worker_capacity` asked once per run that writes, and
  never two section writes in flight.
"""

from __future__ import annotations

import asyncio

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from messages.compile import Progress
from planners.scripted.planner import ScriptedPlanner
from runtime.temporal_client import signal_compile
from tests.compile.helpers import ledger, poll, retain_sample, running_worker
from tests.compile.helpers import test_settings as settings_for

CAPACITY = "compile.worker_capacity"
CLOSED = ("activity_task_completed_event_attributes", "activity_task_failed_event_attributes",
          "activity_task_timed_out_event_attributes", "activity_task_canceled_event_attributes")
WRITE = "llm.write_section"


class HeldPlanner:
    """The scripted planner, whose `held_call`-th plan (counting from 1) waits until released."""

    reads_possible_children = ScriptedPlanner.reads_possible_children
    rewrites_from_sources = ScriptedPlanner.rewrites_from_sources

    def __init__(self, held_call: int) -> None:
        self._real = ScriptedPlanner()
        self._held_call = held_call
        self._calls = 0
        self.reached = asyncio.Event()
        self.released = asyncio.Event()

    def __getattr__(self, name: str):
        return getattr(self._real, name)

    async def plan_batch(self, context, model_id):
        self._calls += 1
        if self._calls == self._held_call:
            self.reached.set()
            await self.released.wait()
        return await self._real.plan_batch(context, model_id)


async def test_the_progress_query_counts_the_scope_and_estimates_from_the_chains_rate(client: Client,
                                                                                      engine: AsyncEngine):
    settings = settings_for(WIKI_RECORD_PAGE_SIZE=10, WIKI_MAX_RECORDS_PER_RUN=20, WIKI_AGGREGATION_PASS_ENABLED=False)
    await retain_sample(engine, "progress", "o", 40)
    planner = HeldPlanner(held_call=3)  # run 1 plans its two batches; the third plan is run 2's first
    async with running_worker(client, engine, settings, planner=planner):
        handle = await signal_compile(client, "progress", "o", trigger="admin", settings=settings)
        await asyncio.wait_for(planner.reached.wait(), 120)
        held: Progress = await handle.query("progress", result_type=Progress)
        planner.released.set()
        await handle.result()
        done: Progress = await client.get_workflow_handle(handle.id).query("progress", result_type=Progress)
    assert (held.run_no, held.records_read, held.memories_compiled, held.memories_total) == (2, 0, 20, 40)
    assert held.memories_per_second is not None and held.memories_per_second > 0
    assert held.seconds_left is not None and abs(held.seconds_left - 20 / held.memories_per_second) < 1e-6
    assert (done.memories_compiled, done.memories_total, done.seconds_left) == (40, 40, 0)
    statuses = [row["status"] for row in await ledger(engine, "progress", "o")]
    assert statuses[-1] == "succeeded" and set(statuses[:-1]) == {"continued"}


async def test_a_batch_keeps_no_more_section_writes_in_flight_than_its_worker_runs(client: Client,
                                                                                   engine: AsyncEngine):
    settings = settings_for(WIKI_RECORD_PAGE_SIZE=10, WIKI_WORKER_ACTIVITY_SLOTS=3, WIKI_AGGREGATION_PASS_ENABLED=False)
    await retain_sample(engine, "window", "o", 40)
    async with running_worker(client, engine, settings):
        handle = await signal_compile(client, "window", "o", trigger="admin", settings=settings)
        await handle.result()
    async with engine.connect() as conn:
        run_ids = (await conn.execute(text("SELECT run_id FROM wiki_compile_jobs WHERE tenant_id = 'window' "
                                           "ORDER BY started_at"))).scalars().all()
    events = [event for run_id in run_ids
              for event in (await client.get_workflow_handle(handle.id, run_id=run_id).fetch_history()).events]
    scheduled: dict[int, str] = {}
    in_flight = most = writes = capacity = 0
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            scheduled[event.event_id] = name
            capacity += name == CAPACITY
            if name == WRITE:
                writes += 1
                in_flight += 1
                most = max(most, in_flight)
        else:
            closed = next((getattr(event, field) for field in CLOSED if event.HasField(field)), None)
            if closed is not None and scheduled.get(closed.scheduled_event_id) == WRITE:
                in_flight -= 1
    runs_writing = len(run_ids) - 1  # every run but the last, which found the scope drained
    assert (writes > 1, capacity, most) == (True, runs_writing, 1), sorted(set(scheduled.values()))

    async def no_timeouts() -> bool:
        return all(row["metrics"].get("attempts_timed_out") == 0 for row in await ledger(engine, "window", "o"))

    await poll(no_timeouts, timeout=10, what="a ledger with no attempt timed out")
