"""Scope revisions: a number per (tenant, owner) that every committed write to its wiki or memories
moves forward, so a view computed from the whole scope (counts, hubs, the graph) can be kept and
served again until the scope changes; and the indexes the web view's home and graph read by.

Statement-level triggers on every table a view reads note the scopes a statement touched in
`wiki_scope_writes` (one row per transaction and scope); a deferred constraint trigger on that table
moves the scope's revision at commit and removes the note. Taking the revision row's lock at commit,
not at the first write, keeps a long compile transaction from holding it: two writers of one scope
wait for each other only while both commit, and never in a cycle with the rows they write.

Two numbers move: `revision` with every write, and `wiki_revision` only with writes to the wiki's own
tables (not memories, not compile runs). A reader whose answer is made of pages alone (the agent
server's page, search and changes answers) keys on `wiki_revision`, so the retains that stream into a
scope do not empty its cache; a view that shows memories or runs keys on `revision`.

A child row (section, claim, alias, link, citation) finds its scope through its page. When a page's
delete cascades to its children, the children's page is gone by the time their trigger runs; the
page's own trigger has noted the scope in the same transaction.

Revision ID: 0011_scope_revisions
Revises: 0010_recall
Create Date: 2026-11-27
"""

from alembic import op

revision = "0011_scope_revisions"
down_revision = "0010_recall"
branch_labels = None
depends_on = None

# How a table's changed rows (the transition table `changed`) name their scopes.
_SCOPES_OF = {
    "direct": "SELECT DISTINCT c.tenant_id, c.owner_id FROM changed c WHERE c.tenant_id IS NOT NULL "
              "AND c.owner_id IS NOT NULL",
    "page": "SELECT DISTINCT p.tenant_id, p.owner_id FROM changed c JOIN wiki_pages p ON p.id = c.page_id",
    "from_page": "SELECT DISTINCT p.tenant_id, p.owner_id FROM changed c JOIN wiki_pages p ON p.id = c.from_page_id",
    "section": "SELECT DISTINCT p.tenant_id, p.owner_id FROM changed c "
               "JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id",
}
# Every table a view of the web (or another reader keeping views per revision) reads.
TRACKED = {
    "wiki_pages": "direct",
    "memory_units": "direct",
    "wiki_claim_sources": "direct",
    "wiki_compile_jobs": "direct",
    "wiki_page_sections": "page",
    "wiki_page_aliases": "page",
    "wiki_page_links": "from_page",
    "wiki_section_claims": "section",
    "wiki_section_sources": "section",
}
_EVENTS = {"insert": "NEW", "update": "NEW", "delete": "OLD"}
# Written by the agent and the runs, not by the wiki's compile: they move `revision` only.
NOT_WIKI = ("memory_units", "wiki_compile_jobs")


def _note_function(mapping: str) -> str:
    """The trigger function noting the scopes of a statement's rows. A transaction writing one scope in
    many statements notes it once: the scopes noted are remembered in a transaction-local setting
    (undone with a rolled-back savepoint, like the note itself), so later statements skip the insert.
    A write to a wiki table marks the transaction's note as a wiki write (once, by the same rule)."""
    return f"""
    CREATE FUNCTION wiki_note_scope_write_{mapping}() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        scope record;
        noted text := coalesce(current_setting('wiki.noted_scopes', true), '');
        key text;
        is_wiki boolean := TG_TABLE_NAME NOT IN {NOT_WIKI!r};
    BEGIN
        FOR scope IN {_SCOPES_OF[mapping]} LOOP
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
    CREATE TABLE wiki_scope_revisions (
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        revision bigint NOT NULL CHECK (revision > 0),
        wiki_revision bigint NOT NULL CHECK (wiki_revision >= 0),
        changed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, owner_id)
    )
    """,
    """
    CREATE TABLE wiki_scope_writes (
        xact xid8 NOT NULL DEFAULT pg_current_xact_id(),
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        wiki boolean NOT NULL,
        PRIMARY KEY (xact, tenant_id, owner_id)
    )
    """,
    """
    CREATE FUNCTION wiki_bump_scope_revision() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        wrote_wiki boolean;
    BEGIN
        -- the note as it stands at commit: a later statement may have marked it a wiki write
        DELETE FROM wiki_scope_writes
        WHERE xact = NEW.xact AND tenant_id = NEW.tenant_id AND owner_id = NEW.owner_id
        RETURNING wiki_scope_writes.wiki INTO wrote_wiki;
        INSERT INTO wiki_scope_revisions (tenant_id, owner_id, revision, wiki_revision)
        VALUES (NEW.tenant_id, NEW.owner_id, 1, CASE WHEN wrote_wiki THEN 1 ELSE 0 END)
        ON CONFLICT (tenant_id, owner_id)
        DO UPDATE SET revision = wiki_scope_revisions.revision + 1,
                      wiki_revision = wiki_scope_revisions.wiki_revision + CASE WHEN wrote_wiki THEN 1 ELSE 0 END,
                      changed_at = now();
        RETURN NULL;
    END $$
    """,
    """
    CREATE CONSTRAINT TRIGGER wiki_scope_writes_bump AFTER INSERT ON wiki_scope_writes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION wiki_bump_scope_revision()
    """,
    *(_note_function(mapping) for mapping in _SCOPES_OF),
    *(f"""
      CREATE TRIGGER {table}_scope_write_{event} AFTER {event.upper()} ON {table}
      REFERENCING {way} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION wiki_note_scope_write_{mapping}()
      """ for table, mapping in TRACKED.items() for event, way in _EVENTS.items()),
    # The home's hubs and the graph's best connected pages: the scope's active pages by hubness.
    """
    CREATE INDEX wiki_pages_scope_hubness_idx ON wiki_pages (tenant_id, owner_id, hubness_score DESC, title, id)
    WHERE status = 'active'
    """,
    # The home's recent changes: the scope's active pages by last change.
    """
    CREATE INDEX wiki_pages_scope_recent_idx ON wiki_pages (tenant_id, owner_id, updated_at DESC, id)
    WHERE status = 'active'
    """,
]

DOWNGRADE = [
    "DROP INDEX wiki_pages_scope_recent_idx",
    "DROP INDEX wiki_pages_scope_hubness_idx",
    *(f"DROP TRIGGER {table}_scope_write_{event} ON {table}" for table in TRACKED for event in _EVENTS),
    *(f"DROP FUNCTION wiki_note_scope_write_{mapping}()" for mapping in _SCOPES_OF),
    "DROP TABLE wiki_scope_writes",
    "DROP FUNCTION wiki_bump_scope_revision()",
    "DROP TABLE wiki_scope_revisions",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
