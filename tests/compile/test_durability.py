"""Durability of the compile: a killed worker, repeated compiles, concurrent wake-ups, caps, visibility.

The reference for "nothing lost, nothing doubled" is the same memories compiled without interruption
in a second fresh database: page, section, alias, link, source and mention ids are uuid5 of natural
keys, so two wikis of the same memories compare row for row.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from domain.memory import MemoryIn
from messages.compile import Progress, compile_workflow_id
from runtime.history_events import local_activity
from runtime.search_attributes import WIKI_OWNER, WIKI_RUN, WIKI_TENANT, WIKI_TRIGGER
from runtime.settings import Settings
from runtime.temporal_client import compile_options, signal_compile
from store.memories import store_memories
from tests.compile.helpers import (
    compile_scope,
    ledger,
    ledger_total,
    own_process,
    poll,
    retain_sample,
    running_worker,
    sample_memories,
    wiki_snapshot,
)
from tests.compile.helpers import test_settings as settings_for

PROJECT_DIR = Path(__file__).resolve().parents[2]
# Caps high enough that a test compile is one run, for the tests about what happens inside a run.
UNCAPPED = {"WIKI_MAX_NEW_PAGES_PER_RUN": 100_000, "WIKI_MAX_SECTIONS_REWRITTEN_PER_RUN": 100_000,
            "WIKI_MAX_RECORDS_PER_RUN": 100_000}
T = TypeVar("T")


# --------------------------------------------------------------------------- helpers


def new_scope() -> tuple[str, str]:
    """A scope of its own: workflow ids (the scope lock) are shared by the whole Temporal session."""
    return f"t-{uuid.uuid4().hex[:10]}", "alice"


async def _scalar(engine: AsyncEngine, sql: str, tenant: str, owner: str):
    async with engine.connect() as conn:
        return (await conn.execute(text(sql), {"t": tenant, "o": owner})).scalar_one_or_none()


async def cursor_record_id(engine: AsyncEngine, tenant: str, owner: str) -> uuid.UUID | None:
    return await _scalar(engine, "SELECT last_record_id FROM wiki_compile_cursors "
                                 "WHERE tenant_id = :t AND owner_id = :o", tenant, owner)


async def last_memory_id(engine: AsyncEngine, tenant: str, owner: str) -> uuid.UUID:
    """The scope's last memory in compile order: where a fully compiled scope's cursor stands."""
    return await _scalar(engine, "SELECT id FROM memory_units WHERE tenant_id = :t AND owner_id = :o "
                                 "ORDER BY date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC') DESC, id DESC "
                                 "LIMIT 1", tenant, owner)


async def comparable_wiki(engine: AsyncEngine, tenant: str, owner: str) -> dict[str, list[tuple]]:
    """The scope's wiki with the cursor as a memory id only: retain stamps `updated_at` from the
    database clock, so the same memories retained in two databases differ there and nowhere else."""
    snapshot = await wiki_snapshot(engine, tenant, owner)
    snapshot["cursor"] = [row[1:] for row in snapshot["cursor"]]
    return snapshot


def assert_same_wiki(actual: dict[str, list[tuple]], expected: dict[str, list[tuple]]) -> None:
    """Equal wikis, or a message naming the rows only one of them has."""
    differences = []
    for table in expected:
        mine, theirs = set(map(repr, actual[table])), set(map(repr, expected[table]))
        differences += [f"only in the compile under test: {table} {row}" for row in sorted(mine - theirs)]
        differences += [f"only in the reference: {table} {row}" for row in sorted(theirs - mine)]
    assert not differences, "\n".join(differences[:20])
    assert actual == expected


async def retain_and_compile(client: Client, engine: AsyncEngine, settings: Settings, tenant: str, owner: str,
                             count: int) -> dict[str, list[tuple]]:
    """`count` sample memories retained and compiled in one go by an in-process worker."""
    assert await retain_sample(engine, tenant, owner, count) == count
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner)
    return await comparable_wiki(engine, tenant, owner)


# --------------------------------------------------------------------------- 1. a killed worker


@contextmanager
def worker_process(env: dict[str, str], log_path: Path) -> Iterator[subprocess.Popen]:
    """`python worker.py` as a separate process, always killed on the way out."""
    with own_process([sys.executable, "worker.py"], log_path, cwd=PROJECT_DIR, env={**os.environ, **env}) as process:
        yield process


async def sections_being_written(engine: AsyncEngine, tenant: str, owner: str) -> bool:
    """A batch after the first is writing its sections: resolved, not applied, some drafts stored."""
    return bool(await _scalar(engine, """
        SELECT EXISTS (SELECT 1 FROM wiki_compile_plans p
                       WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'resolved'
                         AND EXISTS (SELECT 1 FROM wiki_compile_section_drafts d WHERE d.plan_id = p.id))
           AND EXISTS (SELECT 1 FROM wiki_compile_cursors
                       WHERE tenant_id = :t AND owner_id = :o AND last_record_id IS NOT NULL)
    """, tenant, owner))


async def work_redone(client: Client, engine: AsyncEngine, workflow_id: str, tenant: str, owner: str) -> list[str]:
    """What the scope's run histories show was left unfinished by a worker and redone elsewhere:
    activities that needed another attempt, workflow tasks that timed out."""
    async with engine.connect() as conn:
        runs = (await conn.execute(text("SELECT run_id FROM wiki_compile_jobs WHERE kind = 'compile' "
                                        "AND tenant_id = :t AND owner_id = :o"),
                                   {"t": tenant, "o": owner})).scalars().all()
    redone = []
    for run_id in runs:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        activity_names = {}
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                activity_names[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
            elif (event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
                  and event.activity_task_started_event_attributes.attempt > 1):
                redone.append(activity_names[event.activity_task_started_event_attributes.scheduled_event_id])
            elif (local := local_activity(event)) is not None and local.attempt > 1:
                redone.append(local.activity_type)
            elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
                redone.append("workflow task")
    return redone


async def test_a_worker_killed_mid_compile_is_replaced_and_the_wiki_is_the_same(
        client, temporal_env: WorkflowEnvironment, database_url, engine, second_engine, tmp_path):
    tenant, owner = new_scope()
    count = 250
    settings = settings_for(WIKI_HEARTBEAT_TIMEOUT_SECONDS=2)
    worker_env = {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "WIKI_TASK_QUEUE": settings.task_queue,
        "WIKI_LLM": "scripted",
        "WIKI_SCRIPTED_LATENCY_MS": "30",
    }
    assert await retain_sample(engine, tenant, owner, count) == count
    last = await last_memory_id(engine, tenant, owner)
    handle = await signal_compile(client, tenant, owner, trigger="admin", settings=settings)

    with worker_process(worker_env, tmp_path / "first-worker.log") as first:
        async def killable() -> bool:
            assert first.poll() is None, (tmp_path / "first-worker.log").read_text()
            return await sections_being_written(engine, tenant, owner)

        await poll(killable, timeout=60, every=0.02, what="a later batch to be writing sections")
        first.kill()
        first.wait(timeout=30)
    killed_at = time.monotonic()
    assert await cursor_record_id(engine, tenant, owner) != last, "the compile finished before the kill"

    with worker_process(worker_env, tmp_path / "second-worker.log"):
        await asyncio.wait_for(handle.result(), timeout=120)
    print(f"compile finished {time.monotonic() - killed_at:.1f}s after the kill")

    rows = await ledger(engine, tenant, owner)
    assert ledger_total(rows, "records_read") == count
    assert rows[-1]["status"] == "succeeded"
    assert await cursor_record_id(engine, tenant, owner) == last
    redone = await work_redone(client, engine, handle.id, tenant, owner)
    print(f"redone after the kill: {redone}")
    assert redone, "the kill interrupted nothing"

    reference = await retain_and_compile(client, second_engine, settings, tenant, owner, count)
    assert_same_wiki(await comparable_wiki(engine, tenant, owner), reference)


# --------------------------------------------------------------------------- 2. the same memories twice


async def test_the_same_memories_give_the_same_rows_and_a_recompile_changes_nothing(
        client, engine, second_engine):
    tenant, owner = new_scope()
    settings = settings_for()
    first = await retain_and_compile(client, engine, settings, tenant, owner, 150)
    second = await retain_and_compile(client, second_engine, settings, tenant, owner, 150)
    assert len(first["pages"]) > 10 and first["cursor"] == [(await last_memory_id(engine, tenant, owner),)]
    assert_same_wiki(second, first)

    runs_before = len(await ledger(engine, tenant, owner))
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner)
    rows = await ledger(engine, tenant, owner)
    assert len(rows) == runs_before + 1
    assert rows[-1]["status"] == "succeeded" and rows[-1]["metrics"]["records_read"] == 0
    assert_same_wiki(await comparable_wiki(engine, tenant, owner), first)


# --------------------------------------------------------------------------- 3. concurrent wake-ups


async def wait_until_compiled(client: Client, engine: AsyncEngine, tenant: str, owner: str) -> None:
    """Follow the scope's workflow, including a run that a late wake-up started after the previous one
    ended, until it is closed and the cursor stands at the scope's last memory."""
    handle = client.get_workflow_handle(compile_workflow_id(tenant, owner))
    target = await last_memory_id(engine, tenant, owner)

    async def compiled() -> bool:
        description = await handle.describe()
        if description.status == WorkflowExecutionStatus.RUNNING:
            await handle.result()
            return False
        assert description.status == WorkflowExecutionStatus.COMPLETED, description.status
        return await cursor_record_id(engine, tenant, owner) == target

    await poll(compiled, timeout=60, what="the scope to be compiled up to its last memory")


