"""Per-scope API tokens for the HTTP API and the MCP server over HTTP, and the indexes the read
surfaces need (what changed since a time; links from a page).

Only a token's SHA-256 is stored: the token itself is shown once, when it is created.

Revision ID: 0002_api_tokens
Revises: 0001
Create Date: 2026-11-24
"""

from alembic import op

revision = "0002_api_tokens"
down_revision = "0001"
branch_labels = None
depends_on = None

UPGRADE = [
    """
    CREATE TABLE api_tokens (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        name text NOT NULL DEFAULT '',
        token_hash text NOT NULL CHECK (length(token_hash) = 64),
        token_prefix text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        CONSTRAINT api_tokens_token_hash_key UNIQUE (token_hash)
    )
    """,
    "CREATE INDEX api_tokens_scope_idx ON api_tokens (tenant_id, owner_id, created_at)",
    # changes_since: a scope's pages by last change, and sections by theirs.
    "CREATE INDEX wiki_pages_scope_updated_idx ON wiki_pages (tenant_id, owner_id, updated_at)",
    "CREATE INDEX wiki_page_sections_updated_idx ON wiki_page_sections (updated_at, page_id)",
]

DOWNGRADE = [
    "DROP INDEX IF EXISTS wiki_page_sections_updated_idx",
    "DROP INDEX IF EXISTS wiki_pages_scope_updated_idx",
    "DROP TABLE IF EXISTS api_tokens",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
