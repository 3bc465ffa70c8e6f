"""Record workflow histories for the replay test: `make histories` (or `python -m tests.histories.record
[OUT_DIR] [--only SCENARIO ...]`).

Runs small compiles on a throwaway embedded Postgres and a local Temporal dev server and writes every
run's history to tests/histories/<name>.json, one scenario per scope:

- `capped` (compile_<stamp>_run_N): caps low enough to continue as new, a wake-up arriving mid-compile;
- `split_skip`: a truncated plan splits its batch, and a memory that is never a valid plan is skipped;
- `model_rejected`: the model rejects a request after a committed batch; the compile fails, then resumes;
- `apply_rejected`: the database refuses a batch's writes (ApplyRejected); the cause is removed and the
  compile resumes;
- `lint_woken` (with lint_<stamp>.json): the nightly lint finds a promotion candidate and wakes the
  scope's compile, which promotes it with no new memory;
- `urgent_wake`: a retain-started run debouncing for 5 minutes is woken by an admin compile, which
  ends the debounce at once.

Faults come from a planner wrapped around the scripted one (keyed to memory ids, so each recording
takes the same path every time). Names carry the recording time: new recordings sit beside the old
ones, which must keep replaying too. Re-record after an intentional, `workflow.patched`-guarded change;
never to make a failing replay pass.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowFailureError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from app.operations import resume_scope
from app.worker import WORKFLOWS, activities_for, build_worker
from domain import ids
from domain.compile_messages import Progress, compile_workflow_id
from domain.context import MemoryRecord, PlannerContext
from domain.errors import ModelRejected, ModelTruncated, PlanInvalid
from domain.lint import LintInput, LintReport
from domain.plan import NewPage, NewSection
from domain.resolution import MergeQuestion
from domain.resolved_plan import SectionTask
from planners.port import AggregationRequest, JudgeReply, PlanReply, SectionReply
from planners.scripted_planner import ScriptedPlanner
from runtime.database import engine_for, migrate
from runtime.devservices import EmbeddedPostgres, free_port, temporal_cli_path
from runtime.search_attributes import ALL_SEARCH_ATTRIBUTES
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.memories import retain
from tests.compile.helpers import poll, sample_memories, test_settings

HERE = Path(__file__).resolve().parent
OWNER = "alice"
# The page the `apply_rejected` scenario's plan adds, whose id another scope's row already holds.
SQUATTED = ("entity", "recorded-squatter-target")


@dataclass
class FaultyPlanner:
    """The scripted planner, with faults for batches that hold given memories.

    A batch holding a `poison` memory is truncated; the poison alone is not a valid plan (so the batch
    splits down to it and it is skipped). A batch holding a `refuse` memory is rejected, once. A batch
    holding a `squat` memory also proposes the SQUATTED page.
    """

    inner: ScriptedPlanner = field(default_factory=ScriptedPlanner)
    poison: set[str] = field(default_factory=set)
    refuse: set[str] = field(default_factory=set)
    squat: set[str] = field(default_factory=set)
    reads_possible_children: bool = True
    rewrites_from_sources: bool = ScriptedPlanner.rewrites_from_sources

    async def plan_batch(self, context: PlannerContext, model_id: str) -> PlanReply:
        batch = {str(memory.id) for memory in context.memories}
        if batch & self.poison:
            if len(batch) > 1:
                raise ModelTruncated("recorded fault: the plan was cut off at the output limit")
            raise PlanInvalid("recorded fault: the reply is not a plan")
        if batch & self.refuse:
            self.refuse.clear()
            raise ModelRejected("recorded fault: the model rejected the request")
        reply = await self.inner.plan_batch(context, model_id)
        if batch & self.squat:
            ref = str(context.memories[0].id)
            reply.plan.newPages.append(NewPage(
                type=SQUATTED[0], slug=SQUATTED[1], title="Recorded Squatter Target", source_refs=[ref],
                sections=[NewSection(slug="overview", heading="Overview", body_md="A page.", source_refs=[ref])]))
        return reply

    async def write_section(self, task: SectionTask, cited: list[MemoryRecord], model_id: str) -> SectionReply:
        return await self.inner.write_section(task, cited, model_id)

    async def plan_aggregation(self, request: AggregationRequest, model_id: str) -> PlanReply:
        return await self.inner.plan_aggregation(request, model_id)

    async def judge_merges(self, questions: list[MergeQuestion], model_id: str) -> JudgeReply:
        return await self.inner.judge_merges(questions, model_id)


@dataclass
class Recorder:
    client: Client
    engine: AsyncEngine
    out_dir: Path
    stamp: str
    written: list[Path] = field(default_factory=list)

    async def write_runs(self, tenant: str, name: str) -> None:
        """Every run of the scope's compile, oldest first, as <name>_run_<n>.json."""
        query = f"WorkflowId = '{compile_workflow_id(tenant, OWNER)}'"
        runs = sorted([run async for run in self.client.list_workflows(query)], key=lambda run: run.start_time)
        for index, run in enumerate(runs):
            await self.write(run.id, run.run_id, f"{name}_run_{index + 1}")

    async def write(self, workflow_id: str, run_id: str, name: str) -> None:
        history = await self.client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        path = self.out_dir / f"{name}.json"
        path.write_text(history.to_json())
        self.written.append(path)


