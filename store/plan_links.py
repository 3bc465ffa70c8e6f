"""The links a batch writes: the planner's, and the deterministic parent and co-mention ones.

Applied in the batch's transaction (store/plan_apply.py), after its pages and sections: a parent
link goes from an entity page the batch touched to its city or journal topic (domain/parents.py
candidates, found by exact title or by a title that is the candidate plus a region), a co-mention
link between entity pages citing the same memory (domain/links.py). All of them are `reference`
links written in one statement, each pair once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain import ids
from domain.links import (
    CO_MENTION_PREFIX,
    DETERMINISTIC_PREFIX,
    co_mention_context,
    co_mention_pairs,
    deterministic_link_context,
)
from domain.parents import (
    derive_parent_candidates,
    derive_parent_candidates_from_page_summaries,
    is_geo_qualified_extension,
)
from domain.plan import PageLink
from domain.resolved_plan import ResolvedPlan
from store.memories import load_memories

PARENT_TITLE_FUZZY_THRESHOLD = 0.5

# (from page id, to page id, context) of a `reference` link
Link = tuple[str, str, str | None]


@dataclass(frozen=True)
class LinksWritten:
    """New link pairs by the kind that proposed them first, and planner links to no page of the scope."""

    planner: int
    deterministic: int
    co_mention: int
    dropped_invalid_ids: int


@dataclass
class _Links:
    conn: AsyncConnection
    tenant: str
    owner: str
    touched: Mapping[str, list[str]]
    page_ids_by_key: dict[tuple[str, str], str]
    dropped_invalid_ids: int = 0


async def insert_reference_links(conn: AsyncConnection, links: Iterable[Link],
                                 planned_from: Sequence[str] = ()) -> set[tuple[str, str]]:
    """`reference` links in one statement; the (from, to) pairs it inserted. Self-links and pairs that
    exist already are left out, and a pair listed twice is written with its first context.

    Each link keeps the memories it rests on (`source_refs`, what a forget looks for): a co-mention
    link the memory its context names, any other link with a context `planned_from`, the memories of
    the plan that wrote it; none for a deterministic parent link (its context names pages only)."""
    contexts: dict[tuple[str, str], str | None] = {}
    for from_page, to_page, context in links:
        pair = (str(UUID(from_page)), str(UUID(to_page)))
        if pair[0] != pair[1]:
            contexts.setdefault(pair, context)
    if not contexts:
        return set()
    rows = await conn.execute(text("""
        INSERT INTO wiki_page_links (id, from_page_id, to_page_id, kind, context, source_refs)
        SELECT id, from_page_id, to_page_id, 'reference', context,
               CASE WHEN refs = '' THEN NULL ELSE string_to_array(refs, ' ') END
        FROM unnest(CAST(:ids AS uuid[]), CAST(:froms AS uuid[]), CAST(:tos AS uuid[]), CAST(:contexts AS text[]),
                    CAST(:refs AS text[]))
            AS linked(id, from_page_id, to_page_id, context, refs)
        ON CONFLICT (from_page_id, to_page_id, kind) DO NOTHING
        RETURNING from_page_id, to_page_id
    """), {"ids": [ids.link_id(UUID(f), UUID(t), "reference") for f, t in contexts],
           "froms": [f for f, _ in contexts], "tos": [t for _, t in contexts], "contexts": list(contexts.values()),
           "refs": [" ".join(link_sources(context, planned_from)) for context in contexts.values()]})
    return {(str(row.from_page_id), str(row.to_page_id)) for row in rows}


def link_sources(context: str | None, planned_from: Sequence[str]) -> list[str]:
    """The memories a new link rests on (see `insert_reference_links`)."""
    if context and context.startswith(CO_MENTION_PREFIX):
        return [context.removeprefix(CO_MENTION_PREFIX)]
    if context and context.startswith(DETERMINISTIC_PREFIX):
        return []
    return [str(ref) for ref in planned_from]


async def write_plan_links(conn: AsyncConnection, tenant: str, owner: str, plan: ResolvedPlan, *,
                           touched: Mapping[str, list[str]], page_ids_by_key: dict[tuple[str, str], str],
                           deterministic_linking: bool) -> LinksWritten:
    """The planner's links, then the deterministic parent and co-mention links, in one statement.

    `touched` maps each page the batch wrote to the memories its sections newly cite; `page_ids_by_key`
    holds the page ids the batch already knows by (type, slug), and gains those read here. A pair is
    counted once, by the first kind of link that proposes it, with that link's context: what writing
    the three kinds one after the other would count and keep."""
    state = _Links(conn=conn, tenant=tenant, owner=owner, touched=touched, page_ids_by_key=page_ids_by_key)
    planner_links = await _planner_links(state, plan.links)
    parent_links: list[Link] = []
    co_mention_links: list[Link] = []
    if deterministic_linking:
        parent_links = await _deterministic_parent_links(state, [UUID(m) for m in plan.memory_ids])
        co_mention_links = await _co_mention_links(state)
    inserted = await insert_reference_links(conn, [*planner_links, *parent_links, *co_mention_links],
                                            planned_from=[str(m) for m in plan.memory_ids])
    counted: set[tuple[str, str]] = set()
    return LinksWritten(planner=_newly_inserted(planner_links, inserted, counted),
                        deterministic=_newly_inserted(parent_links, inserted, counted),
                        co_mention=_newly_inserted(co_mention_links, inserted, counted),
                        dropped_invalid_ids=state.dropped_invalid_ids)


def _newly_inserted(links: list[Link], inserted: set[tuple[str, str]], counted: set[tuple[str, str]]) -> int:
    """How many of `links` were inserted, leaving out pairs already in `counted` (which it extends)."""
    pairs = {(str(UUID(f)), str(UUID(t))) for f, t, _ in links} - counted
    counted |= pairs
    return len(pairs & inserted)


async def _planner_links(state: _Links, links: list[PageLink]) -> list[Link]:
    """The plan's links between pages of this batch or active pages of the scope, by (type, slug)."""
    endpoints = [((link.fromType, link.fromSlug.strip()), (link.toType, link.toSlug.strip())) for link in links]
    unknown = list(dict.fromkeys(key for pair in endpoints for key in pair if key not in state.page_ids_by_key))
    if unknown:
        rows = await state.conn.execute(text("""
            SELECT p.id, p.type, p.slug FROM wiki_pages p
            JOIN unnest(CAST(:types AS text[]), CAST(:slugs AS text[])) AS wanted(type, slug)
              ON p.type = wanted.type AND p.slug = wanted.slug
            WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        """), {"tenant": state.tenant, "owner": state.owner, "types": [t for t, _ in unknown],
               "slugs": [s for _, s in unknown]})
        for row in rows:
            state.page_ids_by_key[(row.type, row.slug)] = str(row.id)
    resolved: list[Link] = []
    for link, (from_key, to_key) in zip(links, endpoints, strict=True):
        from_page, to_page = state.page_ids_by_key.get(from_key), state.page_ids_by_key.get(to_key)
        if from_page is None or to_page is None:
            state.dropped_invalid_ids += 1  # a link to a page that does not exist in this scope
            continue
        resolved.append((from_page, to_page, link.context))
    return resolved


