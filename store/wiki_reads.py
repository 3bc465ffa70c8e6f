"""The wiki's read surfaces: a page with its sections and sources, backlinks, and the reverse lookup
from a memory to the sections citing it (search is recall's ranking grouped by page: app/search.py).

Every query is scoped by tenant AND owner, and archived pages are invisible except where a caller
asks for one by name (`include_archived`, for operators). The CLI uses these; an API can too.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from store.memories import turns_around


class PageSection(BaseModel):
    slug: str
    heading: str
    position: int
    body_md: str
    source_refs: list[str]


class PageView(BaseModel):
    id: UUID
    type: str
    slug: str
    title: str
    summary: str | None
    status: str
    aliases: list[str]
    sections: list[PageSection]
    last_compiled_at: datetime | None
    updated_at: datetime


class Backlink(BaseModel):
    kind: str
    context: str | None
    from_type: str
    from_slug: str
    from_title: str


class CitingSection(BaseModel):
    page_type: str
    page_slug: str
    page_title: str
    section_slug: str
    heading: str


async def find_page(conn: AsyncConnection, tenant: str, owner: str, page_type: str, slug: str, *,
                    include_archived: bool = False) -> PageView | None:
    """The page with its aliases and its sections in order, each with the memories it cites.

    One statement (aliases and sections aggregated in it): a page read is one round trip.
    """
    page = (await conn.execute(text("""
        SELECT p.id, p.type, p.slug, p.title, p.summary, p.status, p.last_compiled_at, p.updated_at,
               coalesce((SELECT array_agg(a.alias ORDER BY a.alias) FROM wiki_page_aliases a
                         WHERE a.page_id = p.id), '{}') AS aliases,
               coalesce((SELECT jsonb_agg(jsonb_build_object(
                                    'slug', s.section_slug, 'heading', s.heading, 'position', s.position,
                                    'body_md', s.body_md,
                                    'source_refs', coalesce((SELECT array_agg(src.source_ref ORDER BY src.source_ref)
                                                             FROM wiki_section_sources src
                                                             WHERE src.section_id = s.id), '{}'))
                                ORDER BY s.position, s.section_slug)
                         FROM wiki_page_sections s WHERE s.page_id = p.id), '[]') AS sections
        FROM wiki_pages p
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.type = :type AND p.slug = :slug
          AND (p.status = 'active' OR :include_archived)
    """), {"tenant": tenant, "owner": owner, "type": page_type, "slug": slug,
           "include_archived": include_archived})).one_or_none()
    if page is None:
        return None
    sections = json.loads(page.sections) if isinstance(page.sections, str) else page.sections
    return PageView(
        id=page.id, type=page.type, slug=page.slug, title=page.title, summary=page.summary, status=page.status,
        aliases=list(page.aliases), last_compiled_at=page.last_compiled_at, updated_at=page.updated_at,
        sections=[PageSection.model_validate(section) for section in sections],
    )


async def backlinks(conn: AsyncConnection, tenant: str, owner: str, page_id: UUID) -> list[Backlink]:
    """Links into the page from active pages of the same scope, references first."""
    rows = await conn.execute(text("""
        SELECT l.kind, l.context, f.type, f.slug, f.title
        FROM wiki_page_links l
        JOIN wiki_pages f ON f.id = l.from_page_id
        JOIN wiki_pages t ON t.id = l.to_page_id
        WHERE l.to_page_id = :page AND t.tenant_id = :tenant AND t.owner_id = :owner
          AND f.tenant_id = :tenant AND f.owner_id = :owner AND f.status = 'active'
        ORDER BY l.kind = 'reference' DESC, l.kind, f.type, f.slug
    """), {"tenant": tenant, "owner": owner, "page": page_id})
    return [Backlink(kind=row.kind, context=row.context, from_type=row.type, from_slug=row.slug,
                     from_title=row.title) for row in rows]


async def memory_exists(conn: AsyncConnection, tenant: str, owner: str, memory_id: UUID) -> bool:
    return (await conn.execute(text("""
        SELECT 1 FROM memory_units WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner
    """), {"id": memory_id, "tenant": tenant, "owner": owner})).first() is not None


async def sections_citing(conn: AsyncConnection, tenant: str, owner: str, memory_id: UUID) -> list[CitingSection]:
    """The reverse lookup: sections of active pages that cite the memory."""
    rows = await conn.execute(text("""
        SELECT p.type, p.slug, p.title, s.section_slug, s.heading
        FROM wiki_section_sources src
        JOIN wiki_page_sections s ON s.id = src.section_id
        JOIN wiki_pages p ON p.id = s.page_id
        WHERE src.source_kind = 'memory_unit' AND src.source_ref = :ref
          AND p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY p.type, p.slug, s.position, s.section_slug
    """), {"tenant": tenant, "owner": owner, "ref": str(memory_id)})
    return [CitingSection(page_type=row.type, page_slug=row.slug, page_title=row.title,
                          section_slug=row.section_slug, heading=row.heading) for row in rows]


class TurnShown(BaseModel):
    """A turn of the memory's conversation, shown around it."""

    id: UUID
    position: int
    speaker: str
    content: str
    dated: datetime
    this: bool  # the memory itself


