"""Compile attempts that did not complete: each activity attempt of a compile that timed out, was
cancelled or failed, one row each.

Temporal retries an activity attempt that timed out or failed, and its history keeps only the last
attempt's failure; these rows keep every one, so the ledger can count the work a compile redid
(`attempts_timed_out`, `attempts_cancelled`, `attempts_failed` in its metrics) and the lint can name a
scope whose compile retries the same step. A row holds ids, the activity's type, a short label of
what it did and the error's type, never memory text. The lint prunes them with the ledger.

Revision ID: 0017_compile_attempts
Revises: 0012_recall_speed
Create Date: 2026-11-28
"""

from alembic import op

revision = "0017_compile_attempts"
down_revision = "0016_fact_intervals"
branch_labels = None
depends_on = None

UPGRADE = [
    """
    CREATE TABLE wiki_compile_attempts (
        run_id text NOT NULL,
        activity_id text NOT NULL,
        attempt integer NOT NULL CHECK (attempt >= 1),
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        workflow_id text NOT NULL,
        activity_type text NOT NULL,
        step text NOT NULL DEFAULT '',
        outcome text NOT NULL CHECK (outcome IN ('timed_out', 'cancelled', 'failed')),
        error_type text NOT NULL DEFAULT '',
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, activity_id, attempt)
    )
    """,
    "CREATE INDEX wiki_compile_attempts_scope ON wiki_compile_attempts (tenant_id, owner_id, recorded_at)",
    "CREATE INDEX wiki_compile_attempts_recorded ON wiki_compile_attempts (recorded_at)",
]

DOWNGRADE = [
    "DROP TABLE wiki_compile_attempts",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
