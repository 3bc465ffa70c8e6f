"""A scope's compile cursor and the compile ledger (one row per workflow run).

The cursor is the position after the last memory a compile applied. It only moves by
compare-and-set from where a batch started, in the same transaction as the batch's writes, so a
retried or duplicated apply can never move it twice or skip memories.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from domain import ids
from domain.errors import ApplyRejected
from messages.compile import CursorPosition, RunRecord, Scope

# Staged plans are only needed while their run can still retry an activity.
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
        raise ApplyRejected(
            f"the database refused the writes of plan {plan_id} for {scope.tenant}/{scope.owner} ({reason}); "
            "nothing was written and the cursor did not move. Resume the compile to plan the batch again."
        ) from None


async def ensure_cursor_row(conn: AsyncConnection, scope: Scope) -> None:
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


async def advance_cursor(conn: AsyncConnection, scope: Scope, expected: CursorPosition,
                         next_position: CursorPosition) -> bool:
    """Move the cursor from `expected` to `next_position`; False when it is not at `expected`."""
    await ensure_cursor_row(conn, scope)
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


async def record_run_started(conn: AsyncConnection, run: RunRecord) -> None:
    await ensure_cursor_row(conn, run.scope)
    await conn.execute(text("""
        INSERT INTO wiki_compile_jobs (id, kind, tenant_id, owner_id, workflow_id, run_id, trigger, status,
                                       model_id)
        VALUES (:id, 'compile', :tenant, :owner, :workflow_id, :run_id, :trigger, 'running', :model)
        ON CONFLICT (run_id) DO NOTHING
    """), {"id": ids.ledger_id(run.run_id), "tenant": run.scope.tenant, "owner": run.scope.owner,
           "workflow_id": run.workflow_id, "run_id": run.run_id, "trigger": run.trigger,
           "model": run.model_id})


async def duplicate_title_count(conn: AsyncConnection, scope: Scope) -> int:
    """Exact titles shared by active pages of the scope (the ledger's duplicate_candidates_count)."""
    return (await conn.execute(text("""
        SELECT count(*) FROM (
            SELECT title FROM wiki_pages WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active'
            GROUP BY title HAVING count(*) > 1) duplicated
    """), {"tenant": scope.tenant, "owner": scope.owner})).scalar_one()


async def record_run_finished(conn: AsyncConnection, scope: Scope, run_id: str, status: str,
                              metrics: dict[str, Any], error: str | None) -> None:
    """The run's final status and metrics; the run's applied plans and stale staged plans are deleted."""
    await conn.execute(text("""
        UPDATE wiki_compile_jobs SET status = :status, metrics = CAST(:metrics AS jsonb), error = :error,
            finished_at = now()
        WHERE run_id = :run_id AND tenant_id = :tenant AND owner_id = :owner
    """), {"status": status, "metrics": json.dumps(metrics), "error": error,
           "run_id": run_id, "tenant": scope.tenant, "owner": scope.owner})
    await conn.execute(text("""
        DELETE FROM wiki_compile_plans
        WHERE tenant_id = :tenant AND owner_id = :owner
          AND ((run_id = :run_id AND status = 'applied') OR created_at < now() - make_interval(days => :days))
    """), {"tenant": scope.tenant, "owner": scope.owner, "run_id": run_id, "days": STAGING_RETENTION_DAYS})


async def database_now(conn: AsyncConnection) -> Any:
    return (await conn.execute(text("SELECT now()"))).scalar_one()
