"""Resolve an aggregation plan against the scope before anything is written.

- Hub pages are topic pages and never duplicate a page of the same slug or exact title
  (`duplicate_candidates_cross_type`); they skip the leaf pass's alias merge (a hub named like an
  entity is a different page, counted, not merged into it).
- Rollups: children must be pages of the scope, are claimed once per parent (first section wins),
  and must show evidence of membership (`domain.aggregation.membership_evidence`: a city hub's
  children name the city in their title or summary), so an "Austin restaurants" section can never
  list a Toronto restaurant whatever the model says. With children, the body is the deterministic
  rollup list; without, the section writer drafts it from the proposal.
- Section promotion only for sections that are not promoted yet and score promote_ready now.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.aggregation import (
    SectionAggregation,
    is_promotable,
    membership_evidence,
    score_section_aggregation,
)
from domain.aliases import format_heading_from_slug, seed_aliases_for_title, slugify_title
from domain.guards import is_meaningful_change, is_valid_uuid
from domain.ids import page_id as deterministic_page_id
from domain.plan import LinkedPageRef, ParentSectionUpdate, Plan, SectionPromotion
from domain.render import render_promoted_parent_section, render_rollup_list
from domain.resolved_plan import (
    DirectSection,
    HierarchyEdge,
    IdLink,
    PromotedAggregation,
    ResolvedPlan,
    RollupAggregation,
)
from messages.compile import AggregationResolveResult, ResolvePlanResult
from store.plan_resolution import (
    Resolution,
    add_aliases,
    add_section,
    add_writer_task,
    cite_only,
    page_by_type_slug,
    page_entry,
    scope_pages_by_id,
    section_refs,
    sections_of,
)


async def resolve_aggregation(conn: AsyncConnection, tenant: str, owner: str, plan_id: UUID, plan: Plan,
                              run_memory_ids: list[str], now: datetime) -> tuple[ResolvedPlan, AggregationResolveResult]:
    res = Resolution(tenant=tenant, owner=owner, batch_ids=run_memory_ids, now=now,
                     result=ResolvePlanResult(plan_id=plan_id))
    outcome = AggregationResolveResult(plan_id=plan_id)
    aggregations: list[RollupAggregation | PromotedAggregation] = []
    hierarchy: list[HierarchyEdge] = []
    await _resolve_hubs(conn, res, plan, outcome)
    named = [u.pageId for u in plan.parentSectionUpdates] + [u.pageId for u in plan.sectionPromotions]
    parents = await scope_pages_by_id(
        conn, res, [page_id.strip().lower() for page_id in named if is_valid_uuid(page_id.strip())])

    def parent_named(page_id: str) -> Any:
        """The scope's page the plan names as a parent; a name of no such page is dropped and counted."""
        parent = parents.get(page_id.strip().lower())
        if parent is None:
            outcome.dropped_invalid_ids += 1
        return parent

    claimed: dict[str, set[str]] = {}
    for update in plan.parentSectionUpdates:
        if (parent := parent_named(update.pageId)) is not None:
            await _resolve_rollup(conn, res, parent, update, claimed, aggregations, outcome)
    for promotion in plan.sectionPromotions:
        if (parent := parent_named(promotion.pageId)) is not None:
            await _resolve_section_promotion(conn, res, parent, promotion, aggregations, hierarchy, outcome)
    outcome.section_tasks = list(res.tasks)
    outcome.dropped_invalid_ids += res.result.dropped_invalid_ids
    return res.resolved_plan(plan.pageLinks, hierarchy=hierarchy, aggregations=aggregations), outcome


async def _resolve_hubs(conn: AsyncConnection, res: Resolution, plan: Plan, outcome: AggregationResolveResult) -> None:
    for hub in plan.newPages:
        if hub.type != "topic":
            outcome.dropped_invalid_ids += 1  # the aggregation planner may only create hub topics
            continue
        slug = slugify_title(hub.title) or slugify_title(hub.slug) or hub.slug.strip()
        # The hub exists already (whatever its status) under the slug it would get or the one the
        # planner named ("austin" titled "Austin Texas"): nothing to create.
        if any([await page_by_type_slug(conn, res, "topic", s) is not None for s in (slug, hub.slug.strip())]):
            continue
        same_title = (await conn.execute(text("""
            SELECT 1 FROM wiki_pages WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active'
              AND title = :title LIMIT 1
        """), {"tenant": res.tenant, "owner": res.owner, "title": hub.title.strip()})).first()
        if same_title is not None:
            outcome.duplicate_candidates_cross_type += 1
            continue
        entry = page_entry(res, page_id=str(deterministic_page_id(res.tenant, res.owner, "topic", slug)),
                            page_type="topic", slug=slug, title=hub.title.strip(), summary=hub.summary,
                            mode="create", keep_title=False)
        add_aliases(entry, [*seed_aliases_for_title(hub.title), *hub.aliases])
        # A hub says what its members are: it cites their memories, when the plan names members.
        members = await _children(conn, res, [LinkedPageRef(type=link.toType, slug=link.toSlug)
                                              for link in plan.pageLinks
                                              if link.fromType == "topic" and link.fromSlug.strip() in (slug, hub.slug)])
        member_refs = await member_memories(conn, res, [str(child.id) for child in members])
        page_refs = member_refs or res.cite(hub.source_refs)
        for section in hub.sections:
            add_section(res, entry, {}, slug=section.slug, heading=section.heading, body=section.body_md,
                        refs=page_refs if member_refs else section_refs(res, section, page_refs))
        res.redirect("topic", [slug, hub.slug.strip()], entry)


