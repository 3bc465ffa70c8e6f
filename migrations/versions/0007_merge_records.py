"""Name blocking keys, merge decisions on record, and page merges that can be undone.

- `wiki_alias_keys`: one row per (alias, blocking key) (domain/name_key.py `blocking_keys`), so the
  resolver finds a page under any key its names share with a proposal. Rows are written with the
  aliases (store/name_index.py); this revision fills them for the aliases stored before it.
- `wiki_merge_decisions`: every merge the resolver made and every pair the judge decided, with the
  rung, the evidence, the answer and the run, kept after the run's staging rows are cleaned up.
- `wiki_page_merges`: a page merged into another by an operator (`wiki page merge`), with everything
  it moved, so `wiki page unmerge` restores both pages exactly.

Revision ID: 0007_merge_records
Revises: 0006_token_rights
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

from domain.name_key import blocking_keys

revision = "0007_merge_records"
down_revision = "0006_token_rights"
branch_labels = None
depends_on = None

UPGRADE = [
    """
    CREATE TABLE wiki_alias_keys (
        alias_id uuid NOT NULL REFERENCES wiki_page_aliases(id) ON DELETE CASCADE,
        page_id uuid NOT NULL REFERENCES wiki_pages(id) ON DELETE CASCADE,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        key text NOT NULL,
        PRIMARY KEY (alias_id, key)
    )
    """,
    "CREATE INDEX wiki_alias_keys_lookup_idx ON wiki_alias_keys (tenant_id, owner_id, key)",
    """
    CREATE TABLE wiki_merge_decisions (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        run_id text,
        plan_id uuid,
        proposal_type text NOT NULL,
        proposal_slug text NOT NULL,
        proposal_names text[] NOT NULL,
        candidate_page_id uuid NOT NULL,
        rung text NOT NULL,
        detail text NOT NULL DEFAULT '',
        decided_by text NOT NULL CHECK (decided_by IN ('ladder', 'judge', 'unjudged', 'operator', 'planner')),
        same boolean NOT NULL,
        reason text NOT NULL DEFAULT '',
        evidence jsonb NOT NULL DEFAULT '{}'::jsonb,
        decided_at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX wiki_merge_decisions_page_idx ON wiki_merge_decisions (tenant_id, owner_id, candidate_page_id)",
    """
    CREATE TABLE wiki_page_merges (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        source_page_id uuid NOT NULL,
        target_page_id uuid NOT NULL,
        moved jsonb NOT NULL,
        merged_by text NOT NULL DEFAULT 'operator',
        merged_at timestamptz NOT NULL DEFAULT now(),
        undone_at timestamptz
    )
    """,
    "CREATE INDEX wiki_page_merges_scope_idx ON wiki_page_merges (tenant_id, owner_id, source_page_id)",
]

DOWNGRADE = [
    "DROP TABLE IF EXISTS wiki_page_merges",
    "DROP TABLE IF EXISTS wiki_merge_decisions",
    "DROP TABLE IF EXISTS wiki_alias_keys",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)
    bind = op.get_bind()
    rows = bind.execute(sa.text("""
        SELECT a.id, a.page_id, a.alias, p.tenant_id, p.owner_id
        FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
    """)).fetchall()
    keyed = [{"alias_id": row.id, "page_id": row.page_id, "tenant": row.tenant_id, "owner": row.owner_id, "key": key}
             for row in rows for key in blocking_keys(row.alias)]
    if keyed:
        bind.execute(sa.text("""
            INSERT INTO wiki_alias_keys (alias_id, page_id, tenant_id, owner_id, key)
            VALUES (:alias_id, :page_id, :tenant, :owner, :key) ON CONFLICT DO NOTHING
        """), keyed)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
