"""Token rights and expiry: what a bearer token may do (read, write, operator) and until when.

Tokens made before this revision could write, so they keep `write`; new tokens are `read` unless
asked otherwise. An expiry is optional (NULL: the token lives until it is revoked).

Revision ID: 0006_token_rights
Revises: 0005_claims
Create Date: 2026-11-27
"""

from alembic import op

revision = "0006_token_rights"
down_revision = "0005_claims"
branch_labels = None
depends_on = None

UPGRADE = [
    "ALTER TABLE api_tokens ADD COLUMN rights text NOT NULL DEFAULT 'write' "
    "CONSTRAINT api_tokens_rights_check CHECK (rights IN ('read', 'write', 'operator'))",
    "ALTER TABLE api_tokens ALTER COLUMN rights SET DEFAULT 'read'",
    "ALTER TABLE api_tokens ADD COLUMN expires_at timestamptz",
]

DOWNGRADE = [
    "ALTER TABLE api_tokens DROP COLUMN IF EXISTS expires_at",
    "ALTER TABLE api_tokens DROP COLUMN IF EXISTS rights",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