async def _touched_pages(state: _Links) -> list[Any]:
    rows = await state.conn.execute(text("""
        SELECT p.id, p.type, p.title, p.summary,
               coalesce((SELECT array_agg(alias ORDER BY alias) FROM wiki_page_aliases WHERE page_id = p.id), '{}')
                   AS tags
        FROM wiki_pages p WHERE p.id = ANY(CAST(:ids AS uuid[])) ORDER BY p.slug
    """), {"ids": list(state.touched)})
    return list(rows)


async def _parent_pages(state: _Links, titles: list[str]) -> dict[str, Any]:
    """The parent page of each candidate title: the exact title (a topic first), else the most similar
    title that is the candidate plus a region ("Austin" -> "Austin, Texas")."""
    exact = await state.conn.execute(text("""
        SELECT DISTINCT ON (title) id, type, slug, title FROM wiki_pages
        WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active'
          AND title = ANY(CAST(:titles AS text[])) AND type IN ('topic', 'entity')
        ORDER BY title, (type = 'topic') DESC, slug
    """), {"tenant": state.tenant, "owner": state.owner, "titles": titles})
    parents = {row.title: row for row in exact}
    unmatched = [title for title in titles if title not in parents]
    if unmatched:
        fuzzy = await state.conn.execute(text("""
            SELECT candidate.title AS candidate, nearest.id, nearest.type, nearest.slug, nearest.title
            FROM unnest(CAST(:titles AS text[])) WITH ORDINALITY AS candidate(title, n)
            CROSS JOIN LATERAL (
                SELECT p.id, p.type, p.slug, p.title, similarity(p.title, candidate.title) AS score
                FROM wiki_pages p
                WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
                  AND p.type IN ('topic', 'entity')
                  AND p.title % candidate.title AND similarity(p.title, candidate.title) >= :threshold
                ORDER BY similarity(p.title, candidate.title) DESC, p.slug LIMIT 5
            ) AS nearest
            ORDER BY candidate.n, nearest.score DESC, nearest.slug
        """), {"tenant": state.tenant, "owner": state.owner, "titles": unmatched,
               "threshold": PARENT_TITLE_FUZZY_THRESHOLD})
        for row in fuzzy:
            if row.candidate not in parents and is_geo_qualified_extension(row.candidate, row.title):
                parents[row.candidate] = row
    return parents


