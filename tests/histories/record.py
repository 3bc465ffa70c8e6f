"""Record workflow histories for the replay test: `make histories` (or `python -m tests.histories.record
[--only SCENARIO ...]`).

Runs small compiles on a throwaway embedded Postgres and a local Temporal dev server and writes every
run's history to tests/histories/<version>/<scenario>_….json, <version> being the one in
pyproject.toml. One scope per scenario:

- `small_compile`: a retain wakes the compile, which reads a few memories in one batch and completes;
- `continued_as_new`: a cap on new pages ends the first run, which continues as new to read on;
- `plan_ahead`: overlap planning plans each next batch while the current one's sections are written;
- `split_skip`: a truncated plan splits its batch, and a memory that is never a valid plan is skipped;
- `resumed_after_rejection`: the model rejects a request after a committed batch; the compile fails,
  then `wiki resume` (resume_scope) finishes it;
- `resumed_after_apply_rejected`: the database refuses a batch's writes (ApplyRejected); the cause is
  removed and the compile resumes;
- `message_batches`: a bootstrap on the Anthropic API in batch mode plans through Message Batches
  (the real SDK against the Claude simulator);
- `late_wake`: a retain arrives while the final aggregation pass runs; the run finishes, then
  continues as new to compile it;
- `lint` (lint_workflow.json and lint_compile_run_N.json): the nightly lint finds a promotion
  candidate and wakes the scope's compile, which promotes it with no new memory;
- `urgent_wake`: a retain-started run debouncing for 5 minutes is woken by an admin compile, which
  ends the debounce at once;
- `forget`: a compiled scope forgets a memory cited with others (`wiki memory forget`): the forget
  starts the scope's compile, which prepares the pass, re-derives the sections' lines, applies it and
  runs the aggregation pass over the pages it changed;
- `preempted_by_forget`: a bootstrap in batch mode waits for a Message Batch holding a memory when that
  memory is forgotten: the wait stops, the forget is served and deletes the batch at the provider
  (canceled first), and the batch's memories are planned again in a new batch.

Faults come from a planner wrapped around the scripted one (keyed to memory ids, so each recording
takes the same path every time). A released version's recordings are never re-recorded: they are what
its runs look like, and every later version must replay them (docs/ARCHITECTURE.md, "Changing a
workflow"). Never re-record to make a failing replay pass.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus, WorkflowFailureError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from app.forget import forget_memories, preview_forget
from app.operations import resume_scope
from app.reads import ReadScope
from app.retain import retain_and_signal
from app.worker import WORKFLOWS, activities_for, build_model_client, build_worker
from claude_sim import ClaudeSimulator, SimConfig
from domain import ids
from domain.claim_judge import ClaimQuestion
from domain.context import MemoryRecord, PlannerContext
from domain.errors import ModelRejected, ModelTruncated, PlanInvalid
from domain.lint import LintInput, LintReport
from domain.merge_questions import MergeQuestion
from domain.plan import NewPage, NewSection
from domain.resolved_plan import SectionTask
from messages.compile import Progress, compile_workflow_id
from planners.port import AggregationRequest, ClaimJudgeReply, JudgeReply, PlanReply, SectionReply
from planners.scripted.planner import ScriptedPlanner
from runtime.database import engine_for, migrate
from runtime.devservices import EmbeddedPostgres, fairness_args, free_port, temporal_cli_path
from runtime.search_attributes import ALL_SEARCH_ATTRIBUTES
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.memories import store_memories
from tests.compile.helpers import poll, sample_memories, test_settings
from tests.histories.releases import HISTORIES, ROOT, changelog_releases, project_version

OWNER = "alice"
# The page the `resumed_after_apply_rejected` scenario's plan adds, whose id another scope's row holds.
SQUATTED = ("entity", "recorded-squatter-target")
SIM_API_KEY = "sim-anthropic-key"  # a key the Claude simulator accepts (claude_sim SimConfig)


class RecordingRefused(Exception):
    """The recordings folder of a released version cannot be written again."""


@dataclass
class FaultyPlanner:
    """The scripted planner, with faults for batches that hold given memories.

    A batch holding a `poison` memory is truncated; the poison alone is not a valid plan (so the batch
    splits down to it and it is skipped). A batch holding a `refuse` memory is rejected, once. A batch
    holding a `squat` memory also proposes the SQUATTED page. `before_aggregation` runs once, inside the
    first aggregation plan call.
    """

    inner: ScriptedPlanner = field(default_factory=ScriptedPlanner)
    poison: set[str] = field(default_factory=set)
    refuse: set[str] = field(default_factory=set)
    squat: set[str] = field(default_factory=set)
    before_aggregation: Callable[[], Awaitable[None]] | None = None
    judges_claims: bool = ScriptedPlanner.judges_claims
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
        hook, self.before_aggregation = self.before_aggregation, None
        if hook is not None:
            await hook()
        return await self.inner.plan_aggregation(request, model_id)

    async def judge_merges(self, questions: list[MergeQuestion], model_id: str) -> JudgeReply:
        return await self.inner.judge_merges(questions, model_id)

    async def judge_claims(self, questions: list[ClaimQuestion], model_id: str) -> ClaimJudgeReply:
        return await self.inner.judge_claims(questions, model_id)


@dataclass
class Recorder:
    client: Client
    engine: AsyncEngine
    out_dir: Path
    written: list[Path] = field(default_factory=list)

    async def write_runs(self, tenant: str, name: str) -> None:
        """Every run of the scope's compile, oldest first, as <name>_run_<n>.json."""
        query = f"WorkflowId = '{compile_workflow_id(tenant, OWNER)}'"
        runs: list[WorkflowExecution] = []

        async def all_listed() -> bool:
            # Visibility may lag a run that just started by continuing as new: wait for the chain's end.
            runs[:] = sorted([run async for run in self.client.list_workflows(query)], key=lambda run: run.start_time)
            return bool(runs) and runs[-1].status not in (None, WorkflowExecutionStatus.RUNNING,
                                                          WorkflowExecutionStatus.CONTINUED_AS_NEW)

        await poll(all_listed, timeout=30, what=f"every run of {tenant}'s compile to be listed")
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


