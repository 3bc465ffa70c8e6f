"""Why pages are what they are, and an operator's merge and unmerge: the use cases behind
`wiki page merges|merge|unmerge` and the HTTP API's merge routes.

`page_resolution` reads a page's record: every resolution decision about it (the rung or the
judge, the evidence, the answer, the run; store/merge_records.py) and the operator merges it took
part in (store/page_merges.py). `merge` and `unmerge` run in the caller's transaction.
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from store.merge_records import DecisionView, decisions_for_page
from store.page_merges import MergeRefused, PageMerge, merge_pages, page_merges, unmerge_page

__all__ = ["DecisionView", "MergeRefused", "PageMerge", "PageResolution", "merge", "page_resolution", "unmerge"]


class PageResolution(BaseModel):
    """What was decided about a page's names: decisions newest first, then the operator merges."""

    page: str  # type/slug
    decisions: list[DecisionView] = Field(default_factory=list)
    merges: list[PageMerge] = Field(default_factory=list)


async def _page_id(conn: AsyncConnection, tenant: str, owner: str, page_type: str, slug: str) -> str | None:
    found = await conn.execute(text("""
        SELECT id FROM wiki_pages WHERE tenant_id = :tenant AND owner_id = :owner AND type = :type AND slug = :slug
    """), {"tenant": tenant, "owner": owner, "type": page_type, "slug": slug})
    page_id = found.scalar_one_or_none()
    return str(page_id) if page_id is not None else None


async def page_resolution(conn: AsyncConnection, tenant: str, owner: str, page_type: str,
                          slug: str) -> PageResolution | None:
    """The page's resolution record; None when the scope has no such page."""
    page_id = await _page_id(conn, tenant, owner, page_type, slug)
    if page_id is None:
        return None
    return PageResolution(page=f"{page_type}/{slug}", decisions=await decisions_for_page(conn, tenant, owner, page_id),
                          merges=await page_merges(conn, tenant, owner, page_id))


async def merge(conn: AsyncConnection, tenant: str, owner: str, source: tuple[str, str],
                target: tuple[str, str]) -> PageMerge:
    """Merge page `source` (type, slug) into `target`; MergeRefused says why it cannot."""
    return await merge_pages(conn, tenant, owner, source, target)


async def unmerge(conn: AsyncConnection, tenant: str, owner: str, source: tuple[str, str]) -> PageMerge:
    """Undo the standing merge of `source` into another page; MergeRefused when there is none."""
    return await unmerge_page(conn, tenant, owner, source)