async def phase_reached(handle: WorkflowHandle, phases: tuple[str, ...]) -> Progress | None:
    progress = await handle.query("progress", result_type=Progress)
    return progress if progress.phase in phases else None


@pytest.mark.parametrize("debounce", [0, 0.5])
async def test_retains_during_a_compile_lose_no_wake_up(client, engine, debounce):
    tenant, owner = new_scope()
    settings = settings_for(WIKI_SCRIPTED_LATENCY_MS=20, WIKI_DEBOUNCE_SECONDS=debounce, **UNCAPPED)
    memories = sample_memories(200)
    earlier, later = memories[:100], memories[100:]
    # Ten small bursts while the earlier memories are being compiled, ten more once the compile has
    # drained the cursor and is in its final aggregation pass (a wake-up there must not be dropped).
    while_batching, while_finishing = [later[i::20] for i in range(10)], [later[i::20] for i in range(10, 20)]

    async def retain_and_wake(burst: list[MemoryIn]) -> int:
        stored = (await store_memories(engine, tenant, owner, burst)).changed
        await signal_compile(client, tenant, owner, memory_count=stored, settings=settings)
        return stored

    async with running_worker(client, engine, settings):
        assert await retain_and_wake(earlier) == len(earlier)
        handle = client.get_workflow_handle(compile_workflow_id(tenant, owner))
        await poll(lambda: phase_reached(handle, ("planning", "resolving", "writing sections", "applying")),
                   timeout=30, every=0.01, what="the first compile to be batching")
        retained = await asyncio.gather(*[retain_and_wake(burst) for burst in while_batching])
        await poll(lambda: phase_reached(handle, ("aggregating", "finishing", "succeeded")),
                   timeout=60, every=0.01, what="the compile to reach its final aggregation pass")
        retained += await asyncio.gather(*[retain_and_wake(burst) for burst in while_finishing])
        await wait_until_compiled(client, engine, tenant, owner)

    assert sum(retained) == len(later)
    rows = await ledger(engine, tenant, owner)
    assert ledger_total(rows, "records_read") == len(memories)
    assert all(row["status"] == "succeeded" for row in rows)


