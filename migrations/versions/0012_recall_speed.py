"""Recall speed: the versions recall checks before every question read from indexes alone, and
claim embeddings tagged with their dimension.

Before each question recall reads, per scope, how many claims, memories and embeddings there are and
the newest change of each (app/recall_cache.py keeps its indexes current with them). These indexes
hold the timestamp beside the scope's key, so the count and the newest are an index-only scan, not a
visit to every row.

An embedding row names the model that made it and now its dimension, checked against the vector's
length: a provider's model may be asked for several sizes, and recall only ever scores vectors of the
one model and size the settings name, so switching providers or sizes embeds the claims again instead
of mixing incomparable vectors.

Revision ID: 0012_recall_speed
Revises: 0011_scope_revisions
Create Date: 2026-11-27
"""

from alembic import op

revision = "0012_recall_speed"
down_revision = "0011_scope_revisions"
branch_labels = None
depends_on = None

UPGRADE = [
    "CREATE INDEX wiki_section_claims_section_updated ON wiki_section_claims (section_id, updated_at)",
    "CREATE INDEX memory_units_scope_updated ON memory_units (tenant_id, owner_id, updated_at)",
    "ALTER TABLE wiki_claim_vectors ADD COLUMN dimensions integer",
    "UPDATE wiki_claim_vectors SET dimensions = length(vector) / 4",
    "ALTER TABLE wiki_claim_vectors ALTER COLUMN dimensions SET NOT NULL",
    """ALTER TABLE wiki_claim_vectors ADD CONSTRAINT wiki_claim_vectors_dimensions
           CHECK (dimensions > 0 AND length(vector) = 4 * dimensions)""",
    "DROP INDEX wiki_claim_vectors_scope",
    "CREATE INDEX wiki_claim_vectors_scope ON wiki_claim_vectors (tenant_id, owner_id, model, dimensions, created_at)",
]

DOWNGRADE = [
    "DROP INDEX wiki_claim_vectors_scope",
    "CREATE INDEX wiki_claim_vectors_scope ON wiki_claim_vectors (tenant_id, owner_id, model)",
    "ALTER TABLE wiki_claim_vectors DROP CONSTRAINT wiki_claim_vectors_dimensions",
    "ALTER TABLE wiki_claim_vectors DROP COLUMN dimensions",
    "DROP INDEX memory_units_scope_updated",
    "DROP INDEX wiki_section_claims_section_updated",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
