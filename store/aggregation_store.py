"""Reads and writes of the aggregation pass: the pages it considers, hubs, rollups, hubness.

The pass's plan itself is resolved in `store/aggregation_resolution.py` and its leaf-like writes
(pages, sections, sources) go through `store/plan_apply.py`, its links through `store/plan_links.py`;
what is particular to aggregation is here: parent edges mirrored as links, section aggregation
metadata scored from the section's own provenance, and hubness recomputed for every page the pass
touched.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain import ids
from domain.aggregation import (
    MAX_AGGREGATION_PAGES,
    SectionAggregation,
    hubness_score,
    merge_section_aggregation,
    next_promotion_status,
    score_section_aggregation,
)
from domain.context import AggregationPage, AggregationParentCandidate
from domain.resolved_plan import PromotedAggregation, ResolvedPlan, RollupAggregation
from messages.compile import AggregationApplyResult
from store.plan_links import insert_reference_links

MAX_CHILD_CANDIDATES = 500

_PAGES_WITH_SECTIONS_SQL = """
    SELECT p.id, p.type, p.slug, p.title, p.summary, p.parent_page_id, p.hubness_score,
           coalesce((SELECT array_agg(alias ORDER BY alias) FROM wiki_page_aliases WHERE page_id = p.id), '{}') AS tags,
           coalesce((SELECT json_agg(json_build_object('slug', s.section_slug, 'heading', s.heading,
                                                       'body_md', s.body_md, 'aggregation', s.aggregation)
                                     ORDER BY s.position)
                     FROM wiki_page_sections s WHERE s.page_id = p.id), '[]') AS sections
    FROM wiki_pages p
"""


def _aggregation_page(row: Any) -> AggregationPage:
    return AggregationPage(id=row.id, type=row.type, slug=row.slug, title=row.title, summary=row.summary,
                           parent_page_id=row.parent_page_id, hubness_score=row.hubness_score, tags=list(row.tags),
                           sections=row.sections)


async def changed_pages(conn: AsyncConnection, tenant: str, owner: str, page_ids: list[Any]) -> list[AggregationPage]:
    """The run's changed pages with their sections, most recently touched first (at most 60)."""
    rows = await conn.execute(text(_PAGES_WITH_SECTIONS_SQL + """
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
          AND p.id = ANY(CAST(:ids AS uuid[]))
        ORDER BY array_position(CAST(:ids AS uuid[]), p.id) DESC LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "ids": [str(i) for i in page_ids], "limit": MAX_AGGREGATION_PAGES})
    return [_aggregation_page(row) for row in rows]


async def inbound_link_counts(conn: AsyncConnection, pages: list[AggregationPage]) -> dict[str, int]:
    rows = await conn.execute(text("""
        SELECT to_page_id, count(*) FROM wiki_page_links WHERE to_page_id = ANY(CAST(:ids AS uuid[]))
        GROUP BY to_page_id ORDER BY count(*) DESC
    """), {"ids": [str(p.id) for p in pages]})
    return {str(page_id): count for page_id, count in rows.all()}


async def possible_children(conn: AsyncConnection, tenant: str, owner: str,
                            candidates: list[AggregationParentCandidate]) -> list[AggregationPage]:
    """Pages that could sit under a candidate hub: they name its place in their title or summary."""
    cores = sorted({c.parent_title.split(",")[0].strip() for c in candidates if c.parent_title.strip()})
    if not cores:
        return []
    rows = await conn.execute(text(_PAGES_WITH_SECTIONS_SQL + """
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
          AND EXISTS (SELECT 1 FROM unnest(CAST(:cores AS text[])) core
                      WHERE p.title ILIKE '%' || core || '%' OR p.summary ILIKE '%' || core || '%')
        ORDER BY p.slug LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "cores": cores, "limit": MAX_CHILD_CANDIDATES})
    return [_aggregation_page(row) for row in rows]


async def apply_aggregation_extras(conn: AsyncConnection, tenant: str, owner: str, plan: ResolvedPlan,
                                   result: AggregationApplyResult, touched: set[str]) -> None:
    """What an aggregation plan writes beyond pages and sections (`apply_resolved_plan` wrote those):
    its links by id, parent edges, section aggregation metadata, and the hubness of every page the
    pass touched (`touched`, extended here)."""
    inserted = await insert_reference_links(
        conn, [(link.from_page_id, link.to_page_id, link.context) for link in plan.id_links])
    result.links_upserted += len(inserted)
    for edge in plan.hierarchy:
        await _set_parent(conn, tenant, owner, edge.parent_id, edge.child_id)
        touched |= {edge.parent_id, edge.child_id}
    now = (await conn.execute(text("SELECT now()"))).scalar_one()
    for aggregation in plan.aggregations:
        if await _update_section_aggregation(conn, tenant, owner, aggregation, now):
            if isinstance(aggregation, PromotedAggregation):
                result.sections_promoted += 1
            else:
                result.parent_sections_updated += 1
        touched.add(aggregation.page_id)
    result.hubs_rescored = await _recompute_hubness(conn, sorted(touched))


