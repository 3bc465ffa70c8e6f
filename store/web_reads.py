"""What the web view and the export read in bulk: the scope's counts, its recent and best-connected
pages, the link graph, the memories a page cites, the claims citing a memory, and every active page
whole for an export.

Every query is scoped by tenant AND owner, reads active pages only, and is bounded by a limit the
caller passes (the export reads the whole scope on purpose, in a few statements, never one per page).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from store.agent_reads import ConeRow
from store.wiki_reads import Backlink

_UUID_PATTERN = "^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$"


class ScopeCounts(BaseModel):
    pages_by_type: dict[str, int]
    memories: int
    claims: int
    links: int
    runs: int
    # Claims and links are counted exactly up to SAMPLED_PAGES active pages; past that, on a sample of
    # about that many pages (by a hash of their id) and scaled to the whole: the number of pages
    # sampled, None when exact.
    estimated_from: int | None = None


class PageCard(BaseModel):
    """A page as a list shows it."""

    id: UUID
    type: str
    slug: str
    title: str
    summary: str | None
    hubness: int
    updated_at: datetime


class GraphEdge(BaseModel):
    source: UUID
    target: UUID
    kind: str


class CitedText(BaseModel):
    """A memory a claim cites: its text and date (both None when the memory is gone)."""

    id: str
    dated: datetime | None
    content: str | None


class ClaimCiting(BaseModel):
    """A claim that cites a memory, with where it stands."""

    page_type: str
    page_slug: str
    page_title: str
    section_slug: str
    heading: str
    text: str
    status: str
    confidence: float | None  # None: a derived or unverified line


SAMPLED_PAGES = 300


async def scope_counts(conn: AsyncConnection, tenant: str, owner: str,
                       sampled_pages: int = SAMPLED_PAGES) -> ScopeCounts:
    """Pages by type, memories and compile runs counted exactly (index scans of the scope); claims and
    links on active pages exactly up to `sampled_pages` pages, estimated from a sample beyond (their
    count would read every claim and link of the scope)."""
    params = {"tenant": tenant, "owner": owner}
    by_type: dict[str, int] = {row.type: row.pages for row in await conn.execute(text("""
        SELECT type, count(*) AS pages FROM wiki_pages
        WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active' GROUP BY type
    """), params)}
    pages = sum(by_type.values())
    stride = max(1, -(-pages // sampled_pages))  # every page when they are few; about sampled_pages else
    row = (await conn.execute(text("""
        WITH sampled AS (
            SELECT p.id FROM wiki_pages p
            WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
              AND (:stride = 1 OR abs(hashtext(p.id::text)) % :stride = 0)
        )
        SELECT (SELECT count(*) FROM memory_units WHERE tenant_id = :tenant AND owner_id = :owner) AS memories,
               (SELECT count(*) FROM sampled) AS sampled,
               (SELECT count(*) FROM sampled p JOIN wiki_page_sections s ON s.page_id = p.id
                JOIN wiki_section_claims c ON c.section_id = s.id) AS claims,
               (SELECT count(*) FROM sampled p JOIN wiki_page_links l ON l.from_page_id = p.id) AS links,
               (SELECT count(*) FROM wiki_compile_jobs
                WHERE kind = 'compile' AND tenant_id = :tenant AND owner_id = :owner) AS runs
    """), {**params, "stride": stride})).one()
    if stride == 1 or not row.sampled:
        return ScopeCounts(pages_by_type=by_type, memories=row.memories, claims=row.claims, links=row.links,
                           runs=row.runs)
    return ScopeCounts(pages_by_type=by_type, memories=row.memories, claims=round(row.claims * pages / row.sampled),
                       links=round(row.links * pages / row.sampled), runs=row.runs, estimated_from=row.sampled)


_CARD_COLUMNS = "p.id, p.type, p.slug, p.title, p.summary, p.hubness_score AS hubness, p.updated_at"


def _cards(rows: Any) -> list[PageCard]:
    return [PageCard(**row._mapping) for row in rows]


async def recent_pages(conn: AsyncConnection, tenant: str, owner: str, limit: int) -> list[PageCard]:
    """The active pages changed last, newest first."""
    return _cards(await conn.execute(text(f"""
        SELECT {_CARD_COLUMNS} FROM wiki_pages p
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY p.updated_at DESC, p.id LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "limit": limit}))