async def compile_now(rec: Recorder, tenant: str, settings: Settings, trigger: str = "admin") -> None:
    await (await signal_compile(rec.client, tenant, OWNER, trigger=trigger, settings=settings)).result()


# ------------------------------------------------------------------------------------------ scenarios


async def small_compile(rec: Recorder) -> None:
    tenant = "rec-small"
    settings = test_settings()
    async with build_worker(rec.client, rec.engine, settings):
        outcome = await retain_and_signal(rec.engine, tenant, OWNER, sample_memories(4), client=rec.client,
                                          settings=settings)
        assert outcome.compile is not None
        await outcome.compile.result()
    await rec.write_runs(tenant, "small_compile")


async def continued_as_new(rec: Recorder) -> None:
    tenant = "rec-capped"
    await store_memories(rec.engine, tenant, OWNER, sample_memories(12))
    settings = test_settings(WIKI_MAX_NEW_PAGES_PER_RUN=2, WIKI_RECORD_PAGE_SIZE=8)
    async with build_worker(rec.client, rec.engine, settings):
        await compile_now(rec, tenant, settings)
    await rec.write_runs(tenant, "continued_as_new")


async def plan_ahead(rec: Recorder) -> None:
    tenant = "rec-overlap"
    await store_memories(rec.engine, tenant, OWNER, sample_memories(12))
    settings = test_settings(WIKI_RECORD_PAGE_SIZE=4, WIKI_OVERLAP_PLANNING=True)
    async with build_worker(rec.client, rec.engine, settings):
        await compile_now(rec, tenant, settings)
    await rec.write_runs(tenant, "plan_ahead")


