"""Memory ids are scoped to their (tenant, owner): the key of `memory_units` becomes
(tenant_id, owner_id, id).

With a global key, a tenant retaining an explicit id that another tenant already used learned that
the id existed there (the batch was refused), and could claim an id first to get another tenant's
batch refused. Under the scoped key the same id may exist once in each scope, and a scope never
sees another's.

Existing rows keep their ids and scopes: ids were globally unique, so they are unique within each
scope and the new key holds for every row without rewriting any. Nothing else stores a memory id
without its scope: section sources reach theirs through the section's page, and plans, cursors and
mention contexts carry tenant and owner on their own rows; every read of them joins on the scope.

Revision ID: 0003_scoped_memory_ids
Revises: 0002_api_tokens
Create Date: 2026-11-24
"""

from alembic import op
from sqlalchemy import text

revision = "0003_scoped_memory_ids"
down_revision = "0002_api_tokens"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE memory_units DROP CONSTRAINT memory_units_pkey")
    op.execute("ALTER TABLE memory_units ADD CONSTRAINT memory_units_pkey PRIMARY KEY (tenant_id, owner_id, id)")


def downgrade() -> None:
    # A global key cannot hold an id that two scopes now share: refuse rather than drop either memory.
    shared = op.get_bind().execute(text(
        "SELECT count(*) FROM (SELECT id FROM memory_units GROUP BY id HAVING count(*) > 1) AS shared"
    )).scalar_one()
    if shared:
        raise RuntimeError(f"cannot downgrade 0003_scoped_memory_ids: {shared} memory ids exist in more than one "
                           "scope, and the previous schema allows each id only once")
    op.execute("ALTER TABLE memory_units DROP CONSTRAINT memory_units_pkey")
    op.execute("ALTER TABLE memory_units ADD CONSTRAINT memory_units_pkey PRIMARY KEY (id)")
