"""An operator's view of a scope's wiki: search, a page with its sources and backlinks, a memory and
the sections citing it, and archiving, restoring or deleting a page. `wiki search`, `wiki page …`
and `wiki memory …` call these; each returns None where the scope has no such page or memory, and
the caller says so.

Unlike the agents' reads (app/reads.py), a page is named exactly (TYPE/SLUG) and archived pages are
shown too: an operator restores what an agent no longer sees.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from pydantic import Field
from sqlalchemy.ext.asyncio import AsyncConnection

from app.merges import PageResolution, page_resolution
from domain.claims import status_meanings
from store import claim_validity, claims, wiki_admin, wiki_reads
from store.claims import ClaimTotals, ClaimView, PageListing
from store.wiki_admin import DeletedPage
from store.wiki_reads import Backlink, CitingSection, MemoryView, PageView, SourceMemory

__all__ = ["Backlink", "CitingSection", "ClaimTotals", "ClaimView", "DeletedPage", "MemoryShown", "PageListing",
           "PageWithSources", "SourceMemory", "backlinks_of", "claim_totals", "delete_page", "disputed_claims",
           "memory_shown", "page_list", "page_with_sources", "rejected_claims", "sections_citing",
           "set_page_status", "unsure_pairs"]


class PageWithSources(PageView):
    """The page with each section's claims (by section slug), and on request the memories each section
    cites."""

    claims: dict[str, list[ClaimView]] = Field(default_factory=dict)
    # What each status its claims carry means, in one line (domain/claims.py STATUS_MEANINGS).
    statuses: dict[str, str] = Field(default_factory=dict)
    sources: dict[str, list[SourceMemory]] = Field(default_factory=dict)
    # Why the page holds its names: resolution decisions and operator merges (app/merges.py).
    resolution: PageResolution | None = None


class MemoryShown(MemoryView):
    cited_by: list[CitingSection]


async def page_with_sources(conn: AsyncConnection, tenant: str, owner: str, page_type: str, slug: str, *,
                            sources: bool, min_confidence: float = 0.0, history: bool = False,
                            as_of: datetime | None = None) -> PageWithSources | None:
    """The page (archived too) with its claims at least `min_confidence` sure, and with `sources` the
    memories each of its sections cites. Facts since replaced are left out unless `history`; with
    `as_of`, the claims that held at that moment."""
    page = await wiki_reads.find_page(conn, tenant, owner, page_type, slug, include_archived=True)
    if page is None:
        return None
    cited = await wiki_reads.section_sources(conn, tenant, owner, page.id) if sources else {}
    claimed = await claims.page_claims(conn, tenant, owner, page.id, min_confidence,
                                       shown="history" if history else "current", as_of=as_of)
    if min_confidence > 0 or as_of is not None or await claims.page_has_history(conn, page.id):
        claimed = {s.slug: claimed.get(s.slug, []) for s in page.sections}
    return PageWithSources(**page.model_dump(), claims=claimed, sources=cited,
                           statuses=status_meanings(c.status for section in claimed.values() for c in section),
                           resolution=await page_resolution(conn, tenant, owner, page_type, slug))


async def page_list(conn: AsyncConnection, tenant: str, owner: str) -> list[PageListing]:
    """Every page of the scope (archived too) with its sections, claims and durable claims counted."""
    return await claims.page_list(conn, tenant, owner)


async def rejected_claims(conn: AsyncConnection, tenant: str, owner: str, limit: int) -> list[dict]:
    """The lines the verification gate kept out of the scope's wiki, newest first."""
    return await claims.rejected_claims(conn, tenant, owner, limit)


async def claim_totals(conn: AsyncConnection, limit: int) -> list[ClaimTotals]:
    """Claims, durable claims and rejections of the scopes that have any (the lint prints them)."""
    return await claims.claim_totals(conn, limit)


async def disputed_claims(conn: AsyncConnection, limit: int) -> list[dict]:
    """Facts that conflict with no clear order (the same moment, or no date), by scope and page."""
    return await claim_validity.disputed_claims(conn, limit)


async def unsure_pairs(conn: AsyncConnection, limit: int) -> list[dict]:
    """Pairs of current lines of one page that may be one fact replacing another, kept both current
    because the offline rules could not tell ("joined a pottery class" / "joined a support group")."""
    return await claim_validity.unsure_pairs(conn, limit)


async def backlinks_of(conn: AsyncConnection, tenant: str, owner: str, page_type: str,
                       slug: str) -> list[Backlink] | None:
    """The active pages linking to the page (archived or not); None when the scope has no such page."""
    page = await wiki_reads.find_page(conn, tenant, owner, page_type, slug, include_archived=True)
    if page is None:
        return None
    return await wiki_reads.backlinks(conn, tenant, owner, page.id)


async def set_page_status(conn: AsyncConnection, tenant: str, owner: str, page_type: str, slug: str,
                          status: str) -> bool:
    """Archive (`archived`) or restore (`active`) a page; False when the scope has no such page."""
    return await wiki_admin.set_page_status(conn, tenant, owner, page_type, slug, status)


async def delete_page(conn: AsyncConnection, tenant: str, owner: str, page_type: str,
                      slug: str) -> DeletedPage | None:
    """Delete the page for good, with what hangs off it; None when the scope has no such page."""
    return await wiki_admin.delete_page(conn, tenant, owner, page_type, slug)


async def memory_shown(conn: AsyncConnection, tenant: str, owner: str, memory_id: UUID) -> MemoryShown | None:
    """The memory whole, and the sections of active pages citing it."""
    found = await wiki_reads.find_memory(conn, tenant, owner, memory_id)
    if found is None:
        return None
    cited_by = await wiki_reads.sections_citing(conn, tenant, owner, memory_id)
    return MemoryShown(**found.model_dump(), cited_by=cited_by)


async def sections_citing(conn: AsyncConnection, tenant: str, owner: str,
                          memory_id: UUID) -> list[CitingSection] | None:
    """The sections of active pages citing the memory; None when the scope has no such memory."""
    if not await wiki_reads.memory_exists(conn, tenant, owner, memory_id):
        return None
    return await wiki_reads.sections_citing(conn, tenant, owner, memory_id)


async def open_mentions(conn: AsyncConnection, tenant: str, owner: str, limit: int):
    """The scope's open mentions, most seen first, and how many are open in all (`wiki mention list`)."""
    return await wiki_reads.open_mentions(conn, tenant, owner, limit)