async def split_skip(rec: Recorder) -> None:
    tenant = "rec-split"
    stored = await store_memories(rec.engine, tenant, OWNER, sample_memories(12))
    settings = test_settings(WIKI_RECORD_PAGE_SIZE=6)
    planner = FaultyPlanner(poison={str(stored.inserted[2])})
    async with faulty_worker(rec, settings, planner):
        await compile_now(rec, tenant, settings)
    await rec.write_runs(tenant, "split_skip")


async def resumed_after_rejection(rec: Recorder) -> None:
    tenant = "rec-fail"
    stored = await store_memories(rec.engine, tenant, OWNER, sample_memories(12))
    settings = test_settings(WIKI_RECORD_PAGE_SIZE=6)
    planner = FaultyPlanner(refuse={str(stored.inserted[8])})
    async with faulty_worker(rec, settings, planner):
        await compile_fails(rec.client, tenant, settings)
        await (await resume_scope(rec.client, rec.engine, settings, tenant, OWNER)).result()
    await rec.write_runs(tenant, "resumed_after_rejection")


async def resumed_after_apply_rejected(rec: Recorder) -> None:
    tenant = "rec-rejected"
    stored = await store_memories(rec.engine, tenant, OWNER, sample_memories(12))
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
    await rec.write_runs(tenant, "resumed_after_apply_rejected")


async def message_batches(rec: Recorder) -> None:
    tenant = "rec-batches"
    await store_memories(rec.engine, tenant, OWNER, sample_memories(8))
    async with ClaudeSimulator(SimConfig()) as sim:
        settings = test_settings(WIKI_LLM="anthropic", ANTHROPIC_API_KEY=SIM_API_KEY, WIKI_RECORD_PAGE_SIZE=4,
                                 WIKI_LLM_BATCH_POLL_SECONDS=0.1, WIKI_LLM_BATCH_WINDOW_SECONDS=0)
        saved = os.environ.get("ANTHROPIC_BASE_URL")
        os.environ["ANTHROPIC_BASE_URL"] = sim.base_url  # where the SDK looks for the API
        model_client = build_model_client(settings)
        try:
            async with build_worker(rec.client, rec.engine, settings, model_client=model_client):
                await compile_now(rec, tenant, settings, trigger="bootstrap_import")
        finally:
            await model_client.aclose()
            if saved is None:
                del os.environ["ANTHROPIC_BASE_URL"]
            else:
                os.environ["ANTHROPIC_BASE_URL"] = saved
        assert sim.batches, "the bootstrap was meant to plan through Message Batches"
    await rec.write_runs(tenant, "message_batches")


async def late_wake(rec: Recorder) -> None:
    tenant = "rec-late"
    memories = sample_memories(8)
    await store_memories(rec.engine, tenant, OWNER, memories[:6])
    settings = test_settings()

    async def a_retain_arrives() -> None:
        await retain_and_signal(rec.engine, tenant, OWNER, memories[6:], client=rec.client, settings=settings)

    planner = FaultyPlanner(before_aggregation=a_retain_arrives)
    async with faulty_worker(rec, settings, planner):
        await compile_now(rec, tenant, settings)
    await rec.write_runs(tenant, "late_wake")