async def _children(conn: AsyncConnection, res: Resolution, refs: list[LinkedPageRef]) -> list[Any]:
    keys = [(ref.type, ref.slug.strip()) for ref in refs]
    if not keys:
        return []
    rows = await conn.execute(text("""
        SELECT id, type, slug, title, summary,
               coalesce((SELECT array_agg(alias ORDER BY alias) FROM wiki_page_aliases WHERE page_id = p.id), '{}')
                   AS aliases
        FROM wiki_pages p
        WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active'
          AND (type || '/' || slug) = ANY(CAST(:keys AS text[]))
    """), {"tenant": res.tenant, "owner": res.owner, "keys": [f"{t}/{s}" for t, s in keys]})
    by_key = {(row.type, row.slug): row for row in rows}
    return [by_key[key] for key in dict.fromkeys(keys) if key in by_key]


async def member_memories(conn: AsyncConnection, res: Resolution, page_ids: list[str]) -> list[str]:
    """The memories the member pages' sections cite (each once, in id order): what a list of them
    is evidence of. Only pages of this scope count."""
    if not page_ids:
        return []
    rows = await conn.execute(text("""
        SELECT DISTINCT src.source_ref FROM wiki_section_sources src
        JOIN wiki_page_sections s ON s.id = src.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.id = ANY(CAST(:ids AS uuid[]))
          AND src.source_kind = 'memory_unit'
        ORDER BY src.source_ref
    """), {"tenant": res.tenant, "owner": res.owner, "ids": page_ids})
    return [row.source_ref for row in rows]


async def _cited_by(conn: AsyncConnection, page_id: str, slug: str) -> list[str]:
    rows = await conn.execute(text("""
        SELECT src.source_ref FROM wiki_section_sources src JOIN wiki_page_sections s ON s.id = src.section_id
        WHERE s.page_id = :page AND s.section_slug = :slug AND src.source_kind = 'memory_unit'
    """), {"page": page_id, "slug": slug})
    return [row.source_ref for row in rows]


async def _resolve_rollup(conn: AsyncConnection, res: Resolution, parent: Any, update: ParentSectionUpdate,
                          claimed: dict[str, set[str]], aggregations: list[RollupAggregation | PromotedAggregation],
                          outcome: AggregationResolveResult) -> None:
    parent_id = str(parent.id)
    taken = claimed.setdefault(parent_id, set())
    # A promoted child page ("Austin Restaurants") keeps the rollup; its members are still Austin's.
    hub_place = parent.title
    if parent.parent_page_id is not None:
        hub_place = (await conn.execute(text("SELECT title FROM wiki_pages WHERE id = :id"),
                                        {"id": parent.parent_page_id})).scalar_one_or_none() or parent.title
    children = []
    for child in await _children(conn, res, update.linked_page_slugs):
        if str(child.id) in taken or str(child.id) == parent_id:
            continue
        if not membership_evidence(hub_place, child.title, child.summary):
            outcome.rollup_children_rejected += 1
            continue
        taken.add(str(child.id))
        children.append(child)
    if update.linked_page_slugs and not children:
        return  # every proposed member was rejected: no rollup without evidence
    entry = page_entry(res, page_id=parent_id, page_type=parent.type, slug=parent.slug, title=parent.title,
                        summary=None, mode="update", keep_title=True)
    existing = await sections_of(conn, res, parent_id)
    current = existing.get(update.sectionSlug)
    refs = res.cite(update.source_refs)
    if children:
        # A rollup lists its members: it cites exactly their memories (never the other memories of the
        # run that suggested the hub, a park visit under Restaurants), replacing what it cited before.
        refs = await member_memories(conn, res, [str(child.id) for child in children])
        body = render_rollup_list(children)
        if current is not None and not is_meaningful_change(current.body_md, body):
            res.result.sections_skipped += 1
            if set(refs) == set(await _cited_by(conn, parent_id, update.sectionSlug)):
                return  # the same list with the same evidence: nothing to write, nothing to count again
            # The same list, but its members' memories changed: only its citations (and metadata) follow.
            cite_only(entry, update.sectionSlug, refs, replace_sources=True)
        else:
            entry.sections.append(DirectSection(slug=update.sectionSlug,
                                                heading=update.heading or update.sectionSlug, body_md=body,
                                                source_refs=refs, rewritten=True, replace_sources=True))
    else:
        before = len(res.tasks)
        add_writer_task(res, entry, current=current, slug=update.sectionSlug, heading=update.heading,
                         proposed=update.proposed_body_md, refs=refs)
        if len(res.tasks) == before:
            return
    aggregations.append(RollupAggregation(
        page_id=parent_id, section_slug=update.sectionSlug,
        linked_page_ids=[str(child.id) for child in children],
        child_tags=[list(child.aliases or []) for child in children],
        observed_tags=update.observed_tags or None,
    ))
    for child in children:
        res.id_links.append(IdLink(from_page_id=parent_id, to_page_id=str(child.id),
                                   context=f"rolled up under {update.sectionSlug}"))


