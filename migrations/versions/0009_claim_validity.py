"""Facts that change, and the operator's corrections.

Claims gain their validity: `valid_from` (when the earliest memory citing them happened), `valid_to`
and `superseded_by` (the claim that replaced them), and `validity` (current, superseded or
disputed). `wiki_claim_supersessions` keeps the plans' marks (this line replaces that one, on this
page), from which the validity is derived. Existing claims start current, valid from their first
memory.

The corrections an operator makes are kept apart from what a compile writes, by page type and slug
or by name rather than by row id, so they survive every compile and `wiki rebuild` (which deletes
and re-creates the pages): aliases added or removed by hand, names never to promote, sections never
to promote from, a scope's paused compile, and a scope's deterministic links rolled back.

Revision ID: 0009_claim_validity
Revises: 0008_forget
Create Date: 2026-11-27
"""

from alembic import op

revision = "0009_claim_validity"
down_revision = "0008_forget"
branch_labels = None
depends_on = None

UPGRADE = [
    "ALTER TABLE wiki_section_claims ADD COLUMN valid_from timestamptz",
    "ALTER TABLE wiki_section_claims ADD COLUMN valid_to timestamptz",
    "ALTER TABLE wiki_section_claims ADD COLUMN superseded_by uuid",
    "ALTER TABLE wiki_section_claims ADD COLUMN validity text NOT NULL DEFAULT 'current' "
    "CONSTRAINT wiki_section_claims_validity_check CHECK (validity IN ('current', 'superseded', 'disputed'))",
    "UPDATE wiki_section_claims SET valid_from = first_seen_at",
    """
    CREATE TABLE wiki_claim_supersessions (
        page_id uuid NOT NULL REFERENCES wiki_pages(id) ON DELETE CASCADE,
        claim_key text NOT NULL CHECK (length(claim_key) > 0),
        replaced_key text NOT NULL CHECK (length(replaced_key) > 0),
        run_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (page_id, claim_key, replaced_key)
    )
    """,
    """
    CREATE TABLE wiki_alias_corrections (
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        page_type text NOT NULL CHECK (page_type IN ('entity', 'topic', 'decision')),
        page_slug text NOT NULL,
        alias text NOT NULL CHECK (length(alias) > 0),
        action text NOT NULL CHECK (action IN ('add', 'remove')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, owner_id, page_type, page_slug, alias)
    )
    """,
    """
    CREATE TABLE wiki_ignored_names (
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        alias_normalized text NOT NULL CHECK (length(alias_normalized) > 0),
        alias text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, owner_id, alias_normalized)
    )
    """,
    """
    CREATE TABLE wiki_section_promotion_blocks (
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        page_type text NOT NULL CHECK (page_type IN ('entity', 'topic', 'decision')),
        page_slug text NOT NULL,
        section_slug text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, owner_id, page_type, page_slug, section_slug)
    )
    """,
    """
    CREATE TABLE wiki_scope_switches (
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        paused_at timestamptz,
        deterministic_links_off_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, owner_id)
    )
    """,
]

DOWNGRADE = [
    "DROP TABLE IF EXISTS wiki_scope_switches",
    "DROP TABLE IF EXISTS wiki_section_promotion_blocks",
    "DROP TABLE IF EXISTS wiki_ignored_names",
    "DROP TABLE IF EXISTS wiki_alias_corrections",
    "DROP TABLE IF EXISTS wiki_claim_supersessions",
    "ALTER TABLE wiki_section_claims DROP COLUMN IF EXISTS validity",
    "ALTER TABLE wiki_section_claims DROP COLUMN IF EXISTS superseded_by",
    "ALTER TABLE wiki_section_claims DROP COLUMN IF EXISTS valid_to",
    "ALTER TABLE wiki_section_claims DROP COLUMN IF EXISTS valid_from",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