# --------------------------------------------------------------------------- 4. caps


async def test_caps_continue_as_new_without_dropping_planned_work(client, engine, second_engine):
    tenant, owner = new_scope()
    count = 150
    # The aggregation pass works on what one run changed, so how a compile is cut into runs decides the
    # order and provenance of hub rollup sections; the leaf wiki must not depend on it.
    leaf_only = {"WIKI_RECORD_PAGE_SIZE": 20, "WIKI_AGGREGATION_PASS_ENABLED": False}
    capped = settings_for(WIKI_MAX_NEW_PAGES_PER_RUN=3, WIKI_MAX_SECTIONS_REWRITTEN_PER_RUN=5,
                          WIKI_MAX_RECORDS_PER_RUN=60, **leaf_only)
    wiki = await retain_and_compile(client, engine, capped, tenant, owner, count)

    rows = await ledger(engine, tenant, owner)
    assert len(rows) >= 4
    assert [row["status"] for row in rows] == ["continued"] * (len(rows) - 1) + ["succeeded"]
    assert all(row["metrics"]["cap_hit"] in ("max_new_pages", "max_sections_rewritten", "max_records")
               for row in rows[:-1])
    assert ledger_total(rows, "records_read") == count
    assert all(row["metrics"]["records_read"] <= 60 for row in rows)

    async def runs_numbered() -> bool:
        # Each run after a continue-as-new carries the next WikiRun, so a list of runs tells them apart.
        query = f"WorkflowId = '{compile_workflow_id(tenant, owner)}'"
        numbers = [e.typed_search_attributes.get(WIKI_RUN) or 0 async for e in client.list_workflows(query)]
        return sorted(numbers) == list(range(1, len(rows) + 1))

    await poll(runs_numbered, timeout=30, every=0.2, what="every run listed with its own WikiRun")

    uncapped = await retain_and_compile(client, second_engine, settings_for(**leaf_only, **UNCAPPED),
                                        tenant, owner, count)
    assert len(await ledger(second_engine, tenant, owner)) == 1
    assert_same_wiki(wiki, uncapped)


