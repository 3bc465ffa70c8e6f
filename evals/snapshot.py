"""One scope's compiled wiki read back with plain SQL, as the eval's metrics need it.

`rows_for_identity` is the part a rebuild must reproduce: active pages and what hangs off them,
without timestamps (ids are uuid5 of natural keys, so they are compared too).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine


class Section(BaseModel):
    id: str
    slug: str
    heading: str
    body_md: str
    aggregation: dict[str, Any] | None = None
    sources: list[str] = Field(default_factory=list)  # memory ids


class Page(BaseModel):
    id: str
    type: str
    slug: str
    title: str
    summary: str | None
    body_md: str
    status: str
    parent_page_id: str | None
    aliases: list[str] = Field(default_factory=list)
    sections: list[Section] = Field(default_factory=list)

    def cited(self) -> set[str]:
        return {ref for section in self.sections for ref in section.sources}


class Mention(BaseModel):
    alias: str
    alias_normalized: str
    mention_count: int
    status: str
    source_refs: list[str]


class Snapshot(BaseModel):
    pages: list[Page]
    links: list[tuple[str, str, str]]  # (from page id, to page id, kind)
    mentions: list[Mention]

    def active(self) -> list[Page]:
        return [page for page in self.pages if page.status == "active"]

    def text(self) -> str:
        """Every string of the scope's wiki, for leak checks."""
        parts = []
        for page in self.pages:
            parts += [page.title, page.summary or "", page.body_md, *page.aliases]
            parts += [f"{s.heading}\n{s.body_md}" for s in page.sections]
        return "\n".join(parts)


async def read_snapshot(engine: AsyncEngine, tenant: str, owner: str) -> Snapshot:
    scope = {"t": tenant, "o": owner}
    async with engine.connect() as conn:
        pages = {str(r.id): Page(id=str(r.id), type=r.type, slug=r.slug, title=r.title, summary=r.summary,
                                 body_md=r.body_md, status=r.status,
                                 parent_page_id=str(r.parent_page_id) if r.parent_page_id else None)
                 for r in await conn.execute(text("""
                     SELECT id, type, slug, title, summary, body_md, status, parent_page_id FROM wiki_pages
                     WHERE tenant_id = :t AND owner_id = :o ORDER BY type, slug COLLATE "C"
                 """), scope)}
        for r in await conn.execute(text("""
            SELECT a.page_id, a.alias FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o ORDER BY a.alias COLLATE "C"
        """), scope):
            pages[str(r.page_id)].aliases.append(r.alias)
        sections: dict[str, Section] = {}
        for r in await conn.execute(text("""
            SELECT s.id, s.page_id, s.section_slug, s.heading, s.body_md, CAST(s.aggregation AS text) AS aggregation
            FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o ORDER BY s.page_id, s.position, s.section_slug COLLATE "C"
        """), scope):
            section = Section(id=str(r.id), slug=r.section_slug, heading=r.heading, body_md=r.body_md,
                              aggregation=json.loads(r.aggregation) if r.aggregation else None)
            sections[section.id] = section
            pages[str(r.page_id)].sections.append(section)
        for r in await conn.execute(text("""
            SELECT ss.section_id, ss.source_ref FROM wiki_section_sources ss
            JOIN wiki_page_sections s ON s.id = ss.section_id JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o AND ss.source_kind = 'memory_unit'
            ORDER BY ss.source_ref COLLATE "C"
        """), scope):
            sections[str(r.section_id)].sources.append(str(r.source_ref).lower())
        links = [(str(r.from_page_id), str(r.to_page_id), r.kind) for r in await conn.execute(text("""
            SELECT l.from_page_id, l.to_page_id, l.kind FROM wiki_page_links l
            JOIN wiki_pages p ON p.id = l.from_page_id WHERE p.tenant_id = :t AND p.owner_id = :o ORDER BY 1, 2, 3
        """), scope)]
        mentions = [Mention(alias=r.alias, alias_normalized=r.alias_normalized, mention_count=r.mention_count,
                            status=r.status, source_refs=[str(c.get("source_ref", "")).lower()
                                                          for c in (r.sample_contexts or []) if isinstance(c, dict)])
                    for r in await conn.execute(text("""
                        SELECT alias, alias_normalized, mention_count, status, sample_contexts
                        FROM wiki_unresolved_mentions WHERE tenant_id = :t AND owner_id = :o
                        ORDER BY alias_normalized COLLATE "C", status
                    """), scope)]
    return Snapshot(pages=list(pages.values()), links=links, mentions=mentions)


def rows_for_identity(snapshot: Snapshot) -> set[tuple]:
    """The rows a rebuild must reproduce exactly: active pages, their sections, aliases, sources and links."""
    active = {page.id: page for page in snapshot.active()}
    rows: set[tuple] = set()
    for page in active.values():
        rows.add(("page", page.id, page.type, page.slug, page.title, page.summary, page.body_md, page.parent_page_id))
        rows.update(("alias", page.id, alias) for alias in page.aliases)
        for section in page.sections:
            rows.add(("section", page.id, section.slug, section.heading, section.body_md))
            rows.update(("source", page.id, section.slug, ref) for ref in section.sources)
    rows.update(("link", *link) for link in snapshot.links if link[0] in active and link[1] in active)
    return rows