async def _deterministic_parent_links(state: _Links, memory_ids: list[UUID]) -> list[Link]:
    """Entity leaf pages of this batch -> their city / journal topic, by the parent candidates of the
    batch's memories and of the touched pages' summaries."""
    if not state.touched:
        return []
    records = await load_memories(state.conn, state.tenant, state.owner, memory_ids)
    pages = await _touched_pages(state)
    entity_pages = [p for p in pages if p.type == "entity"]
    candidates = derive_parent_candidates(records) + derive_parent_candidates_from_page_summaries(
        [_SummaryPage(str(p.id), p.title, p.summary, list(p.tags)) for p in pages])
    if not candidates:
        return []
    parents = await _parent_pages(state, list(dict.fromkeys(c.parent_title for c in candidates)))
    links: list[Link] = []
    for candidate in candidates:
        parent = parents.get(candidate.parent_title)
        if parent is None:
            continue
        supporting = set(candidate.source_record_ids)
        if candidate.source_kind == "summary":
            leaves = [p for p in entity_pages if str(p.id) in supporting]
        else:
            leaves = [p for p in entity_pages if supporting & set(state.touched[str(p.id)])]
        context = deterministic_link_context(candidate.reason, parent.slug)
        links += [(str(leaf.id), str(parent.id), context) for leaf in leaves]
    return links


@dataclass
class _SummaryPage:
    id: str
    title: str
    summary: str | None
    tags: list[str]


async def _co_mention_links(state: _Links) -> list[Link]:
    """Entity pages citing the same memory link to each other, at most 10 directed edges per memory."""
    cited = sorted({ref for refs in state.touched.values() for ref in refs})
    if not cited:
        return []
    rows = await state.conn.execute(text("""
        SELECT DISTINCT s.source_ref, p.slug, p.id
        FROM wiki_section_sources s
        JOIN wiki_page_sections sec ON sec.id = s.section_id
        JOIN wiki_pages p ON p.id = sec.page_id
        WHERE s.source_kind = 'memory_unit' AND s.source_ref = ANY(CAST(:refs AS text[]))
          AND p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active' AND p.type = 'entity'
        ORDER BY s.source_ref, p.slug
    """), {"refs": cited, "tenant": state.tenant, "owner": state.owner})
    pages_by_memory: dict[str, list[tuple[str, str]]] = {}
    for row in rows:
        pages_by_memory.setdefault(row.source_ref, []).append((row.slug, str(row.id)))
    return [(from_page, to_page, co_mention_context(memory_id))
            for from_page, to_page, memory_id in co_mention_pairs(pages_by_memory)]