async def lint(rec: Recorder) -> None:
    tenant = "rec-lint"
    stored = await store_memories(rec.engine, tenant, OWNER, sample_memories(3))
    settings = test_settings()
    async with build_worker(rec.client, rec.engine, settings):
        await compile_now(rec, tenant, settings)
        contexts = [{"quote": "seen there", "source_ref": str(ref), "seen_at": "2026-01-01T00:00:00+00:00"}
                    for ref in stored.inserted]
        async with rec.engine.begin() as conn:
            await conn.execute(text("""
                INSERT INTO wiki_unresolved_mentions (id, tenant_id, owner_id, alias, alias_normalized, mention_count,
                    first_seen_at, last_seen_at, sample_contexts, suggested_type, status)
                VALUES (gen_random_uuid(), :tenant, :owner, 'Recorded Bakery', 'recorded bakery', 3, now(), now(),
                        CAST(:contexts AS jsonb), 'entity', 'open')
            """), {"tenant": tenant, "owner": OWNER, "contexts": json.dumps(contexts)})
        handle = await rec.client.start_workflow("LintWorkflow", LintInput(trigger="admin"), id="lint-recording",
                                                 task_queue=settings.task_queue, result_type=LintReport)
        report = await handle.result()
        assert report.totals.promotion_compiles_started >= 1, report
        await rec.client.get_workflow_handle(compile_workflow_id(tenant, OWNER)).result()
    await rec.write(handle.id, handle.result_run_id, "lint_workflow")
    await rec.write_runs(tenant, "lint_compile")


async def urgent_wake(rec: Recorder) -> None:
    tenant = "rec-debounce"
    await store_memories(rec.engine, tenant, OWNER, sample_memories(6, seed=8))
    settings = test_settings()
    patient = settings.model_copy(update={"debounce_seconds": 300.0})
    async with build_worker(rec.client, rec.engine, settings):
        handle = await signal_compile(rec.client, tenant, OWNER, trigger="memory_retain", memory_count=6,
                                      settings=patient)
        await poll(lambda: _debouncing(handle), timeout=60, what="the retain-started run to debounce")
        await signal_compile(rec.client, tenant, OWNER, trigger="admin", settings=settings)
        await asyncio.wait_for(handle.result(), timeout=120)
    await rec.write_runs(tenant, "urgent_wake")


async def forget(rec: Recorder) -> None:
    tenant = "rec-forget"
    stored = await store_memories(rec.engine, tenant, OWNER, sample_memories(10, seed=9))
    settings = test_settings()
    scope = ReadScope.of(tenant, OWNER)
    async with build_worker(rec.client, rec.engine, settings):
        await compile_now(rec, tenant, settings)
        # A memory whose sections cite others too, so the pass calls the writer.
        chosen = None
        for memory_id in stored.inserted:
            radius = await preview_forget(rec.engine, scope, [str(memory_id)])
            if radius.sections_rederived:
                chosen = str(memory_id)
                break
        assert chosen is not None, "no memory of the sample shares a section"
        await forget_memories(rec.engine, scope, [chosen], rec.client, settings)
        await rec.client.get_workflow_handle(compile_workflow_id(tenant, OWNER)).result()
    await rec.write_runs(tenant, "forget")


async def preempted_by_forget(rec: Recorder) -> None:
    tenant = "rec-forget-batch"
    stored = await store_memories(rec.engine, tenant, OWNER, sample_memories(8, seed=4))
    scope = ReadScope.of(tenant, OWNER)
    async with _simulated(SimConfig(batch_processing_seconds=3600.0)) as sim:
        settings = test_settings(WIKI_LLM="anthropic", ANTHROPIC_API_KEY=SIM_API_KEY, WIKI_RECORD_PAGE_SIZE=4,
                                 WIKI_LLM_BATCH_POLL_SECONDS=0.1, WIKI_LLM_BATCH_WINDOW_SECONDS=0)
        model_client = build_model_client(settings)
        try:
            async with build_worker(rec.client, rec.engine, settings, model_client=model_client):
                handle = await signal_compile(rec.client, tenant, OWNER, trigger="bootstrap_import", settings=settings)
                await poll(lambda: _some(sim.batches), timeout=60, what="the first Message Batch")
                await forget_memories(rec.engine, scope, [str(stored.inserted[0])], rec.client, settings)
                await poll(lambda: _some(sim.deleted_batches), timeout=60, what="the batch deleted at the provider")
                sim.config.batch_processing_seconds = 0.0
                for batch in sim.batches.values():
                    batch.ready_at = 0.0  # the batches sent since are processed at once
                await asyncio.wait_for(handle.result(), timeout=120)
        finally:
            await model_client.aclose()
    await rec.write_runs(tenant, "preempted_by_forget")


