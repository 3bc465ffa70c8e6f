"""The reads behind the agent-facing surfaces (MCP and HTTP): a page by any of its names, the memories
a page cites, the link cone around a page, and what changed since a time.

Like store/wiki_reads.py, every statement is keyed by (tenant, owner) and sees active pages only;
a page of another scope is indistinguishable from a page that does not exist.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple
from uuid import UUID

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.aliases import normalize_alias, slugify_title


class PageKey(BaseModel):
    id: UUID
    type: str
    slug: str
    title: str
    how: str  # what the name matched: "slug", "alias" or "title"


class CitedMemory(BaseModel):
    id: UUID
    content: str
    occurred_at: datetime
    sections: list[str]


class SectionChange(BaseModel):
    slug: str
    heading: str
    change: str  # "added" or "rewritten"
    changed_at: datetime
    new_source_ids: list[str]


class PageChange(BaseModel):
    id: UUID
    type: str
    slug: str
    title: str
    summary: str | None
    change: str  # "created" or "updated"
    changed_at: datetime
    sections: list[SectionChange]


_SCOPE = "p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'"


async def pages_named(conn: AsyncConnection, tenant: str, owner: str, name: str, limit: int = 5) -> list[PageKey]:
    """Active pages a name designates, best first: exact slug, then alias (case- and accent-folded,
    which also covers titles, since every title is seeded as an alias), then the slug the name
    would get as a title. Among equals, the bigger hub, then the most recently compiled."""
    stripped = name.strip()
    rows = await conn.execute(text(f"""
        WITH matched AS (
            SELECT p.id, 1 AS rank, 'slug' AS how FROM wiki_pages p WHERE {_SCOPE} AND p.slug = :slug
            UNION ALL
            SELECT p.id, 2, 'alias' FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
            WHERE {_SCOPE} AND :alias <> '' AND a.alias = :alias
            UNION ALL
            SELECT p.id, 3, 'title' FROM wiki_pages p WHERE {_SCOPE} AND :slugified <> '' AND p.slug = :slugified
        ), best AS (
            SELECT DISTINCT ON (id) id, rank, how FROM matched ORDER BY id, rank
        )
        SELECT p.id, p.type, p.slug, p.title, b.how
        FROM best b JOIN wiki_pages p ON p.id = b.id
        ORDER BY b.rank, p.hubness_score DESC, p.last_compiled_at DESC NULLS LAST, p.type, p.slug
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "slug": stripped.lower(), "alias": normalize_alias(stripped),
           "slugified": slugify_title(stripped), "limit": limit})
    return [PageKey(id=row.id, type=row.type, slug=row.slug, title=row.title, how=row.how) for row in rows]


async def cited_memories(conn: AsyncConnection, tenant: str, owner: str, page_id: UUID, section: str | None,
                         limit: int) -> tuple[list[CitedMemory], int]:
    """The memories the page (or one of its sections) cites, newest first, and how many there are."""
    params = {"tenant": tenant, "owner": owner, "page": page_id, "section": section, "limit": limit}
    cited = f"""
        SELECT m.id, m.content, m.created_at,
               array_agg(DISTINCT s.section_slug ORDER BY s.section_slug) AS sections
        FROM wiki_page_sections s
        JOIN wiki_pages p ON p.id = s.page_id
        JOIN wiki_section_sources src ON src.section_id = s.id AND src.source_kind = 'memory_unit'
        JOIN memory_units m ON m.id = CASE WHEN src.source_ref ~* '^[0-9a-f]{{8}}-([0-9a-f]{{4}}-){{3}}[0-9a-f]{{12}}$'
                                           THEN CAST(src.source_ref AS uuid) END
                           AND m.tenant_id = p.tenant_id AND m.owner_id = p.owner_id
        WHERE s.page_id = :page AND {_SCOPE} AND (CAST(:section AS text) IS NULL OR s.section_slug = :section)
        GROUP BY m.id, m.content, m.created_at
    """
    total = (await conn.execute(text(f"SELECT count(*) FROM ({cited}) AS c"), params)).scalar_one()
    rows = await conn.execute(text(f"{cited} ORDER BY m.created_at DESC, m.id LIMIT :limit"), params)
    return [CitedMemory(id=row.id, content=row.content, occurred_at=row.created_at, sections=list(row.sections))
            for row in rows], int(total)


# One level of a walk in both directions at once: (way, page, neighbour) for the links out of the "out"
# frontier and into the "in" frontier, to active pages of the scope, ids as text (a walk compares and
# keys them as strings, and a cone has hundreds).
_LINKED_EACH_WAY = text(f"""
    SELECT DISTINCT 'out' AS way, l.from_page_id::text AS near, l.to_page_id::text AS far
    FROM wiki_page_links l JOIN wiki_pages p ON p.id = l.to_page_id
    WHERE l.from_page_id = ANY(CAST(:out_frontier AS uuid[])) AND {_SCOPE}
    UNION ALL
    SELECT DISTINCT 'in', l.to_page_id::text, l.from_page_id::text
    FROM wiki_page_links l JOIN wiki_pages p ON p.id = l.from_page_id
    WHERE l.to_page_id = ANY(CAST(:in_frontier AS uuid[])) AND {_SCOPE}
""")


