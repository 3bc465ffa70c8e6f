"""Forgetting: the queue of forget and edit requests a scope's compile serves between batches, and
the ledger's deletion receipts.

A request holds memory ids only (never text) and, once prepared, the sections to re-derive with the
writer's new lines; the compile applies all of a scope's pending requests in one pass and writes one
receipt row (`wiki_compile_jobs` of kind `forget`: ids, time and counts).

Revision ID: 0008_forget
Revises: 0007_merge_records
Create Date: 2026-11-27
"""

from alembic import op

revision = "0008_forget"
down_revision = "0007_merge_records"
branch_labels = None
depends_on = None

_TRIGGERS = "'memory_retain', 'bootstrap_import', 'admin', 'lint', 'resume', 'rebuild', 'schedule', 'continuation'"

UPGRADE = [
    """
    CREATE TABLE wiki_forget_requests (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('forget', 'edit')),
        memory_ids uuid[] NOT NULL CHECK (cardinality(memory_ids) > 0),
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'prepared', 'done')),
        pass_id uuid,
        tasks jsonb NOT NULL DEFAULT '[]'::jsonb,
        drafts jsonb NOT NULL DEFAULT '{}'::jsonb,
        requested_at timestamptz NOT NULL DEFAULT now(),
        done_at timestamptz
    )
    """,
    "CREATE INDEX wiki_forget_requests_scope_idx ON wiki_forget_requests (tenant_id, owner_id, status, requested_at)",
    "ALTER TABLE wiki_compile_jobs DROP CONSTRAINT IF EXISTS wiki_compile_jobs_kind_check",
    "ALTER TABLE wiki_compile_jobs ADD CONSTRAINT wiki_compile_jobs_kind_check "
    "CHECK (kind IN ('compile', 'lint', 'forget'))",
    "ALTER TABLE wiki_compile_jobs DROP CONSTRAINT IF EXISTS wiki_compile_jobs_trigger_check",
    f"ALTER TABLE wiki_compile_jobs ADD CONSTRAINT wiki_compile_jobs_trigger_check CHECK (trigger IN ({_TRIGGERS}, 'forget'))",
]

DOWNGRADE = [
    "DELETE FROM wiki_compile_jobs WHERE kind = 'forget' OR trigger = 'forget'",
    "ALTER TABLE wiki_compile_jobs DROP CONSTRAINT IF EXISTS wiki_compile_jobs_trigger_check",
    f"ALTER TABLE wiki_compile_jobs ADD CONSTRAINT wiki_compile_jobs_trigger_check CHECK (trigger IN ({_TRIGGERS}))",
    "ALTER TABLE wiki_compile_jobs DROP CONSTRAINT IF EXISTS wiki_compile_jobs_kind_check",
    "ALTER TABLE wiki_compile_jobs ADD CONSTRAINT wiki_compile_jobs_kind_check CHECK (kind IN ('compile', 'lint'))",
    "DROP TABLE IF EXISTS wiki_forget_requests",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
