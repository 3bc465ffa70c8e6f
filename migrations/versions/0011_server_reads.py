"""Scope revisions: a number per (tenant, owner) that changes with every committed write to what the
agent server's cached reads are made of (pages, their sections, aliases, section sources, claims and
their sources), whichever code wrote it.

Deferred constraint triggers bump it at commit, once per transaction and scope: a server that reads
the revision before it reads a page can keep the answer under that revision, and a later request
that sees another revision knows the answer may be stale. Bumping at commit (not at the row's
write) means a transaction takes the revision row's lock after all its other row locks: a writer
never waits for a row while holding it, so writers of one scope queue for it at commit instead of
deadlocking on it.

Revision ID: 0011_server_reads
Revises: 0010_recall
Create Date: 2026-11-27
"""

from alembic import op

revision = "0011_server_reads"
down_revision = "0010_recall"
branch_labels = None
depends_on = None

# The tables a cached read is made of, with how a row names its scope.
REVISED_TABLES = ("wiki_pages", "wiki_page_sections", "wiki_page_aliases", "wiki_section_sources",
                  "wiki_section_claims", "wiki_claim_sources")

UPGRADE = [
    """
    CREATE TABLE wiki_scope_revisions (
        tenant_id text NOT NULL,
        owner_id text NOT NULL,
        revision bigint NOT NULL,
        PRIMARY KEY (tenant_id, owner_id)
    )
    """,
    # Once per transaction and scope: a transaction-local setting keyed by the scope remembers the
    # transaction that bumped it (a setting set locally reads '' in later transactions, never NULL).
    """
    CREATE FUNCTION wiki_revise_scope(scope_tenant text, scope_owner text) RETURNS void
    LANGUAGE plpgsql AS $$
    DECLARE
        marker text := 'wiki_revised.s' || md5(length(scope_tenant)::text || ':' || scope_tenant || scope_owner);
    BEGIN
        IF current_setting(marker, true) IS NOT DISTINCT FROM txid_current()::text THEN
            RETURN;
        END IF;
        INSERT INTO wiki_scope_revisions AS r (tenant_id, owner_id, revision)
        VALUES (scope_tenant, scope_owner, 1)
        ON CONFLICT (tenant_id, owner_id) DO UPDATE SET revision = r.revision + 1;
        PERFORM set_config(marker, txid_current()::text, true);
    END
    $$
    """,
    # A row deleted with its parent (a cascade) finds no parent at commit: the parent's own row, or
    # the page's, revises the scope.
    """
    CREATE FUNCTION wiki_scope_row_written() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        written record;
        scope_tenant text;
        scope_owner text;
    BEGIN
        IF TG_OP = 'DELETE' THEN written := OLD; ELSE written := NEW; END IF;
        IF TG_TABLE_NAME IN ('wiki_pages', 'wiki_claim_sources') THEN
            scope_tenant := written.tenant_id;
            scope_owner := written.owner_id;
        ELSIF TG_TABLE_NAME IN ('wiki_page_sections', 'wiki_page_aliases') THEN
            SELECT p.tenant_id, p.owner_id INTO scope_tenant, scope_owner
            FROM wiki_pages p WHERE p.id = written.page_id;
        ELSE
            SELECT p.tenant_id, p.owner_id INTO scope_tenant, scope_owner
            FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id WHERE s.id = written.section_id;
        END IF;
        IF scope_tenant IS NOT NULL THEN
            PERFORM wiki_revise_scope(scope_tenant, scope_owner);
        END IF;
        -- (nested: an expression naming OLD.tenant_id fails on a table without it, whatever its AND says)
        IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'wiki_pages' THEN
            IF (OLD.tenant_id, OLD.owner_id) IS DISTINCT FROM (NEW.tenant_id, NEW.owner_id) THEN
                PERFORM wiki_revise_scope(OLD.tenant_id, OLD.owner_id);
            END IF;
        END IF;
        RETURN NULL;
    END
    $$
    """,
    *(f"""
    CREATE CONSTRAINT TRIGGER {table}_revises_scope AFTER INSERT OR UPDATE OR DELETE ON {table}
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION wiki_scope_row_written()
    """ for table in REVISED_TABLES),
]

DOWNGRADE = [
    *(f"DROP TRIGGER {table}_revises_scope ON {table}" for table in REVISED_TABLES),
    "DROP FUNCTION wiki_scope_row_written()",
    "DROP FUNCTION wiki_revise_scope(text, text)",
    "DROP TABLE wiki_scope_revisions",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