async def linked_pages_each_way(conn: AsyncConnection, tenant: str, owner: str,
                                frontiers: dict[str, list[str]]) -> dict[str, list[tuple[str, str]]]:
    """One step of a walk in each direction of `frontiers` ("out": links out of those pages, "in":
    links into them), in one round trip: (page, neighbour) by direction, to active pages of the scope.
    Links of several kinds between two pages come back once."""
    rows = await conn.execute(_LINKED_EACH_WAY, {"tenant": tenant, "owner": owner,
                                                 "out_frontier": frontiers.get("out", []),
                                                 "in_frontier": frontiers.get("in", [])})
    pairs: dict[str, list[tuple[str, str]]] = {way: [] for way in frontiers}
    for way, near, far in rows:
        pairs[way].append((near, far))
    return pairs


class ConeRow(NamedTuple):
    """A page of a related call's cone: a plain row, since a cone has hundreds and none leaves the call."""

    id: str
    type: str
    slug: str
    title: str
    summary: str | None
    changed_at: datetime | None


_CONE_PAGES = text(f"""
    SELECT p.id::text, p.type, p.slug, p.title, p.summary, coalesce(p.last_compiled_at, p.updated_at)
    FROM wiki_pages p WHERE p.id = ANY(CAST(:ids AS uuid[])) AND {_SCOPE}
""")


async def cone_rows(conn: AsyncConnection, tenant: str, owner: str, ids: list[str]) -> dict[str, ConeRow]:
    """The active pages of the scope among `ids`, by id."""
    rows = await conn.execute(_CONE_PAGES, {"tenant": tenant, "owner": owner, "ids": ids})
    return {row[0]: ConeRow(*row) for row in rows}


async def compile_run_started_at(conn: AsyncConnection, tenant: str, owner: str, run_id: str) -> datetime | None:
    return (await conn.execute(text("""
        SELECT started_at FROM wiki_compile_jobs
        WHERE run_id = :run AND kind = 'compile' AND tenant_id = :tenant AND owner_id = :owner
    """), {"run": run_id, "tenant": tenant, "owner": owner})).scalar_one_or_none()


async def changed_pages(conn: AsyncConnection, tenant: str, owner: str, since: datetime,
                        after: tuple[datetime, UUID] | None, limit: int,
                        max_sources: int) -> tuple[list[PageChange], bool]:
    """Active pages created or changed (page row or any section) after `since`, oldest change first,
    keyset-paged after `after` = (changed_at, id); and whether more follow."""
    params = {"tenant": tenant, "owner": owner, "since": since, "limit": limit + 1,
              "after_at": after[0] if after else None, "after_id": after[1] if after else None}
    rows = (await conn.execute(text(f"""
        WITH touched AS (
            SELECT p.id FROM wiki_pages p WHERE {_SCOPE} AND p.updated_at > :since
            UNION
            SELECT s.page_id FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
            WHERE {_SCOPE} AND s.updated_at > :since
        ), changed AS (
            SELECT p.id, p.type, p.slug, p.title, p.summary, p.created_at,
                   greatest(p.updated_at, (SELECT max(s.updated_at) FROM wiki_page_sections s
                                           WHERE s.page_id = p.id)) AS changed_at
            FROM touched t JOIN wiki_pages p ON p.id = t.id
        )
        SELECT * FROM changed
        WHERE CAST(:after_at AS timestamptz) IS NULL
           OR (changed_at, id) > (CAST(:after_at AS timestamptz), CAST(:after_id AS uuid))
        ORDER BY changed_at, id
        LIMIT :limit
    """), params)).all()
    more = len(rows) > limit
    rows = rows[:limit]
    sections: dict[UUID, list[SectionChange]] = {}
    if rows:
        section_rows = await conn.execute(text("""
            SELECT s.page_id, s.section_slug, s.heading, s.created_at > :since AS added, s.updated_at,
                   coalesce((SELECT array_agg(src.source_ref ORDER BY src.first_seen_at, src.source_ref)
                             FROM wiki_section_sources src
                             WHERE src.section_id = s.id AND src.first_seen_at > :since), '{}') AS new_sources
            FROM wiki_page_sections s
            WHERE s.page_id = ANY(CAST(:pages AS uuid[])) AND s.updated_at > :since
            ORDER BY s.page_id, s.position, s.section_slug
        """), {"since": since, "pages": [row.id for row in rows]})
        for row in section_rows:
            sections.setdefault(row.page_id, []).append(SectionChange(
                slug=row.section_slug, heading=row.heading, change="added" if row.added else "rewritten",
                changed_at=row.updated_at, new_source_ids=list(row.new_sources)[:max_sources]))
    return [PageChange(id=row.id, type=row.type, slug=row.slug, title=row.title, summary=row.summary,
                       change="created" if row.created_at > since else "updated", changed_at=row.changed_at,
                       sections=sections.get(row.id, [])) for row in rows], more