async def test_a_bootstrap_import_reads_up_to_the_bootstrap_record_cap(client, engine):
    tenant, owner = new_scope()
    settings = settings_for(WIKI_MAX_RECORDS_PER_BOOTSTRAP_RUN=20, WIKI_RECORD_PAGE_SIZE=10,
                            **{**UNCAPPED, "WIKI_MAX_RECORDS_PER_RUN": 5})
    assert await retain_sample(engine, tenant, owner, 50) == 50
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, tenant, owner, trigger="bootstrap_import")

    rows = await ledger(engine, tenant, owner)
    assert [row["metrics"]["records_read"] for row in rows] == [20, 20, 10]
    assert [row["metrics"].get("cap_hit") for row in rows] == ["max_records", "max_records", None]
    assert {row["trigger"] for row in rows} == {"bootstrap_import"}


# --------------------------------------------------------------------------- 5. progress and visibility


@asynccontextmanager
async def compiling(client, engine, *, latency_ms: int, memories: int):
    """A new scope's sample of `memories` compiling at `latency_ms` a scripted call, 20 records a batch:
    (tenant, owner, settings, the compile's handle) while the worker runs."""
    tenant, owner = new_scope()
    settings = settings_for(WIKI_SCRIPTED_LATENCY_MS=latency_ms, WIKI_RECORD_PAGE_SIZE=20, **UNCAPPED)
    assert await retain_sample(engine, tenant, owner, memories) == memories
    async with running_worker(client, engine, settings):
        yield tenant, owner, settings, await signal_compile(client, tenant, owner, trigger="admin", settings=settings)


