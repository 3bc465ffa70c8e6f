"""Recall: stored, indexed text vectors of claims and memories (recall ranks OR matches by BM25 over
their lexemes), and one embedding per claim for the semantic retriever.

The text vectors use the normalisation the page index uses (every run of non-alphanumerics becomes
a space, then the english configuration), so recall splits a question exactly as the text was split.
An embedding row holds the model that made it and the claim's text key it was made from: a claim
whose text changes keeps its id, and its embedding is made again when the key no longer matches.
Embeddings are float32 bytes scored in numpy (the embedded Postgres ships no pgvector).

Revision ID: 0010_recall
Revises: 0009_claim_validity
Create Date: 2026-11-27
"""

from alembic import op

revision = "0010_recall"
down_revision = "0009_claim_validity"
branch_labels = None
depends_on = None

UPGRADE = [
    """
    ALTER TABLE wiki_section_claims ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (
        to_tsvector('english', regexp_replace(text, '[^[:alnum:]]+', ' ', 'g'))) STORED
    """,
    "CREATE INDEX wiki_section_claims_search_tsv ON wiki_section_claims USING gin (search_tsv)",
    """
    ALTER TABLE memory_units ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (
        to_tsvector('english', regexp_replace(content, '[^[:alnum:]]+', ' ', 'g'))) STORED
    """,
    "CREATE INDEX memory_units_search_tsv ON memory_units USING gin (search_tsv)",
    # Memories by when they happened (created_at holds occurred_at): the time retriever.
    "CREATE INDEX memory_units_scope_occurred ON memory_units (tenant_id, owner_id, created_at)",
    """
    CREATE TABLE wiki_claim_vectors (
        claim_id uuid PRIMARY KEY REFERENCES wiki_section_claims(id) ON DELETE CASCADE,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        model text NOT NULL CHECK (length(model) > 0),
        text_key text NOT NULL,
        vector bytea NOT NULL CHECK (length(vector) > 0),  -- float32, unit length, little-endian
        created_at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX wiki_claim_vectors_scope ON wiki_claim_vectors (tenant_id, owner_id, model)",
]

DOWNGRADE = [
    "DROP TABLE wiki_claim_vectors",
    "DROP INDEX memory_units_scope_occurred",
    "ALTER TABLE memory_units DROP COLUMN search_tsv",
    "ALTER TABLE wiki_section_claims DROP COLUMN search_tsv",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
