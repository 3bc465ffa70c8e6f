"""The whole schema: the memory store, the page model (pages, sections, aliases, links, unresolved
mentions, section sources), the cursors, the ledger and the per-batch staging rows that keep plan
bodies out of workflow history.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# Each statement on its own so a failure names the object.
UPGRADE = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    # --- the memory store that feeds compiles (the role of an agent-memory service such as Hindsight) ---
    """
    CREATE TABLE memory_units (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        content text NOT NULL CHECK (length(content) > 0),
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(metadata) = 'object'),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
    )
    """,
    # The keyset scan orders by (ms-truncated updated_at, id). date_trunc over timestamptz is only
    # STABLE, so the index (and the query) truncate the UTC wall time, which is IMMUTABLE.
    """
    CREATE INDEX memory_units_keyset_idx ON memory_units
        (tenant_id, owner_id, date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC'), id)
    """,
    # --- pages ---
    """
    CREATE TABLE wiki_pages (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        type text NOT NULL CHECK (type IN ('entity', 'topic', 'decision')),
        slug text NOT NULL CHECK (length(slug) > 0),
        title text NOT NULL CHECK (length(title) > 0),
        summary text,
        body_md text NOT NULL DEFAULT '',
        search_tsv tsvector GENERATED ALWAYS AS (
            to_tsvector('english', regexp_replace(
                coalesce(title, '') || ' ' || coalesce(summary, '') || ' ' || coalesce(body_md, ''),
                '[^[:alnum:]]+', ' ', 'g'))
        ) STORED,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
        parent_page_id uuid REFERENCES wiki_pages(id) ON DELETE SET NULL,
        hubness_score integer NOT NULL DEFAULT 0,
        tags text[] NOT NULL DEFAULT '{}',
        last_compiled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT wiki_pages_scope_type_slug_key UNIQUE (tenant_id, owner_id, type, slug),
        CONSTRAINT wiki_pages_not_own_parent CHECK (parent_page_id IS NULL OR parent_page_id <> id)
    )
    """,
    "CREATE INDEX wiki_pages_scope_type_status_idx ON wiki_pages (tenant_id, owner_id, type, status)",
    "CREATE INDEX wiki_pages_scope_compiled_idx ON wiki_pages (tenant_id, owner_id, last_compiled_at DESC)",
    "CREATE INDEX wiki_pages_search_tsv_idx ON wiki_pages USING gin (search_tsv)",
    "CREATE INDEX wiki_pages_parent_idx ON wiki_pages (parent_page_id)",
    "CREATE INDEX wiki_pages_title_trgm_idx ON wiki_pages USING gin (title gin_trgm_ops)",
    """
    CREATE TABLE wiki_page_sections (
        id uuid PRIMARY KEY,
        page_id uuid NOT NULL REFERENCES wiki_pages(id) ON DELETE CASCADE,
        section_slug text NOT NULL CHECK (length(section_slug) > 0),
        heading text NOT NULL,
        body_md text NOT NULL,
        position integer NOT NULL,
        last_source_at timestamptz,
        aggregation jsonb CHECK (aggregation IS NULL OR jsonb_typeof(aggregation) = 'object'),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT wiki_page_sections_page_slug_key UNIQUE (page_id, section_slug)
    )
    """,
    """
    CREATE TABLE wiki_page_aliases (
        id uuid PRIMARY KEY,
        page_id uuid NOT NULL REFERENCES wiki_pages(id) ON DELETE CASCADE,
        alias text NOT NULL CHECK (length(alias) > 0),
        source text NOT NULL DEFAULT 'compiler' CHECK (source IN ('compiler', 'manual', 'import')),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT wiki_page_aliases_page_alias_key UNIQUE (page_id, alias)
    )
    """,
    "CREATE INDEX wiki_page_aliases_alias_idx ON wiki_page_aliases (alias)",
    "CREATE INDEX wiki_page_aliases_alias_trgm_idx ON wiki_page_aliases USING gin (alias gin_trgm_ops)",
    """
    CREATE TABLE wiki_page_links (
        id uuid PRIMARY KEY,
        from_page_id uuid NOT NULL REFERENCES wiki_pages(id) ON DELETE CASCADE,
        to_page_id uuid NOT NULL REFERENCES wiki_pages(id) ON DELETE CASCADE,
        kind text NOT NULL DEFAULT 'reference' CHECK (kind IN ('reference', 'parent_of', 'child_of')),
        context text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT wiki_page_links_from_to_kind_key UNIQUE (from_page_id, to_page_id, kind),
        CONSTRAINT wiki_page_links_no_self_link CHECK (from_page_id <> to_page_id)
    )
    """,
    "CREATE INDEX wiki_page_links_to_idx ON wiki_page_links (to_page_id)",
    "CREATE INDEX wiki_page_links_kind_idx ON wiki_page_links (kind)",
    """
    CREATE TABLE wiki_unresolved_mentions (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        alias text NOT NULL CHECK (length(alias) > 0),
        alias_normalized text NOT NULL CHECK (length(alias_normalized) > 0),
        mention_count integer NOT NULL DEFAULT 1 CHECK (mention_count >= 1),
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        sample_contexts jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(sample_contexts) = 'array'),
        suggested_type text CHECK (suggested_type IS NULL OR suggested_type IN ('entity', 'topic', 'decision')),
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'promoted', 'ignored')),
        promoted_page_id uuid REFERENCES wiki_pages(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT wiki_unresolved_mentions_scope_alias_status_key
            UNIQUE (tenant_id, owner_id, alias_normalized, status)
    )
    """,
    "CREATE INDEX wiki_unresolved_mentions_open_idx ON wiki_unresolved_mentions "
    "(tenant_id, owner_id, status, mention_count DESC)",
    """
    CREATE TABLE wiki_section_sources (
        id uuid PRIMARY KEY,
        section_id uuid NOT NULL REFERENCES wiki_page_sections(id) ON DELETE CASCADE,
        source_kind text NOT NULL CHECK (source_kind IN ('memory_unit', 'artifact', 'journal_idea')),
        source_ref text NOT NULL CHECK (length(source_ref) > 0),
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT wiki_section_sources_section_kind_ref_key UNIQUE (section_id, source_kind, source_ref)
    )
    """,
    "CREATE INDEX wiki_section_sources_kind_ref_idx ON wiki_section_sources (source_kind, source_ref)",
    # --- compile state ---
    """
    CREATE TABLE wiki_compile_cursors (
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        last_record_updated_at timestamptz,
        last_record_id uuid,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, owner_id),
        CONSTRAINT wiki_compile_cursors_both_or_neither
            CHECK ((last_record_updated_at IS NULL) = (last_record_id IS NULL))
    )
    """,
    """
    CREATE TABLE wiki_compile_jobs (
        id uuid PRIMARY KEY,
        kind text NOT NULL DEFAULT 'compile' CHECK (kind IN ('compile', 'lint')),
        tenant_id text,
        owner_id text,
        workflow_id text NOT NULL,
        run_id text NOT NULL UNIQUE,
        trigger text NOT NULL CHECK (trigger IN
            ('memory_retain', 'bootstrap_import', 'admin', 'lint', 'resume', 'rebuild', 'schedule', 'continuation')),
        status text NOT NULL DEFAULT 'running' CHECK (status IN
            ('running', 'succeeded', 'failed', 'continued', 'cancelled', 'terminated', 'timed_out')),
        model_id text,
        metrics jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(metrics) = 'object'),
        error text,
        started_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT wiki_compile_jobs_scope_for_compiles
            CHECK (kind <> 'compile' OR (tenant_id IS NOT NULL AND owner_id IS NOT NULL))
    )
    """,
    "CREATE INDEX wiki_compile_jobs_scope_idx ON wiki_compile_jobs (tenant_id, owner_id, started_at DESC)",
    "CREATE INDEX wiki_compile_jobs_status_idx ON wiki_compile_jobs (status, started_at DESC)",
    # Plans and section drafts are staged here so workflow history carries only ids and counts.
    """
    CREATE TABLE wiki_compile_plans (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        run_id text NOT NULL,
        memory_ids uuid[] NOT NULL,
        plan jsonb NOT NULL,
        resolved jsonb,
        status text NOT NULL DEFAULT 'planned' CHECK (status IN ('planned', 'resolved', 'applied')),
        result jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX wiki_compile_plans_scope_idx ON wiki_compile_plans (tenant_id, owner_id, created_at)",
    """
    CREATE TABLE wiki_compile_section_drafts (
        plan_id uuid NOT NULL REFERENCES wiki_compile_plans(id) ON DELETE CASCADE,
        task_key text NOT NULL,
        body_md text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (plan_id, task_key)
    )
    """,
]

DOWNGRADE = [
    "DROP TABLE IF EXISTS wiki_compile_section_drafts",
    "DROP TABLE IF EXISTS wiki_compile_plans",
    "DROP TABLE IF EXISTS wiki_compile_jobs",
    "DROP TABLE IF EXISTS wiki_compile_cursors",
    "DROP TABLE IF EXISTS wiki_section_sources",
    "DROP TABLE IF EXISTS wiki_unresolved_mentions",
    "DROP TABLE IF EXISTS wiki_page_links",
    "DROP TABLE IF EXISTS wiki_page_aliases",
    "DROP TABLE IF EXISTS wiki_page_sections",
    "DROP TABLE IF EXISTS wiki_pages",
    "DROP TABLE IF EXISTS memory_units",
    # pg_trgm stays: other schemas in the database may use it.
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