class MemoryView(BaseModel):
    """One stored memory, whole: `wiki memory show`. A turn of a conversation also gives its speaker,
    conversation and position, and the turns around it (`TURNS_AROUND` before and after)."""

    id: UUID
    tenant: str
    owner: str
    content: str
    metadata: dict[str, Any]
    dated: datetime  # when it happened (occurred_at), or when it was first stored
    updated_at: datetime
    speaker: str | None = None
    conversation: str | None = None
    position: int | None = None
    around: list[TurnShown] = []


TURNS_AROUND = 3


class SourceMemory(BaseModel):
    """A memory a section cites, as a source list shows it; None fields: the memory is gone."""

    id: str
    dated: datetime | None
    content: str | None


async def find_memory(conn: AsyncConnection, tenant: str, owner: str, memory_id: UUID) -> MemoryView | None:
    row = (await conn.execute(text("""
        SELECT id, tenant_id, owner_id, content, metadata, created_at, updated_at, speaker, conversation_id,
               position FROM memory_units
        WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner
    """), {"id": memory_id, "tenant": tenant, "owner": owner})).one_or_none()
    if row is None:
        return None
    around = []
    if row.conversation_id is not None:
        near = await turns_around(conn, tenant, owner, [row.id], TURNS_AROUND, TURNS_AROUND)
        around = [TurnShown(id=t.id, position=t.position, speaker=t.speaker, content=t.content, dated=t.occurred_at,
                            this=t.id == row.id) for t in near.get(row.id, [])]
    return MemoryView(id=row.id, tenant=row.tenant_id, owner=row.owner_id, content=row.content,
                      metadata=row.metadata, dated=row.created_at, updated_at=row.updated_at, speaker=row.speaker,
                      conversation=row.conversation_id, position=row.position, around=around)


async def section_sources(conn: AsyncConnection, tenant: str, owner: str,
                          page_id: UUID) -> dict[str, list[SourceMemory]]:
    """For each section of the page (by section slug), the memories it cites, oldest first.

    Memories are looked up in the page's own scope only: a source ref can never show another scope's text.
    """
    rows = await conn.execute(text("""
        SELECT s.section_slug, src.source_ref, m.created_at, m.content
        FROM wiki_section_sources src
        JOIN wiki_page_sections s ON s.id = src.section_id
        JOIN wiki_pages p ON p.id = s.page_id
        LEFT JOIN memory_units m
             ON m.id = CASE WHEN src.source_ref ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$'
                            THEN CAST(src.source_ref AS uuid) END  -- by primary key; a bad ref finds nothing
             AND m.tenant_id = p.tenant_id AND m.owner_id = p.owner_id
        WHERE s.page_id = :page AND p.tenant_id = :tenant AND p.owner_id = :owner
          AND src.source_kind = 'memory_unit'
        ORDER BY s.section_slug, m.created_at NULLS LAST, src.source_ref
    """), {"tenant": tenant, "owner": owner, "page": page_id})
    sources: dict[str, list[SourceMemory]] = {}
    for row in rows:
        sources.setdefault(row.section_slug, []).append(
            SourceMemory(id=row.source_ref, dated=row.created_at, content=row.content))
    return sources


class OpenMentionRow(BaseModel):
    id: UUID
    alias: str
    suggested_type: str | None
    mention_count: int
    first_seen_at: datetime
    last_seen_at: datetime
    quote: str | None  # the newest held sighting's sentence


async def open_mentions(conn: AsyncConnection, tenant: str, owner: str, limit: int) -> tuple[list[OpenMentionRow], int]:
    """The scope's open mentions, most seen first (then most recent), and how many are open in all."""
    params = {"tenant": tenant, "owner": owner, "limit": limit}
    scoped = "tenant_id = :tenant AND owner_id = :owner AND status = 'open'"
    total = (await conn.execute(text(f"SELECT count(*) FROM wiki_unresolved_mentions WHERE {scoped}"),
                                params)).scalar_one()
    rows = await conn.execute(text(f"""
        SELECT id, alias, suggested_type, mention_count, first_seen_at, last_seen_at,
               sample_contexts -> 0 ->> 'quote' AS quote
        FROM wiki_unresolved_mentions WHERE {scoped}
        ORDER BY mention_count DESC, last_seen_at DESC, alias_normalized, id
        LIMIT :limit
    """), params)
    return [OpenMentionRow(**row._mapping) for row in rows], int(total)