async def _resolve_section_promotion(conn: AsyncConnection, res: Resolution, parent: Any,
                                     promotion: SectionPromotion,
                                     aggregations: list[RollupAggregation | PromotedAggregation],
                                     hierarchy: list[HierarchyEdge], outcome: AggregationResolveResult) -> None:
    parent_id = str(parent.id)
    section = (await conn.execute(text("""
        SELECT section_slug, heading, body_md, aggregation FROM wiki_page_sections
        WHERE page_id = :page AND section_slug = :slug
    """), {"page": parent_id, "slug": promotion.sectionSlug})).first()
    if section is None:
        outcome.dropped_invalid_ids += 1
        return
    aggregation = SectionAggregation.model_validate(section.aggregation or {})
    tag_sets = [list(row.aliases or []) for row in await conn.execute(text("""
        SELECT coalesce((SELECT array_agg(alias) FROM wiki_page_aliases WHERE page_id = p.id), '{}') AS aliases
        FROM wiki_pages p WHERE p.id = ANY(CAST(:ids AS uuid[]))
    """), {"ids": aggregation.linked_page_ids})]
    score = score_section_aggregation(aggregation, section.body_md, tag_sets, res.now)
    if not is_promotable(aggregation, score):
        outcome.promotions_refused += 1  # sticky once promoted; only promote_ready sections spin off
        return
    child = promotion.newPage
    slug = slugify_title(child.title) or slugify_title(child.slug) or child.slug.strip()
    existing_child = await page_by_type_slug(conn, res, "topic", slug)
    child_id = str(existing_child.id) if existing_child else str(deterministic_page_id(res.tenant, res.owner,
                                                                                          "topic", slug))
    if child_id == parent_id:
        outcome.dropped_invalid_ids += 1
        return
    entry = page_entry(res, page_id=child_id, page_type="topic", slug=slug, title=child.title.strip(),
                        summary=child.summary, mode="update" if existing_child else "create", keep_title=False)
    add_aliases(entry, [*seed_aliases_for_title(child.title), *child.aliases])
    # The promoted page and the pointer left on the parent are about the section's members: both cite
    # exactly their memories. Their bodies are deterministic renders, written directly.
    refs = await member_memories(conn, res, aggregation.linked_page_ids)
    for new_section in child.sections:
        entry.sections.append(DirectSection(slug=new_section.slug,
                                            heading=new_section.heading or format_heading_from_slug(new_section.slug),
                                            body_md=new_section.body_md, source_refs=refs,
                                            rewritten=existing_child is not None, replace_sources=True))
    parent_entry = page_entry(res, page_id=parent_id, page_type=parent.type, slug=parent.slug, title=parent.title,
                               summary=None, mode="update", keep_title=True)
    parent_entry.sections.append(DirectSection(
        slug=promotion.sectionSlug, heading=section.heading, source_refs=refs, rewritten=True, replace_sources=True,
        body_md=render_promoted_parent_section(promotion.parentSummary, promotion.topHighlights,
                                               child.title.strip(), "topic", slug),
    ))
    aggregations.append(PromotedAggregation(page_id=parent_id, section_slug=promotion.sectionSlug,
                                            promoted_page_id=child_id))
    hierarchy.append(HierarchyEdge(parent_id=parent_id, child_id=child_id))