async def _set_parent(conn: AsyncConnection, tenant: str, owner: str, parent_id: str, child_id: str) -> None:
    """parent_page_id on the child, mirrored as parent_of / child_of links; the links of a previous
    parent are removed."""
    previous = (await conn.execute(text("""
        SELECT parent_page_id FROM wiki_pages WHERE id = :child AND tenant_id = :tenant AND owner_id = :owner
    """), {"child": child_id, "tenant": tenant, "owner": owner})).scalar_one_or_none()
    if previous is not None and str(previous) != parent_id:
        await conn.execute(text("""
            DELETE FROM wiki_page_links WHERE (from_page_id = :old AND to_page_id = :child AND kind = 'parent_of')
               OR (from_page_id = :child AND to_page_id = :old AND kind = 'child_of')
        """), {"old": previous, "child": child_id})
    await conn.execute(text("""
        UPDATE wiki_pages SET parent_page_id = :parent WHERE id = :child AND tenant_id = :tenant AND owner_id = :owner
    """), {"parent": parent_id, "child": child_id, "tenant": tenant, "owner": owner})
    for from_page, to_page, kind in ((parent_id, child_id, "parent_of"), (child_id, parent_id, "child_of")):
        await conn.execute(text("""
            INSERT INTO wiki_page_links (id, from_page_id, to_page_id, kind) VALUES (:id, :from_page, :to_page, :kind)
            ON CONFLICT (from_page_id, to_page_id, kind) DO NOTHING
        """), {"id": ids.link_id(from_page, to_page, kind), "from_page": from_page, "to_page": to_page, "kind": kind})


async def _update_section_aggregation(conn: AsyncConnection, tenant: str, owner: str,
                                      aggregation: RollupAggregation | PromotedAggregation,
                                      now: datetime) -> bool:
    section = (await conn.execute(text("""
        SELECT id, body_md, aggregation FROM wiki_page_sections WHERE page_id = :page AND section_slug = :slug
          AND page_id IN (SELECT id FROM wiki_pages WHERE tenant_id = :tenant AND owner_id = :owner)
        FOR UPDATE
    """), {"page": aggregation.page_id, "slug": aggregation.section_slug, "tenant": tenant,
           "owner": owner})).first()
    if section is None:
        return False
    current = SectionAggregation.model_validate(section.aggregation or {})
    if isinstance(aggregation, PromotedAggregation):
        merged = merge_section_aggregation(current, {"promotion_status": "promoted",
                                                     "promoted_page_id": aggregation.promoted_page_id})
    else:
        # Supporting records and their time span come from the section's own provenance rows, so a
        # replayed or repeated pass never double counts, and the spread is the evidence's, not the
        # compile's (a bootstrap of months of memories is not "0 days" of evidence). A memory id is
        # unique only within its scope, so the join keys on the scope as well as the id.
        evidence = (await conn.execute(text("""
            SELECT count(*) AS records, min(m.created_at) AS first_at, max(m.created_at) AS last_at
            FROM wiki_section_sources s
            LEFT JOIN memory_units m ON m.tenant_id = :tenant AND m.owner_id = :owner AND m.id::text = s.source_ref
            WHERE s.section_id = :section AND s.source_kind = 'memory_unit'
        """), {"section": section.id, "tenant": tenant, "owner": owner})).one()
        patch: dict[str, Any] = {
            "linked_page_ids": aggregation.linked_page_ids,
            "supporting_record_count": evidence.records,
            "first_source_at": evidence.first_at.isoformat() if evidence.first_at else current.first_source_at,
            "last_source_at": evidence.last_at.isoformat() if evidence.last_at else now.isoformat(),
        }
        if aggregation.observed_tags:
            patch["observed_tags"] = aggregation.observed_tags
        merged = merge_section_aggregation(current, patch)
        score = score_section_aggregation(merged, section.body_md, aggregation.child_tags, now)
        merged = merged.model_copy(update={"promotion_score": score.score,
                                           "promotion_status": next_promotion_status(current.promotion_status,
                                                                                     score.status)})
    await conn.execute(text("UPDATE wiki_page_sections SET aggregation = CAST(:agg AS jsonb) WHERE id = :id"),
                       {"id": section.id, "agg": merged.model_dump_json()})
    return True


async def _recompute_hubness(conn: AsyncConnection, page_ids: list[str]) -> int:
    if not page_ids:
        return 0
    rows = await conn.execute(text("""
        SELECT p.id,
               (SELECT count(*) FROM wiki_page_links l WHERE l.to_page_id = p.id AND l.kind = 'reference') AS inbound,
               (SELECT count(*) FROM wiki_pages c WHERE c.parent_page_id = p.id) AS children,
               (SELECT avg((s.aggregation->>'supporting_record_count')::int) FROM wiki_page_sections s
                WHERE s.page_id = p.id AND s.aggregation ? 'supporting_record_count') AS avg_supporting
        FROM wiki_pages p WHERE p.id = ANY(CAST(:ids AS uuid[]))
    """), {"ids": page_ids})
    updates = [{"id": row.id, "score": hubness_score(row.inbound, row.children,
                                                      float(row.avg_supporting) if row.avg_supporting else None)}
               for row in rows]
    if updates:
        await conn.execute(text("UPDATE wiki_pages SET hubness_score = :score WHERE id = :id"), updates)
    return len(updates)