async def hub_pages(conn: AsyncConnection, tenant: str, owner: str, limit: int) -> list[PageCard]:
    """The active pages with the highest hubness (the aggregation pass's score), best first."""
    return _cards(await conn.execute(text(f"""
        SELECT {_CARD_COLUMNS} FROM wiki_pages p
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active' AND p.hubness_score > 0
        ORDER BY p.hubness_score DESC, p.title, p.id LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "limit": limit}))


async def best_connected_pages(conn: AsyncConnection, tenant: str, owner: str, limit: int) -> list[PageCard]:
    """The `limit` active pages with the highest hubness (the aggregation pass's score: the reference
    links into a page, the pages it is the parent of, the support of its sections), then by title:
    read from the scope's hubness index, never counting the scope's links."""
    return _cards(await conn.execute(text(f"""
        SELECT {_CARD_COLUMNS} FROM wiki_pages p
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY p.hubness_score DESC, p.title, p.id LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "limit": limit}))


async def pages_in_order(conn: AsyncConnection, tenant: str, owner: str, limit: int, offset: int) -> list[PageCard]:
    """Active pages by type and slug, a window of `limit` from `offset`."""
    return _cards(await conn.execute(text(f"""
        SELECT {_CARD_COLUMNS} FROM wiki_pages p
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY p.type, p.slug LIMIT :limit OFFSET :offset
    """), {"tenant": tenant, "owner": owner, "limit": limit, "offset": offset}))


async def active_page_count(conn: AsyncConnection, tenant: str, owner: str) -> int:
    return (await conn.execute(text("""
        SELECT count(*) FROM wiki_pages WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active'
    """), {"tenant": tenant, "owner": owner})).scalar_one()


async def links_among(conn: AsyncConnection, tenant: str, owner: str, page_ids: Sequence[UUID]) -> list[GraphEdge]:
    """The links between the given pages of the scope (both ends among them), through the links'
    (from, to, kind) key; the pages' scope is checked once per page rather than per link."""
    rows = await conn.execute(text("""
        SELECT l.from_page_id, l.to_page_id, l.kind
        FROM wiki_page_links l
        WHERE l.from_page_id = ANY(ARRAY(SELECT p.id FROM wiki_pages p WHERE p.id = ANY(:ids)
                                         AND p.tenant_id = :tenant AND p.owner_id = :owner))
          AND l.to_page_id = ANY(:ids)
        ORDER BY l.from_page_id, l.to_page_id, l.kind
    """), {"tenant": tenant, "owner": owner, "ids": list(page_ids)})
    return [GraphEdge(source=row.from_page_id, target=row.to_page_id, kind=row.kind) for row in rows]


class PageSurroundings(BaseModel):
    """What a page view shows around the page's own text, read in one statement."""

    cited: dict[str, CitedText]  # the scope's memories its sections and claims cite, by id
    backlinks: list[Backlink]
    levels: dict[str, list[list[tuple[UUID, UUID]]]]  # by way ("out", "in"): each level's (page, neighbour)
    cards: dict[str, ConeRow]  # every neighbour walked, by id


_LEVEL = """
    SELECT DISTINCT l.{near} AS near, l.{far} AS far, p.type, p.slug, p.title, p.summary,
           coalesce(p.last_compiled_at, p.updated_at) AS changed_at
    FROM wiki_page_links l JOIN wiki_pages p ON p.id = l.{far}
    WHERE l.{near} {frontier} AND p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
"""
_WAYS = {"out": ("from_page_id", "to_page_id"), "in": ("to_page_id", "from_page_id")}
_LEVELS = ", ".join(f"{way}1 AS ({_LEVEL.format(near=near, far=far, frontier='= :page')}), "
                    f"{way}2 AS ({_LEVEL.format(near=near, far=far, frontier=f'IN (SELECT far FROM {way}1)')})"
                    for way, (near, far) in _WAYS.items())
