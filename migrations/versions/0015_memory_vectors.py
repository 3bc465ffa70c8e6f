"""Memory embeddings, and embeddings that move the scope's revision.

Recall ranks every memory of a scope, compiled or not, by its meaning as well as its words: each
memory gets an embedding, made in the compile for memories that have none of their current text by
the configured model and size (`text_key` is the md5 of the text, so a memory whose text a retain
replaced is embedded again). A vector goes with its memory (the foreign key cascades a forget).

Recall's per-process indexes are kept under the scope's revision (migration 0011's triggers). The
embeddings of claims and memories are written after the batch that made their rows, in their own
transactions, so their tables move the revision too, as writes that are not the wiki's own (like
memories and runs): a page answer keyed on the wiki revision is not thrown away when they land.

Revision ID: 0015_memory_vectors
Revises: 0012_recall_speed
Create Date: 2026-11-28
"""

from alembic import op

revision = "0015_memory_vectors"
down_revision = "0014_claim_statuses"
branch_labels = None
depends_on = None

# The tables whose writes move `revision` but not `wiki_revision` (0011's list, and the embeddings).
NOT_WIKI = ("memory_units", "wiki_compile_jobs", "wiki_claim_vectors", "wiki_memory_vectors")
OLD_NOT_WIKI = ("memory_units", "wiki_compile_jobs")
_SCOPES_OF_DIRECT = ("SELECT DISTINCT c.tenant_id, c.owner_id FROM changed c WHERE c.tenant_id IS NOT NULL "
                     "AND c.owner_id IS NOT NULL")
_EVENTS = {"insert": "NEW", "update": "NEW", "delete": "OLD"}
VECTOR_TABLES = ("wiki_claim_vectors", "wiki_memory_vectors")


def _direct_note_function(not_wiki: tuple[str, ...]) -> str:
    """0011's note function for tables that carry their scope, with `not_wiki` as its list."""
    return f"""
    CREATE OR REPLACE FUNCTION wiki_note_scope_write_direct() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        scope record;
        noted text := coalesce(current_setting('wiki.noted_scopes', true), '');
        key text;
        is_wiki boolean := TG_TABLE_NAME NOT IN {not_wiki!r};
    BEGIN
        FOR scope IN {_SCOPES_OF_DIRECT} LOOP
            key := E'\\n' || scope.tenant_id || E'\\x1f' || scope.owner_id || E'\\x1f' || is_wiki::text || E'\\n';
            IF position(key IN noted) = 0 THEN
                INSERT INTO wiki_scope_writes (tenant_id, owner_id, wiki) VALUES (scope.tenant_id, scope.owner_id, is_wiki)
                ON CONFLICT (xact, tenant_id, owner_id) DO UPDATE SET wiki = wiki_scope_writes.wiki OR EXCLUDED.wiki;
                noted := noted || key;
                PERFORM set_config('wiki.noted_scopes', noted, true);
            END IF;
        END LOOP;
        RETURN NULL;
    END $$
    """


UPGRADE = [
    """
    CREATE TABLE wiki_memory_vectors (
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        memory_id uuid NOT NULL,
        model text NOT NULL CHECK (length(model) > 0),
        dimensions integer NOT NULL,
        text_key text NOT NULL,
        vector bytea NOT NULL,  -- float32, unit length, little-endian
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, owner_id, memory_id),
        FOREIGN KEY (tenant_id, owner_id, memory_id) REFERENCES memory_units (tenant_id, owner_id, id)
            ON DELETE CASCADE,
        CHECK (dimensions > 0 AND length(vector) = 4 * dimensions)
    )
    """,
    "CREATE INDEX wiki_memory_vectors_scope ON wiki_memory_vectors (tenant_id, owner_id, model, dimensions, created_at)",
    _direct_note_function(NOT_WIKI),
    *(f"""
      CREATE TRIGGER {table}_scope_write_{event} AFTER {event.upper()} ON {table}
      REFERENCING {way} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION wiki_note_scope_write_direct()
      """ for table in VECTOR_TABLES for event, way in _EVENTS.items()),
]

DOWNGRADE = [
    *(f"DROP TRIGGER {table}_scope_write_{event} ON {table}" for table in VECTOR_TABLES for event in _EVENTS),
    _direct_note_function(OLD_NOT_WIKI),
    "DROP TABLE wiki_memory_vectors",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