def faulty_worker(recorder: Recorder, settings: Settings, planner: FaultyPlanner) -> Worker:
    return Worker(recorder.client, task_queue=settings.task_queue, workflows=WORKFLOWS,
                  activities=activities_for(recorder.engine, settings, planner=planner))


async def compile_fails(client: Client, tenant: str, settings: Settings) -> None:
    handle = await signal_compile(client, tenant, OWNER, trigger="admin", settings=settings)
    try:
        await handle.result()
    except WorkflowFailureError:
        return
    raise AssertionError(f"the compile of {tenant} was meant to fail")


# ------------------------------------------------------------------------------------------ scenarios


async def capped(rec: Recorder) -> None:
    settings = test_settings(WIKI_MAX_NEW_PAGES_PER_RUN=10, WIKI_RECORD_PAGE_SIZE=25)
    memories = sample_memories(120)
    await retain(rec.engine, "rec", OWNER, memories[:100])
    async with build_worker(rec.client, rec.engine, settings):
        handle = await signal_compile(rec.client, "rec", OWNER, trigger="admin", settings=settings)
        await retain(rec.engine, "rec", OWNER, memories[100:])
        await signal_compile(rec.client, "rec", OWNER, trigger="memory_retain", settings=settings)
        await handle.result()
    await rec.write_runs("rec", f"compile_{rec.stamp}")


async def split_skip(rec: Recorder) -> None:
    tenant = "rec-split"
    stored = await retain(rec.engine, tenant, OWNER, sample_memories(12))
    settings = test_settings(WIKI_RECORD_PAGE_SIZE=6)
    planner = FaultyPlanner(poison={str(stored.inserted[2])})
    async with faulty_worker(rec, settings, planner):
        await (await signal_compile(rec.client, tenant, OWNER, trigger="admin", settings=settings)).result()
    await rec.write_runs(tenant, f"compile_{rec.stamp}_split_skip")


async def model_rejected(rec: Recorder) -> None:
    tenant = "rec-fail"
    stored = await retain(rec.engine, tenant, OWNER, sample_memories(12))
    settings = test_settings(WIKI_RECORD_PAGE_SIZE=6)
    planner = FaultyPlanner(refuse={str(stored.inserted[8])})
    async with faulty_worker(rec, settings, planner):
        await compile_fails(rec.client, tenant, settings)
        await (await resume_scope(rec.client, rec.engine, settings, tenant, OWNER)).result()
    await rec.write_runs(tenant, f"compile_{rec.stamp}_model_rejected")


async def apply_rejected(rec: Recorder) -> None:
    tenant = "rec-rejected"
    stored = await retain(rec.engine, tenant, OWNER, sample_memories(12))
    settings = test_settings(WIKI_RECORD_PAGE_SIZE=6)
    squatter = ids.page_id(tenant, OWNER, *SQUATTED)
    async with rec.engine.begin() as conn:
        await conn.execute(text("INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title) "
                                "VALUES (:id, 'rec-squatter', :owner, 'entity', 'squatter', 'Squatter')"),
                           {"id": squatter, "owner": OWNER})
    planner = FaultyPlanner(squat={str(stored.inserted[8])})
    async with faulty_worker(rec, settings, planner):
        await compile_fails(rec.client, tenant, settings)
        async with rec.engine.begin() as conn:
            await conn.execute(text("DELETE FROM wiki_pages WHERE tenant_id = 'rec-squatter'"))
        await (await resume_scope(rec.client, rec.engine, settings, tenant, OWNER)).result()
    await rec.write_runs(tenant, f"compile_{rec.stamp}_apply_rejected")