_SURROUNDINGS = f"""
    WITH {_LEVELS},
    walked AS (
        SELECT 'out' AS way, 1 AS level, * FROM out1 UNION ALL SELECT 'out', 2, * FROM out2
        UNION ALL SELECT 'in', 1, * FROM in1 UNION ALL SELECT 'in', 2, * FROM in2
    ), refs AS (
        SELECT src.source_ref AS ref FROM wiki_section_sources src
        JOIN wiki_page_sections s ON s.id = src.section_id WHERE s.page_id = :page
        UNION
        SELECT cs.memory_id FROM wiki_claim_sources cs JOIN wiki_section_claims c ON c.id = cs.claim_id
        JOIN wiki_page_sections s ON s.id = c.section_id WHERE s.page_id = :page
    )
    SELECT
        (SELECT coalesce(jsonb_agg(to_jsonb(w)), '[]') FROM walked w) AS walked,
        (SELECT coalesce(jsonb_agg(jsonb_build_object('id', m.id, 'dated', m.created_at, 'content', m.content)), '[]')
         FROM memory_units m
         WHERE m.tenant_id = :tenant AND m.owner_id = :owner
           AND m.id = ANY(ARRAY(SELECT CAST(ref AS uuid) FROM refs WHERE ref ~ '{_UUID_PATTERN}'))) AS cited,
        (SELECT coalesce(jsonb_agg(jsonb_build_object('kind', l.kind, 'context', l.context, 'from_type', f.type,
                                                      'from_slug', f.slug, 'from_title', f.title)
                                   ORDER BY l.kind = 'reference' DESC, l.kind, f.type, f.slug), '[]')
         FROM wiki_page_links l JOIN wiki_pages f ON f.id = l.from_page_id
         WHERE l.to_page_id = :page AND f.tenant_id = :tenant AND f.owner_id = :owner AND f.status = 'active')
            AS backlinks
"""


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


async def page_surroundings(conn: AsyncConnection, tenant: str, owner: str, page_id: UUID) -> PageSurroundings:
    """The memories a page of the scope cites, the active pages linking to it (references first), and
    the walk around it two links deep each way (the second level's frontier is the pages the first
    reached; links to or from pages not active in the scope are not followed). The caller has found
    the page in the scope."""
    row = (await conn.execute(text(_SURROUNDINGS), {"tenant": tenant, "owner": owner, "page": page_id})).one()
    levels: dict[str, list[list[tuple[UUID, UUID]]]] = {way: [[], []] for way in _WAYS}
    cards: dict[str, ConeRow] = {}
    for walked in _json(row.walked):
        levels[walked["way"]][walked["level"] - 1].append((UUID(walked["near"]), UUID(walked["far"])))
        changed_at = walked["changed_at"]
        cards[walked["far"]] = ConeRow(id=walked["far"], type=walked["type"], slug=walked["slug"], title=walked["title"],
                                       summary=walked["summary"],
                                       changed_at=datetime.fromisoformat(changed_at) if changed_at else None)
    cited = {memory["id"]: CitedText.model_validate(memory) for memory in _json(row.cited)}
    return PageSurroundings(cited=cited, backlinks=[Backlink.model_validate(link) for link in _json(row.backlinks)],
                            levels=levels, cards=cards)


def _is_uuid(ref: str) -> bool:
    try:
        return str(UUID(ref)) == ref
    except ValueError:
        return False


async def claims_citing(conn: AsyncConnection, tenant: str, owner: str, memory_id: str) -> list[ClaimCiting]:
    """Every claim of an active page of the scope that cites the memory."""
    rows = await conn.execute(text("""
        SELECT p.type, p.slug, p.title, s.section_slug, s.heading, c.text, c.status, c.confidence
        FROM wiki_claim_sources cs
        JOIN wiki_section_claims c ON c.id = cs.claim_id
        JOIN wiki_page_sections s ON s.id = c.section_id
        JOIN wiki_pages p ON p.id = s.page_id
        WHERE cs.tenant_id = :tenant AND cs.owner_id = :owner AND cs.memory_id = :memory
          AND p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY p.type, p.slug, s.position, c.position
    """), {"tenant": tenant, "owner": owner, "memory": memory_id})
    return [ClaimCiting(page_type=r.type, page_slug=r.slug, page_title=r.title, section_slug=r.section_slug,
                        heading=r.heading, text=r.text, status=r.status,
                        confidence=None if r.confidence is None else float(r.confidence))
            for r in rows]


# ------------------------------------------------------------------------------------------ the export


class ExportClaim(BaseModel):
    text: str
    kind: str
    status: str
    confidence: float | None  # None: a derived or unverified line
    sources: list[str]
    validity: str = "current"  # current, superseded (an older value, history) or disputed
    valid_from: datetime | None = None
    valid_to: datetime | None = None  # when a superseded claim stopped holding


class ExportSection(BaseModel):
    slug: str
    heading: str
    body_md: str
    sources: list[str]
    claims: list[ExportClaim]


