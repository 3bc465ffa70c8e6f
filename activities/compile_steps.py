"""Database activities of a compile: the ledger, the cursor, resolve and apply.

`apply_batch` is the one place a batch's writes happen: everything the batch writes and the cursor
advance commit in one transaction, guarded by compare-and-set on the cursor. A retried apply (the
worker died after commit, before Temporal heard back) finds the plan already applied and returns
its stored result, so nothing is ever written twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity

from activities.claim_vectors import embed_new_claims
from activities.common import compile_step
from domain.errors import CursorMoved
from domain.plan import Plan
from messages.compile import (
    ApplyBatchInput,
    ApplyBatchResult,
    BatchRef,
    CursorPosition,
    FinishRunInput,
    FinishRunResult,
    NextBatchInput,
    ResolvePlanInput,
    ResolvePlanResult,
    RunRecord,
)
from store.compile_attempts import attempt_counts
from store.compile_runs import (
    advance_cursor,
    database_now,
    duplicate_title_count,
    read_cursor,
    record_run_finished,
    record_run_started,
    rejected_writes_fail,
)
from store.corrections import is_paused
from store.memories import Cursor, counts_at, read_after
from store.merge_records import record_merge_decisions
from store.name_index import index_new_aliases
from store.page_matching import Judgement
from store.plan_apply import apply_resolved_plan
from store.plan_resolution import resolve_plan
from store.plan_staging import (
    draft_line_claims,
    earlier_resolution,
    lock_resolved_plan,
    mark_applied,
    merge_decisions,
    section_drafts,
    staged_plan,
    store_resolution,
)

if TYPE_CHECKING:  # numpy stays out of the workflow sandbox's imports
    from planners.embeddings import Embedder


class CompileSteps:
    def __init__(self, engine: AsyncEngine, embedder: Callable[[], Embedder] | None = None,
                 model_facts: Callable[[], dict[str, str]] | None = None) -> None:
        """`model_facts`: what the ledger records of the worker's model gateway (its provider and
        structured-output mode), added to each run's metrics when it finishes."""
        self._engine = engine
        self._embedder = embedder
        self._model_facts = model_facts

    @activity.defn(name="compile.start_run")
    @compile_step
    async def start_run(self, run: RunRecord) -> None:
        async with self._engine.begin() as conn:
            await record_run_started(conn, run)

    @activity.defn(name="compile.next_batch")
    @compile_step
    async def next_batch(self, request: NextBatchInput) -> BatchRef:
        async with self._engine.connect() as conn:
            # After a given position: the batch after one that is not applied yet (read to plan it ahead).
            cursor = request.after or await read_cursor(conn, request.scope)
            # A paused scope (`wiki scope pause`) reads nothing: the run ends as drained, between
            # batches, and its memories wait behind the cursor until the scope is resumed.
            paused = await is_paused(conn, request.scope.tenant, request.scope.owner)
            at = Cursor(updated_at=cursor.updated_at, record_id=cursor.record_id)
            records, positions = await read_after(
                conn, request.scope.tenant, request.scope.owner, at, max(request.limit, 0),
            ) if request.limit > 0 and not paused else ([], [])
            # How far the scope's compile is (for a batch read ahead: once the batch before it is applied).
            total, before = await counts_at(conn, request.scope.tenant, request.scope.owner, at)
        return BatchRef(
            cursor_from=cursor,
            memory_ids=[record.id for record in records],
            positions=[CursorPosition(updated_at=p.updated_at, record_id=p.record_id) for p in positions],
            scope_memories=total, memories_before=before,
        )

    @activity.defn(name="compile.resolve_plan")
    @compile_step
    async def resolve_plan(self, request: ResolvePlanInput) -> ResolvePlanResult:
        scope = request.scope
        async with self._engine.begin() as conn:
            row = await staged_plan(conn, request.plan_id, scope)
            if (earlier := earlier_resolution(row)) is not None:
                return ResolvePlanResult.model_validate(earlier)
            decisions = merge_decisions(row)
            resolved, result = await resolve_plan(conn, scope.tenant, scope.owner, request.plan_id,
                                                  Plan.model_validate(row.plan), [str(m) for m in row.memory_ids],
                                                  await database_now(conn), Judgement(decisions=decisions))
            await store_resolution(conn, request.plan_id, resolved, result, list(decisions.values()))
        return result

    @activity.defn(name="compile.apply_batch")
    @compile_step
    async def apply_batch(self, request: ApplyBatchInput) -> ApplyBatchResult:
        async with rejected_writes_fail(request.scope, request.plan_id):
            result = await self._apply_batch(request)
        if self._embedder is not None and request.plan_id is not None:
            # After the batch's commit: the new and changed claims' embeddings (see claim_vectors).
            await embed_new_claims(self._engine, request.scope, self._embedder)
        return result

    async def _apply_batch(self, request: ApplyBatchInput) -> ApplyBatchResult:
        scope = request.scope
        async with self._engine.begin() as conn:
            plan = None
            if request.plan_id is not None:
                plan = await lock_resolved_plan(conn, request.plan_id, scope)
                if plan.status == "applied":
                    return ApplyBatchResult.model_validate({**(plan.result or {}), "already_applied": True})
            if not await advance_cursor(conn, scope, request.cursor_expected, request.cursor_next):
                current = await read_cursor(conn, scope)
                if request.plan_id is None and current.at_or_after(request.cursor_next):
                    # This skip was applied already — and maybe later steps too, when a failed workflow
                    # task runs its local activities again (see `_db` in workflows/compile.py).
                    return ApplyBatchResult(already_applied=True)
                raise CursorMoved(
                    f"the cursor of {scope.tenant}/{scope.owner} is at {current.label()}, not at "
                    f"{request.cursor_expected.label()} where this batch started; another compile or a reset "
                    "moved it. Resume the compile to continue from the stored cursor.")
            if plan is None or request.plan_id is None:  # one is None when the other is: a skipped batch
                return ApplyBatchResult()
            result = await apply_resolved_plan(conn, scope.tenant, scope.owner, plan.resolved,
                                               await section_drafts(conn, request.plan_id),
                                               deterministic_linking=request.deterministic_linking_enabled,
                                               run_id=plan.run_id,
                                               written_claims=await draft_line_claims(conn, request.plan_id))
            await record_merge_decisions(conn, scope.tenant, scope.owner, request.plan_id, plan.run_id, plan.resolved)
            await index_new_aliases(conn, scope.tenant, scope.owner)
            await mark_applied(conn, request.plan_id, result.model_dump_json())
        return result

    @activity.defn(name="compile.finish_run")
    @compile_step
    async def finish_run(self, request: FinishRunInput) -> FinishRunResult:
        scope = request.scope
        if self._embedder is not None:
            # The aggregation pass's claims (hubs, rollups) too, once the run's writes are done.
            await embed_new_claims(self._engine, scope, self._embedder)
        async with self._engine.begin() as conn:
            duplicates = await duplicate_title_count(conn, scope)
            # The work redone: the run's activity attempts that timed out, were cancelled or failed
            # (activities/attempts.py; the workflow cannot see them, Temporal retries them unseen).
            redone = {f"attempts_{outcome}": count
                      for outcome, count in (await attempt_counts(conn, scope, request.run_id)).items()}
            facts = self._model_facts() if self._model_facts is not None else {}
            await record_run_finished(conn, scope, request.run_id, request.status,
                                      {**request.metrics, **facts, "duplicate_candidates_count": duplicates, **redone},
                                      request.error)
        return FinishRunResult(duplicate_candidates_count=duplicates)