async def test_progress_is_queryable_and_the_run_is_findable_by_tenant(client, engine):
    async with compiling(client, engine, latency_ms=50, memories=60) as (tenant, owner, settings, handle):

        async def progress_after_a_batch() -> Progress | None:
            progress = await handle.query("progress", result_type=Progress)
            return progress if progress.batches_done >= 1 else None

        progress = await poll(progress_after_a_batch, timeout=30, what="a batch to be compiled")
        await handle.result()
        # What the Temporal UI shows as the run's current details: which run, then how it ended.
        metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)

    assert (progress.scope.tenant, progress.scope.owner, progress.run_no, progress.trigger) == (
        tenant, owner, 1, "admin")
    assert progress.phase in ("reading", "planning", "judging merges", "resolving", "writing sections", "applying")
    assert progress.cursor != "start" and progress.records_read == 20 * progress.batches_done
    assert progress.caps == compile_options(settings).caps
    assert progress.input_tokens > 0 and progress.pending_wakeups == 0

    async def listed() -> list:
        return [execution async for execution in client.list_workflows(f"WikiTenant = '{tenant}'")]

    executions = await poll(listed, timeout=30, every=0.2, what="the run to be visible by WikiTenant")
    assert [(execution.id, execution.run_id) for execution in executions] == [(handle.id, handle.result_run_id)]
    description = await handle.describe()
    assert description.status == WorkflowExecutionStatus.COMPLETED
    attributes = description.typed_search_attributes
    assert (attributes.get(WIKI_TENANT), attributes.get(WIKI_OWNER), attributes.get(WIKI_TRIGGER),
            attributes.get(WIKI_RUN)) == (tenant, owner, "admin", 1)
    assert await description.static_summary() == f"compile {tenant}/{owner} · run 1 · trigger admin"
    summary, final = metadata.current_details.split("\n")
    assert summary == f"compile {tenant}/{owner} · run 1 · trigger admin"
    assert final.startswith("succeeded: 60 memories read, ") and " sections rewritten, $" in final


# --------------------------------------------------------------------------- 6. urgent wake-ups, pending activities


@pytest.mark.parametrize("trigger", ["admin", "bootstrap_import", "lint"])
async def test_an_urgent_wake_up_ends_a_retain_debounce_at_once(client, engine, trigger):
    tenant, owner = new_scope()
    settings = settings_for(WIKI_DEBOUNCE_SECONDS=300, **UNCAPPED)
    assert await retain_sample(engine, tenant, owner, 10) == 10
    async with running_worker(client, engine, settings):
        handle = await signal_compile(client, tenant, owner, trigger="memory_retain", memory_count=10,
                                      settings=settings)

        async def debouncing() -> Progress | None:
            progress = await handle.query("progress", result_type=Progress)
            return progress if progress.phase == "debouncing" else None

        progress = await poll(debouncing, timeout=30, what="the retain's debounce")
        assert 0 < (progress.debounce_until - datetime.now(UTC)).total_seconds() <= 300
        await signal_compile(client, tenant, owner, trigger=trigger, settings=settings)
        # Well inside the five minutes the debounce would otherwise have lasted.
        result = await asyncio.wait_for(handle.result(), timeout=60)
    assert result["records_read"] == 10
    assert [row["status"] for row in await ledger(engine, tenant, owner)] == ["succeeded"]


async def test_a_pending_activity_says_what_it_does_in_its_heartbeat(client, engine):
    async with compiling(client, engine, latency_ms=3000, memories=20) as (tenant, owner, settings, handle):

        async def planning_details() -> list[str]:
            pending = (await handle.describe()).raw_description.pending_activities
            return [client.data_converter.payload_converter.from_payloads(list(p.heartbeat_details.payloads))[0]
                    for p in pending if p.activity_type.name == "llm.plan_batch" and p.heartbeat_details.payloads]

        details = await poll(planning_details, timeout=30, every=0.1, what="the planning activity's heartbeat")
        await handle.terminate(reason="test over")
    assert details == [f"planning a batch of {tenant}/{owner} (20 memories)"]