async def _some(items: object) -> bool:
    return bool(items)


@asynccontextmanager
async def _simulated(config: SimConfig) -> AsyncIterator[ClaudeSimulator]:
    """The Claude simulator, with the SDK aimed at it (ANTHROPIC_BASE_URL) for the block."""
    async with ClaudeSimulator(config) as sim:
        saved = os.environ.get("ANTHROPIC_BASE_URL")
        os.environ["ANTHROPIC_BASE_URL"] = sim.base_url
        try:
            yield sim
        finally:
            if saved is None:
                del os.environ["ANTHROPIC_BASE_URL"]
            else:
                os.environ["ANTHROPIC_BASE_URL"] = saved


async def _debouncing(handle) -> bool:
    return (await handle.query("progress", result_type=Progress)).phase == "debouncing"


# The lint looks at every scope: it runs first, while its own is the only one with a candidate.
SCENARIOS: dict[str, Callable[[Recorder], Awaitable[None]]] = {
    "lint": lint, "small_compile": small_compile, "continued_as_new": continued_as_new, "plan_ahead": plan_ahead,
    "split_skip": split_skip, "resumed_after_rejection": resumed_after_rejection,
    "resumed_after_apply_rejected": resumed_after_apply_rejected, "message_batches": message_batches,
    "late_wake": late_wake, "urgent_wake": urgent_wake, "forget": forget, "preempted_by_forget": preempted_by_forget,
}


@asynccontextmanager
async def throwaway_services() -> AsyncIterator[tuple[Client, AsyncEngine]]:
    with tempfile.TemporaryDirectory() as tmp:
        postgres = EmbeddedPostgres(pgdata=Path(tmp) / "pg", port=free_port(), durable=False)
        url = postgres.ensure_running()
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=str(temporal_cli_path()), dev_server_extra_args=fairness_args(), search_attributes=ALL_SEARCH_ATTRIBUTES,
            data_converter=pydantic_data_converter)
        engine = engine_for(url)
        try:
            await migrate(engine)
            yield env.client, engine
        finally:
            await engine.dispose()
            await env.shutdown()
            postgres.stop()


def recordings_folder(version: str, histories: Path = HISTORIES, root: Path = ROOT) -> Path:
    """Where `make histories` writes: the folder of `version`, refused once that version is released
    and recorded."""
    releases = {release.version: release for release in changelog_releases((root / "CHANGELOG.md").read_text())}
    if version not in releases:
        raise RecordingRefused(f"version {version} (pyproject.toml) is not in CHANGELOG.md: add "
                               f"'## {version} — unreleased' first")
    folder = histories / version
    if releases[version].released and any(folder.glob("*.json")):
        raise RecordingRefused(f"{version} is released and recorded: its recordings stay as they are. Bump the "
                               "version (pyproject.toml, CHANGELOG.md) before recording a changed workflow")
    return folder


async def record(only: list[str] | None = None) -> list[Path]:
    out_dir = recordings_folder(project_version())
    out_dir.mkdir(parents=True, exist_ok=True)
    chosen = [name for name in SCENARIOS if not only or name in only]
    for name in chosen:  # a scenario's recordings are replaced whole
        for stale in out_dir.glob(f"{name}_*.json"):
            stale.unlink()
    async with throwaway_services() as (client, engine):
        recorder = Recorder(client, engine, out_dir)
        for name in chosen:
            await SCENARIOS[name](recorder)
    return recorder.written


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.histories.record", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=list(SCENARIOS), help="record only these scenarios")
    args = parser.parse_args()
    try:
        written = asyncio.run(record(args.only))
    except RecordingRefused as refused:
        print(f"error: {refused}", file=sys.stderr)
        raise SystemExit(1) from None
    for path in written:
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
