"""Operator changes to a scope's wiki: archive, restore and delete a page, empty a scope for a rebuild,
and closing ledger rows of runs that ended without closing them. Every statement is scoped by tenant
AND owner.
"""

from __future__ import annotations

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


class DeletedPage(BaseModel):
    """What a hard delete removed with the page (the cascade)."""

    sections: int
    aliases: int
    links: int
    section_sources: int


class ScopeReset(BaseModel):
    pages_removed: int
    mentions_cleared: int


async def set_page_status(conn: AsyncConnection, tenant: str, owner: str, page_type: str, slug: str,
                          status: str) -> bool:
    """Archive (`archived`) or restore (`active`) a page; False when the scope has no such page."""
    updated = await conn.execute(text("""
        UPDATE wiki_pages SET status = :status, updated_at = now()
        WHERE tenant_id = :tenant AND owner_id = :owner AND type = :type AND slug = :slug
    """), {"status": status, "tenant": tenant, "owner": owner, "type": page_type, "slug": slug})
    return updated.rowcount == 1


async def delete_page(conn: AsyncConnection, tenant: str, owner: str, page_type: str,
                      slug: str) -> DeletedPage | None:
    """Hard-delete a page; the foreign keys cascade to its sections, aliases, links and sources."""
    counts = (await conn.execute(text("""
        SELECT p.id,
               (SELECT count(*) FROM wiki_page_sections s WHERE s.page_id = p.id) AS sections,
               (SELECT count(*) FROM wiki_page_aliases a WHERE a.page_id = p.id) AS aliases,
               (SELECT count(*) FROM wiki_page_links l WHERE l.from_page_id = p.id OR l.to_page_id = p.id) AS links,
               (SELECT count(*) FROM wiki_section_sources src JOIN wiki_page_sections s ON s.id = src.section_id
                WHERE s.page_id = p.id) AS section_sources
        FROM wiki_pages p
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.type = :type AND p.slug = :slug
        FOR UPDATE OF p
    """), {"tenant": tenant, "owner": owner, "type": page_type, "slug": slug})).one_or_none()
    if counts is None:
        return None
    await conn.execute(text("DELETE FROM wiki_pages WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner"),
                       {"id": counts.id, "tenant": tenant, "owner": owner})
    return DeletedPage(sections=counts.sections, aliases=counts.aliases, links=counts.links,
                       section_sources=counts.section_sources)


async def reset_scope_for_rebuild(conn: AsyncConnection, tenant: str, owner: str) -> ScopeReset:
    """Empty the scope's wiki and rewind its cursor, so the next compile rebuilds it from the memories.

    Everything compiled is derived from the memories, so it all goes: pages with their sections,
    section sources, aliases and links (the foreign keys cascade), and every unresolved mention. The
    compile that follows then starts from exactly what a scope that never compiled has, and writes
    the same rows, with the same ids, a first compile of those memories writes. Archiving instead
    would leave rows the memories no longer support (an archived page nothing touches, old sources,
    a promoted child's parent edge) and let a resurrected page add to its old sections. Memories,
    the ledger and staged plans stay.
    """
    scope = {"tenant": tenant, "owner": owner}
    removed = await conn.execute(text("DELETE FROM wiki_pages WHERE tenant_id = :tenant AND owner_id = :owner"),
                                 scope)
    cleared = await conn.execute(text("""
        DELETE FROM wiki_unresolved_mentions WHERE tenant_id = :tenant AND owner_id = :owner
    """), scope)
    await conn.execute(text("""
        INSERT INTO wiki_compile_cursors (tenant_id, owner_id) VALUES (:tenant, :owner)
        ON CONFLICT (tenant_id, owner_id) DO UPDATE
        SET last_record_updated_at = NULL, last_record_id = NULL, updated_at = now()
    """), scope)
    return ScopeReset(pages_removed=removed.rowcount, mentions_cleared=cleared.rowcount)


async def close_open_ledger_rows(conn: AsyncConnection, tenant: str, owner: str, workflow_id: str,
                                 status: str) -> int:
    """Runs that were terminated or timed out never wrote their end: record how they ended."""
    closed = await conn.execute(text("""
        UPDATE wiki_compile_jobs SET status = :status, finished_at = coalesce(finished_at, now())
        WHERE kind = 'compile' AND tenant_id = :tenant AND owner_id = :owner AND workflow_id = :workflow_id
          AND status = 'running'
    """), {"status": status, "tenant": tenant, "owner": owner, "workflow_id": workflow_id})
    return closed.rowcount


async def open_ledger_runs(conn: AsyncConnection, tenant: str, owner: str) -> list[tuple[str, str]]:
    """(workflow id, run id) of the scope's compile runs whose ledger row still says `running`."""
    rows = await conn.execute(text("""
        SELECT workflow_id, run_id FROM wiki_compile_jobs
        WHERE kind = 'compile' AND tenant_id = :tenant AND owner_id = :owner AND status = 'running'
        ORDER BY started_at, id
    """), {"tenant": tenant, "owner": owner})
    return [(row.workflow_id, row.run_id) for row in rows]


async def close_ledger_run(conn: AsyncConnection, tenant: str, owner: str, run_id: str, status: str,
                           error: str | None) -> bool:
    """Record how one run ended when it could not (terminated, timed out, cancelled); only if still open."""
    closed = await conn.execute(text("""
        UPDATE wiki_compile_jobs SET status = :status, error = coalesce(error, :error),
                                     finished_at = coalesce(finished_at, now())
        WHERE kind = 'compile' AND tenant_id = :tenant AND owner_id = :owner AND run_id = :run_id
          AND status = 'running'
    """), {"status": status, "error": error, "tenant": tenant, "owner": owner, "run_id": run_id})
    return closed.rowcount == 1