class ExportPage(BaseModel):
    id: UUID
    type: str
    slug: str
    title: str
    summary: str | None
    aliases: list[str]
    tags: list[str]
    parent: str | None  # TYPE/SLUG of the parent page when it is active
    hubness: int
    updated_at: datetime
    links: list[str]  # TYPE/SLUG of the active pages it links to (references), sorted
    sections: list[ExportSection]


async def export_pages(conn: AsyncConnection, tenant: str, owner: str) -> list[ExportPage]:
    """Every active page of the scope whole, sorted by type and slug: four statements for the scope."""
    params = {"tenant": tenant, "owner": owner}
    pages = (await conn.execute(text("""
        SELECT p.id, p.type, p.slug, p.title, p.summary, p.tags, p.hubness_score, p.updated_at,
               CASE WHEN parent.status = 'active' THEN parent.type || '/' || parent.slug END AS parent,
               coalesce((SELECT array_agg(a.alias ORDER BY a.alias COLLATE "C") FROM wiki_page_aliases a
                         WHERE a.page_id = p.id), '{}') AS aliases,
               coalesce((SELECT array_agg(DISTINCT t.type || '/' || t.slug) FROM wiki_page_links l
                         JOIN wiki_pages t ON t.id = l.to_page_id
                         WHERE l.from_page_id = p.id AND t.status = 'active'
                           AND t.tenant_id = :tenant AND t.owner_id = :owner), '{}') AS links
        FROM wiki_pages p LEFT JOIN wiki_pages parent
             ON parent.id = p.parent_page_id AND parent.tenant_id = :tenant AND parent.owner_id = :owner
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY p.type COLLATE "C", p.slug COLLATE "C"
    """), params)).all()
    sections = (await conn.execute(text("""
        SELECT s.id, s.page_id, s.section_slug, s.heading, s.body_md,
               coalesce((SELECT array_agg(src.source_ref ORDER BY src.source_ref COLLATE "C")
                         FROM wiki_section_sources src WHERE src.section_id = s.id), '{}') AS sources
        FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY s.page_id, s.position, s.section_slug COLLATE "C"
    """), params)).all()
    claims = (await conn.execute(text("""
        SELECT c.section_id, c.text, c.kind, c.status, c.confidence, c.validity, c.valid_from, c.valid_to,
               coalesce((SELECT array_agg(cs.memory_id ORDER BY cs.memory_id COLLATE "C") FROM wiki_claim_sources cs
                         WHERE cs.claim_id = c.id), '{}') AS sources
        FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id
        JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY c.section_id, c.position
    """), params)).all()
    claims_of: dict[UUID, list[ExportClaim]] = {}
    for row in claims:
        claims_of.setdefault(row.section_id, []).append(ExportClaim(
            text=row.text, kind=row.kind, status=row.status,
            confidence=None if row.confidence is None else float(row.confidence),
            sources=list(row.sources), validity=row.validity, valid_from=row.valid_from, valid_to=row.valid_to))
    sections_of: dict[UUID, list[ExportSection]] = {}
    for row in sections:
        sections_of.setdefault(row.page_id, []).append(ExportSection(
            slug=row.section_slug, heading=row.heading, body_md=row.body_md, sources=list(row.sources),
            claims=claims_of.get(row.id, [])))
    return [ExportPage(id=row.id, type=row.type, slug=row.slug, title=row.title, summary=row.summary,
                       aliases=list(row.aliases), tags=sorted(row.tags), parent=row.parent, hubness=row.hubness_score,
                       updated_at=row.updated_at, links=sorted(row.links), sections=sections_of.get(row.id, []))
            for row in pages]


class ExportMemory(BaseModel):
    id: str
    dated: datetime
    content: str
    metadata: dict[str, Any]


async def export_memories(conn: AsyncConnection, tenant: str, owner: str, ids: Sequence[str]) -> list[ExportMemory]:
    """The scope's memories among `ids`, sorted by id."""
    wanted = sorted({ref for ref in ids if _is_uuid(ref)})
    if not wanted:
        return []
    rows = await conn.execute(text("""
        SELECT id, created_at, content, CAST(metadata AS text) AS metadata FROM memory_units
        WHERE tenant_id = :tenant AND owner_id = :owner AND id = ANY(CAST(:ids AS uuid[]))
        ORDER BY id
    """), {"tenant": tenant, "owner": owner, "ids": wanted})
    return [ExportMemory(id=str(row.id), dated=row.created_at, content=row.content, metadata=json.loads(row.metadata))
            for row in rows]
