"""Database activities of a compile: the ledger, the cursor, resolve and apply.

`apply_batch` is the one place a batch's writes happen: everything the batch writes and the cursor
advance commit in one transaction, guarded by compare-and-set on the cursor. A retried apply (the
worker died after commit, before Temporal heard back) finds the plan already applied and returns
its stored result, so nothing is ever written twice.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities import error_types
from activities.heartbeat import heartbeating
from domain import ids
from domain.compile_messages import (
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
    Scope,
)
from domain.plan import Plan
from store.memories import Cursor, read_after
from store.plan_apply import apply_resolved_plan
from store.plan_resolution import resolve_plan
from store.plan_staging import (
    earlier_resolution,
    lock_resolved_plan,
    mark_applied,
    section_drafts,
    staged_plan,
    store_resolution,
)

STAGING_RETENTION_DAYS = 7


@asynccontextmanager
async def rejected_writes_fail(scope: Scope, plan_id: UUID | None) -> AsyncIterator[None]:
    """A write the database refuses (a constraint, a value it cannot store) fails the compile.

    The transaction rolled back, so nothing was written and the cursor did not move; the same writes
    would be refused on every retry, so the run fails with the reason instead of retrying forever,
    and `wiki resume` re-plans the batch against the wiki as it is then.
    """
    try:
        yield
    except (IntegrityError, DataError) as error:
        reason = str(getattr(error, "orig", error)).strip().splitlines()[0]
        raise ApplicationError(
            f"the database refused the writes of plan {plan_id} for {scope.tenant}/{scope.owner} ({reason}); "
            "nothing was written and the cursor did not move. Resume the compile to plan the batch again.",
            type=error_types.APPLY_REJECTED, non_retryable=True) from None


async def _ensure_cursor_row(conn: AsyncConnection, scope: Scope) -> None:
    await conn.execute(text("""
        INSERT INTO wiki_compile_cursors (tenant_id, owner_id) VALUES (:tenant, :owner)
        ON CONFLICT (tenant_id, owner_id) DO NOTHING
    """), {"tenant": scope.tenant, "owner": scope.owner})


async def read_cursor(conn: AsyncConnection, scope: Scope) -> CursorPosition:
    row = (await conn.execute(text("""
        SELECT last_record_updated_at, last_record_id FROM wiki_compile_cursors
        WHERE tenant_id = :tenant AND owner_id = :owner
    """), {"tenant": scope.tenant, "owner": scope.owner})).first()
    if row is None:
        return CursorPosition()
    return CursorPosition(updated_at=row.last_record_updated_at, record_id=row.last_record_id)


class CompileStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    @activity.defn(name="compile.start_run")
    @heartbeating
    async def start_run(self, run: RunRecord) -> None:
        async with self._engine.begin() as conn:
            await _ensure_cursor_row(conn, run.scope)
            await conn.execute(text("""
                INSERT INTO wiki_compile_jobs (id, kind, tenant_id, owner_id, workflow_id, run_id, trigger, status,
                                               model_id)
                VALUES (:id, 'compile', :tenant, :owner, :workflow_id, :run_id, :trigger, 'running', :model)
                ON CONFLICT (run_id) DO NOTHING
            """), {"id": ids.ledger_id(run.run_id), "tenant": run.scope.tenant, "owner": run.scope.owner,
                   "workflow_id": run.workflow_id, "run_id": run.run_id, "trigger": run.trigger,
                   "model": run.model_id})

    @activity.defn(name="compile.next_batch")
    @heartbeating
    async def next_batch(self, request: NextBatchInput) -> BatchRef:
        async with self._engine.connect() as conn:
            cursor = await read_cursor(conn, request.scope)
            records, positions = await read_after(
                conn, request.scope.tenant, request.scope.owner,
                Cursor(updated_at=cursor.updated_at, record_id=cursor.record_id), max(request.limit, 0),
            ) if request.limit > 0 else ([], [])
        return BatchRef(
            cursor_from=cursor,
            memory_ids=[record.id for record in records],
            positions=[CursorPosition(updated_at=p.updated_at, record_id=p.record_id) for p in positions],
        )

    @activity.defn(name="compile.resolve_plan")
    @heartbeating
    async def resolve_plan(self, request: ResolvePlanInput) -> ResolvePlanResult:
        scope = request.scope
        async with self._engine.begin() as conn:
            row = await staged_plan(conn, request.plan_id, scope)
            if (earlier := earlier_resolution(row)) is not None:
                return ResolvePlanResult.model_validate(earlier)
            now = (await conn.execute(text("SELECT now()"))).scalar_one()
            document, result = await resolve_plan(conn, scope.tenant, scope.owner, request.plan_id,
                                                  Plan.model_validate(row.plan), [str(m) for m in row.memory_ids],
                                                  now)
            await store_resolution(conn, request.plan_id, document, result)
        return result

    @activity.defn(name="compile.apply_batch")
    @heartbeating
    async def apply_batch(self, request: ApplyBatchInput) -> ApplyBatchResult:
        async with rejected_writes_fail(request.scope, request.plan_id):
            return await self._apply_batch(request)

    async def _apply_batch(self, request: ApplyBatchInput) -> ApplyBatchResult:
        scope = request.scope
        async with self._engine.begin() as conn:
            plan = None
            if request.plan_id is not None:
                plan = await lock_resolved_plan(conn, request.plan_id, scope)
                if plan.status == "applied":
                    return ApplyBatchResult.model_validate({**plan.result, "already_applied": True})
            if not await self._advance_cursor(conn, scope, request.cursor_expected, request.cursor_next):
                current = await read_cursor(conn, scope)
                if request.plan_id is None and current.at_or_after(request.cursor_next):
                    # This skip was applied already — and maybe later steps too, when a failed workflow
                    # task runs its local activities again (see `_db` in workflows/compile.py).
                    return ApplyBatchResult(already_applied=True)
                raise ApplicationError(
                    f"the cursor of {scope.tenant}/{scope.owner} is at {current.label()}, not at "
                    f"{request.cursor_expected.label()} where this batch started; another compile or a reset "
                    "moved it. Resume the compile to continue from the stored cursor.",
                    type=error_types.CURSOR_MOVED, non_retryable=True)
            if plan is None:
                return ApplyBatchResult()
            result = await apply_resolved_plan(conn, scope.tenant, scope.owner, plan.resolved,
                                               await section_drafts(conn, request.plan_id),
                                               deterministic_linking=request.deterministic_linking_enabled)
            await mark_applied(conn, request.plan_id, result.model_dump_json())
        return result

    async def _advance_cursor(self, conn: AsyncConnection, scope: Scope, expected: CursorPosition,
                              next_position: CursorPosition) -> bool:
        await _ensure_cursor_row(conn, scope)
        updated = await conn.execute(text("""
            UPDATE wiki_compile_cursors
            SET last_record_updated_at = CAST(:next_at AS timestamptz), last_record_id = CAST(:next_id AS uuid),
                updated_at = now()
            WHERE tenant_id = :tenant AND owner_id = :owner
              AND last_record_updated_at IS NOT DISTINCT FROM CAST(:expected_at AS timestamptz)
              AND last_record_id IS NOT DISTINCT FROM CAST(:expected_id AS uuid)
        """), {"tenant": scope.tenant, "owner": scope.owner, "next_at": next_position.updated_at,
               "next_id": next_position.record_id, "expected_at": expected.updated_at,
               "expected_id": expected.record_id})
        return updated.rowcount == 1

    @activity.defn(name="compile.finish_run")
    @heartbeating
    async def finish_run(self, request: FinishRunInput) -> FinishRunResult:
        scope = request.scope
        async with self._engine.begin() as conn:
            duplicates = (await conn.execute(text("""
                SELECT count(*) FROM (
                    SELECT title FROM wiki_pages WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active'
                    GROUP BY title HAVING count(*) > 1) duplicated
            """), {"tenant": scope.tenant, "owner": scope.owner})).scalar_one()
            metrics = {**request.metrics, "duplicate_candidates_count": duplicates}
            await conn.execute(text("""
                UPDATE wiki_compile_jobs SET status = :status, metrics = CAST(:metrics AS jsonb), error = :error,
                    finished_at = now()
                WHERE run_id = :run_id AND tenant_id = :tenant AND owner_id = :owner
            """), {"status": request.status, "metrics": json.dumps(metrics), "error": request.error,
                   "run_id": request.run_id, "tenant": scope.tenant, "owner": scope.owner})
            # Staged plans are only needed while their run can still retry an activity.
            await conn.execute(text("""
                DELETE FROM wiki_compile_plans
                WHERE tenant_id = :tenant AND owner_id = :owner
                  AND ((run_id = :run_id AND status = 'applied') OR created_at < now() - make_interval(days => :days))
            """), {"tenant": scope.tenant, "owner": scope.owner, "run_id": request.run_id,
                   "days": STAGING_RETENTION_DAYS})
        return FinishRunResult(duplicate_candidates_count=duplicates)
