"""Compile activity attempts that did not complete (migration 0017): written as they end, read by the
ledger's finish and by `wiki status`; the lint reads them in store/lint_checks.py.

One row per (workflow run, activity id, attempt). An attempt that timed out on the server while its
worker was gone (or too busy to hear of it) leaves no row of its own: the next attempt of the same
activity finds the gap and records the missing ones as timed out (Temporal starts another attempt
only after the previous one failed or timed out, and a failure is recorded by the attempt itself).
Every insert ignores a row already there, so the two ways never count an attempt twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from messages.compile import Scope

OUTCOMES = ("timed_out", "cancelled", "failed")


@dataclass(frozen=True)
class AttemptRecord:
    scope: Scope
    workflow_id: str
    run_id: str
    activity_id: str
    activity_type: str
    attempt: int
    step: str = ""  # what the activity does, in a few words (activities/common.py `doing`)


async def record_attempt(conn: AsyncConnection, record: AttemptRecord, outcome: str, error_type: str = "") -> None:
    """This attempt ended without completing: `outcome` is timed_out, cancelled or failed."""
    await _insert(conn, record, outcome, error_type, first=record.attempt, last=record.attempt)


async def record_unreported_attempts(conn: AsyncConnection, record: AttemptRecord) -> None:
    """The attempts before this one that left no row: timed out without their worker reporting it."""
    if record.attempt > 1:
        await _insert(conn, record, "timed_out", "no outcome reported", first=1, last=record.attempt - 1)


async def _insert(conn: AsyncConnection, record: AttemptRecord, outcome: str, error_type: str, *,
                  first: int, last: int) -> None:
    await conn.execute(text("""
        INSERT INTO wiki_compile_attempts (run_id, activity_id, attempt, tenant_id, owner_id, workflow_id,
                                           activity_type, step, outcome, error_type)
        SELECT :run_id, :activity_id, n, :tenant, :owner, :workflow_id, :activity_type, :step, :outcome, :error_type
        FROM generate_series(CAST(:first AS integer), CAST(:last AS integer)) AS n
        ON CONFLICT (run_id, activity_id, attempt) DO NOTHING
    """), {"run_id": record.run_id, "activity_id": record.activity_id, "tenant": record.scope.tenant,
           "owner": record.scope.owner, "workflow_id": record.workflow_id, "activity_type": record.activity_type,
           "step": record.step[:200], "outcome": outcome, "error_type": error_type[:100], "first": first,
           "last": last})


async def attempt_counts(conn: AsyncConnection, scope: Scope, run_id: str) -> dict[str, int]:
    """The run's attempts that did not complete, by outcome (each outcome present, 0 when none)."""
    rows = await conn.execute(text("""
        SELECT outcome, count(*) AS n FROM wiki_compile_attempts
        WHERE run_id = :run_id AND tenant_id = :tenant AND owner_id = :owner
        GROUP BY outcome
    """), {"run_id": run_id, "tenant": scope.tenant, "owner": scope.owner})
    counts = dict.fromkeys(OUTCOMES, 0)
    counts.update({row.outcome: int(row.n) for row in rows})
    return counts


@dataclass(frozen=True)
class RetriedStep:
    activity_type: str
    step: str
    attempts: int  # the highest attempt recorded as not completing
    last_outcome: str
    last_error: str


async def retried_steps(conn: AsyncConnection, scope: Scope, run_id: str, min_attempts: int) -> list[RetriedStep]:
    """Steps of a run whose attempts failed or timed out at least `min_attempts` times, most retried first."""
    rows = await conn.execute(text("""
        SELECT DISTINCT ON (activity_id) activity_type, step, attempt, outcome, error_type
        FROM wiki_compile_attempts
        WHERE run_id = :run_id AND tenant_id = :tenant AND owner_id = :owner AND attempt >= :min_attempts
        ORDER BY activity_id, attempt DESC
    """), {"run_id": run_id, "tenant": scope.tenant, "owner": scope.owner, "min_attempts": min_attempts})
    steps = [RetriedStep(activity_type=row.activity_type, step=row.step, attempts=row.attempt,
                         last_outcome=row.outcome, last_error=row.error_type) for row in rows]
    return sorted(steps, key=lambda s: (-s.attempts, s.activity_type, s.step))


async def prune_attempts(conn: AsyncConnection, retention_days: int) -> int:
    """Rows older than the ledger's retention."""
    pruned = await conn.execute(text("""
        DELETE FROM wiki_compile_attempts WHERE recorded_at < now() - make_interval(days => :days)
    """), {"days": retention_days})
    return pruned.rowcount