async def lint_woken(rec: Recorder) -> None:
    tenant = "rec-lint"
    stored = await retain(rec.engine, tenant, OWNER, sample_memories(3))
    settings = test_settings()
    async with build_worker(rec.client, rec.engine, settings):
        await (await signal_compile(rec.client, tenant, OWNER, trigger="admin", settings=settings)).result()
        contexts = [{"quote": "seen there", "source_ref": str(ref), "seen_at": "2026-01-01T00:00:00+00:00"}
                    for ref in stored.inserted]
        async with rec.engine.begin() as conn:
            await conn.execute(text("""
                INSERT INTO wiki_unresolved_mentions (id, tenant_id, owner_id, alias, alias_normalized, mention_count,
                    first_seen_at, last_seen_at, sample_contexts, suggested_type, status)
                VALUES (gen_random_uuid(), :tenant, :owner, 'Recorded Bakery', 'recorded bakery', 3, now(), now(),
                        CAST(:contexts AS jsonb), 'entity', 'open')
            """), {"tenant": tenant, "owner": OWNER, "contexts": json.dumps(contexts)})
        lint = await rec.client.start_workflow("LintWorkflow", LintInput(trigger="admin"), id=f"lint-{rec.stamp}",
                                               task_queue=settings.task_queue, result_type=LintReport)
        report = await lint.result()
        assert report.totals.promotion_compiles_started >= 1, report
        await rec.client.get_workflow_handle(compile_workflow_id(tenant, OWNER)).result()
    await rec.write(lint.id, lint.result_run_id, f"lint_{rec.stamp}")
    await rec.write_runs(tenant, f"compile_{rec.stamp}_lint_woken")


async def urgent_wake(rec: Recorder) -> None:
    tenant = "rec-debounce"
    await retain(rec.engine, tenant, OWNER, sample_memories(20, seed=8))
    settings = test_settings()
    patient = settings.model_copy(update={"debounce_seconds": 300.0})
    async with build_worker(rec.client, rec.engine, settings):
        handle = await signal_compile(rec.client, tenant, OWNER, trigger="memory_retain", memory_count=20,
                                      settings=patient)
        await poll(lambda: _debouncing(handle), timeout=60, what="the retain-started run to debounce")
        await signal_compile(rec.client, tenant, OWNER, trigger="admin", settings=settings)
        await asyncio.wait_for(handle.result(), timeout=120)
    await rec.write_runs(tenant, f"compile_{rec.stamp}_urgent_wake")


async def _debouncing(handle) -> bool:
    return (await handle.query("progress", result_type=Progress)).phase == "debouncing"


# The lint looks at every scope: it runs first, while its own is the only one with a candidate.
SCENARIOS: dict[str, Callable[[Recorder], Awaitable[None]]] = {
    "lint_woken": lint_woken, "capped": capped, "split_skip": split_skip, "model_rejected": model_rejected,
    "apply_rejected": apply_rejected, "urgent_wake": urgent_wake,
}


@asynccontextmanager
async def throwaway_services() -> AsyncIterator[tuple[Client, AsyncEngine]]:
    with tempfile.TemporaryDirectory() as tmp:
        postgres = EmbeddedPostgres(pgdata=Path(tmp) / "pg", port=free_port())
        url = postgres.ensure_running()
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=str(temporal_cli_path()), search_attributes=ALL_SEARCH_ATTRIBUTES,
            data_converter=pydantic_data_converter)
        engine = engine_for(url)
        try:
            await migrate(engine)
            yield env.client, engine
        finally:
            await engine.dispose()
            await env.shutdown()
            postgres.stop()


async def record(out_dir: Path = HERE, only: list[str] | None = None) -> list[Path]:
    stamp = f"{datetime.now(UTC):%Y%m%d_%H%M}"
    async with throwaway_services() as (client, engine):
        recorder = Recorder(client, engine, out_dir, stamp)
        for name, scenario in SCENARIOS.items():
            if not only or name in only:
                await scenario(recorder)
    return recorder.written


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.histories.record", description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", nargs="?", type=Path, default=HERE)
    parser.add_argument("--only", nargs="+", choices=sorted(SCENARIOS), help="record only these scenarios")
    args = parser.parse_args()
    for path in asyncio.run(record(args.out_dir, args.only)):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
