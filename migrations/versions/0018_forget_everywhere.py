"""Forgetting everywhere: what a forget needs to find every copy of a memory.

- `wiki_mention_sightings`: every sighting of an unresolved mention by memory id (a mention keeps at
  most five sample contexts, so the samples alone cannot say which memories a count rests on). Rows
  made before this revision are backfilled from their samples; the sightings they counted beyond
  those stay unattributed (mention_count minus the attributed ones).
- `wiki_page_links.source_refs`: the memories a link rests on (a planner link: the memories of the
  plan that wrote it and its context; a co-mention link: the memory both pages cite). NULL for links
  written before this revision and for deterministic parent links, whose context names no memory.
- `wiki_llm_batches` and `wiki_llm_batch_scopes`: every Message Batch sent to the provider, which
  scopes had a request in it, and whether it was canceled and deleted there; a forget deletes every
  batch of its scope the provider still holds. Backfilled from the batch requests still stored.
- `wiki_llm_batch_requests.saved_outcome`: a request's result kept for its scope when another
  scope's forget deletes the batch before this one collected it.

Revision ID: 0018_forget_everywhere
Revises: 0012_recall_speed
Create Date: 2026-12-01
"""

from alembic import op

revision = "0018_forget_everywhere"
down_revision = "0017_compile_attempts"
branch_labels = None
depends_on = None

UPGRADE = [
    """
    CREATE TABLE wiki_mention_sightings (
        mention_id uuid NOT NULL REFERENCES wiki_unresolved_mentions(id) ON DELETE CASCADE,
        memory_id text NOT NULL CHECK (length(memory_id) > 0),
        sightings integer NOT NULL DEFAULT 1 CHECK (sightings >= 1),
        PRIMARY KEY (mention_id, memory_id)
    )
    """,
    "CREATE INDEX wiki_mention_sightings_memory ON wiki_mention_sightings (memory_id)",
    """
    INSERT INTO wiki_mention_sightings (mention_id, memory_id, sightings)
    SELECT m.id, e->>'source_ref', count(*)
    FROM wiki_unresolved_mentions m, jsonb_array_elements(m.sample_contexts) e
    WHERE coalesce(e->>'source_ref', '') <> ''
    GROUP BY m.id, e->>'source_ref'
    """,
    "ALTER TABLE wiki_page_links ADD COLUMN source_refs text[]",
    "CREATE INDEX wiki_page_links_source_refs ON wiki_page_links USING gin (source_refs)",
    # A co-mention link's context names its memory: that is what it rests on.
    """
    UPDATE wiki_page_links SET source_refs = ARRAY[substr(context, length('co_mention:') + 1)]
    WHERE context LIKE 'co\\_mention:%'
    """,
    """
    CREATE TABLE wiki_llm_batches (
        batch_id text PRIMARY KEY,
        provider text NOT NULL DEFAULT 'anthropic',
        model_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        cancel_requested_at timestamptz,
        deleted_at timestamptz
    )
    """,
    """
    CREATE TABLE wiki_llm_batch_scopes (
        batch_id text NOT NULL REFERENCES wiki_llm_batches(batch_id) ON DELETE CASCADE,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        PRIMARY KEY (batch_id, tenant_id, owner_id)
    )
    """,
    "CREATE INDEX wiki_llm_batch_scopes_scope ON wiki_llm_batch_scopes (tenant_id, owner_id)",
    """
    INSERT INTO wiki_llm_batches (batch_id, model_id, created_at)
    SELECT batch_id, min(model_id), min(created_at) FROM wiki_llm_batch_requests
    WHERE batch_id IS NOT NULL GROUP BY batch_id
    """,
    """
    INSERT INTO wiki_llm_batch_scopes (batch_id, tenant_id, owner_id)
    SELECT DISTINCT batch_id, tenant_id, owner_id FROM wiki_llm_batch_requests WHERE batch_id IS NOT NULL
    """,
    "ALTER TABLE wiki_llm_batch_requests ADD COLUMN saved_outcome jsonb",
]

DOWNGRADE = [
    "ALTER TABLE wiki_llm_batch_requests DROP COLUMN IF EXISTS saved_outcome",
    "DROP TABLE IF EXISTS wiki_llm_batch_scopes",
    "DROP TABLE IF EXISTS wiki_llm_batches",
    "DROP INDEX IF EXISTS wiki_page_links_source_refs",
    "ALTER TABLE wiki_page_links DROP COLUMN IF EXISTS source_refs",
    "DROP TABLE IF EXISTS wiki_mention_sightings",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
