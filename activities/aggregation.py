"""The aggregation pass (seed steps 2.1–2.7): plan, resolve, apply — after a run's leaf batches.

`aggregation.plan` gathers the run's recently changed pages (at most 60) with their sections and
aggregation metadata, parent candidates from both deterministic expanders (record metadata and
page summaries, merged by slug) and inbound link counts, and asks the aggregation planner (Claude
or the scripted one). `aggregation.resolve` checks it against the scope (aggregation_resolution),
the section writer drafts rollups that have no resolvable children, and `aggregation.apply` writes
everything in one transaction: hubs, rollup sections with their merged and re-scored aggregation
metadata, promoted child pages with parent_of/child_of links, and hubness of every touched page.
A plan is applied once (its staging row is marked), so a retried apply changes nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities import error_types
from activities.compile_store import rejected_writes_fail
from activities.heartbeat import heartbeating
from activities.planning import _counts, estimate_tokens
from domain import ids
from domain.aggregation import (
    SectionAggregation,
    hubness_score,
    merge_section_aggregation,
    next_promotion_status,
    score_section_aggregation,
)
from domain.compile_messages import (
    AggregationApplyInput,
    AggregationApplyResult,
    AggregationPlanInput,
    AggregationPlanResult,
    AggregationResolveResult,
    ResolvePlanInput,
)
from domain.guards import JsonResponseError, parse_json_response
from domain.parents import (
    derive_parent_candidates,
    derive_parent_candidates_from_page_summaries,
    merge_parent_candidates,
)
from domain.plan import Plan
from domain.pricing import TokenUsage
from planners.claude_client import ModelClient
from planners.prompts import (
    AGGREGATION_REPLY_SCHEMA,
    AggregationPage,
    AggregationParentCandidate,
    build_aggregation_prompt,
    force_aggregation_arrays,
)
from planners.scripted_aggregation import scripted_aggregation_plan
from runtime.settings import Settings
from store.aggregation_resolution import resolve_aggregation
from store.memories import Cursor, read_after
from store.plan_apply import apply_resolved_plan, insert_reference_links
from store.plan_staging import (
    earlier_resolution,
    lock_resolved_plan,
    mark_applied,
    section_drafts,
    stage_plan,
    staged_plan,
    store_resolution,
)

MAX_AGGREGATION_PAGES = 60
MAX_CHILD_CANDIDATES = 500
AGGREGATION_MAX_TOKENS = 16_000

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


class Aggregation:
    def __init__(self, engine: AsyncEngine, settings: Settings, model_client: ModelClient | None) -> None:
        self._engine = engine
        self._model = model_client

    @activity.defn(name="aggregation.plan")
    @heartbeating
    async def plan(self, request: AggregationPlanInput) -> AggregationPlanResult:
        scope = request.scope
        async with self._engine.connect() as conn:
            records, _ = await read_after(conn, scope.tenant, scope.owner,
                                          Cursor(request.cursor_from.updated_at, request.cursor_from.record_id),
                                          max(request.record_count, 0))
            pages = [_aggregation_page(row) for row in await conn.execute(text(_PAGES_WITH_SECTIONS_SQL + """
                WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
                  AND p.id = ANY(CAST(:ids AS uuid[]))
                ORDER BY array_position(CAST(:ids AS uuid[]), p.id) DESC LIMIT :limit
            """), {"tenant": scope.tenant, "owner": scope.owner, "ids": [str(i) for i in request.changed_page_ids],
                   "limit": MAX_AGGREGATION_PAGES})]
            candidates = merge_parent_candidates(
                derive_parent_candidates(records),
                derive_parent_candidates_from_page_summaries(pages),
            )
            if not pages and not candidates:
                return AggregationPlanResult(plan_id=request.plan_id, usage=_counts(request.model_id, TokenUsage()),
                                             skipped=True)
            inbound = dict((await conn.execute(text("""
                SELECT to_page_id, count(*) FROM wiki_page_links WHERE to_page_id = ANY(CAST(:ids AS uuid[]))
                GROUP BY to_page_id ORDER BY count(*) DESC
            """), {"ids": [str(p.id) for p in pages]})).all())
            candidate_models = [AggregationParentCandidate.model_validate(c, from_attributes=True) for c in candidates]
            if self._model is None:
                scope_pages = await self._possible_children(conn, scope.tenant, scope.owner, candidate_models)
        prompt = build_aggregation_prompt(pages, candidate_models, inbound)
        if self._model is None:
            plan = scripted_aggregation_plan(pages, candidate_models, scope_pages, datetime.now().astimezone())
            usage = TokenUsage(input_tokens=estimate_tokens(len(prompt.batch_user)),
                               cache_read_input_tokens=estimate_tokens(len(prompt.system)),
                               output_tokens=estimate_tokens(len(plan.model_dump_json())))
        else:
            reply = await self._model.complete(model=request.model_id, system=prompt.system,
                                               batch_user=prompt.batch_user, max_tokens=AGGREGATION_MAX_TOKENS,
                                               json_schema=AGGREGATION_REPLY_SCHEMA)
            try:
                plan, usage = _parse_aggregation_plan(reply.text), reply.usage
            except ApplicationError as error:
                # The unusable reply was paid for: its priced tokens ride on the error for the ledger.
                raise ApplicationError(error.message, _counts(request.model_id, reply.usage).model_dump(),
                                       type=error.type, non_retryable=True) from None
        async with self._engine.begin() as conn:
            await stage_plan(conn, request.plan_id, scope, request.run_id, [r.id for r in records], plan)
        return AggregationPlanResult(plan_id=request.plan_id, usage=_counts(request.model_id, usage),
                                     deterministic_parents_derived=len(candidates), pages_considered=len(pages))

    async def _possible_children(self, conn: AsyncConnection, tenant: str, owner: str,
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

    @activity.defn(name="aggregation.resolve")
    @heartbeating
    async def resolve(self, request: ResolvePlanInput) -> AggregationResolveResult:
        scope = request.scope
        async with self._engine.begin() as conn:
            row = await staged_plan(conn, request.plan_id, scope)
            if (earlier := earlier_resolution(row)) is not None:
                return AggregationResolveResult.model_validate(earlier)
            now = (await conn.execute(text("SELECT now()"))).scalar_one()
            document, result = await resolve_aggregation(conn, scope.tenant, scope.owner, request.plan_id,
                                                         Plan.model_validate(row.plan),
                                                         [str(m) for m in row.memory_ids], now)
            await store_resolution(conn, request.plan_id, document, result)
        return result

    @activity.defn(name="aggregation.apply")
    @heartbeating
    async def apply(self, request: AggregationApplyInput) -> AggregationApplyResult:
        async with rejected_writes_fail(request.scope, request.plan_id):
            return await self._apply(request)

    async def _apply(self, request: AggregationApplyInput) -> AggregationApplyResult:
        scope = request.scope
        async with self._engine.begin() as conn:
            plan = await lock_resolved_plan(conn, request.plan_id, scope)
            if plan.status == "applied":
                return AggregationApplyResult.model_validate({**plan.result, "already_applied": True})
            document = plan.resolved
            leaf = await apply_resolved_plan(conn, scope.tenant, scope.owner, document,
                                             await section_drafts(conn, request.plan_id), deterministic_linking=False)
            result = AggregationApplyResult(pages_created=leaf.pages_created, pages_upserted=leaf.pages_upserted,
                                            sections_rewritten=leaf.sections_rewritten,
                                            links_upserted=leaf.links_upserted)
            touched = {str(page) for page in leaf.touched_page_ids}
            await _apply_extras(conn, scope.tenant, scope.owner, document, result, touched)
            await mark_applied(conn, request.plan_id, result.model_dump_json())
        return result


def _parse_aggregation_plan(reply_text: str) -> Plan:
    try:
        raw = force_aggregation_arrays(parse_json_response(reply_text))
        return Plan.model_validate(raw)
    except (JsonResponseError, ValueError, ValidationError) as error:
        raise ApplicationError(f"aggregation planner output is not a valid plan: {str(error)[:300]}",
                               type=error_types.PLAN_INVALID, non_retryable=True) from None


async def _apply_extras(conn: AsyncConnection, tenant: str, owner: str, document: dict[str, Any],
                        result: AggregationApplyResult, touched: set[str]) -> None:
    inserted = await insert_reference_links(
        conn, [(link["from"], link["to"], link["context"]) for link in document.get("id_links", [])])
    result.links_upserted += len(inserted)
    for edge in document.get("hierarchy", []):
        await _set_parent(conn, tenant, owner, edge["parent_id"], edge["child_id"])
        touched |= {edge["parent_id"], edge["child_id"]}
    now = (await conn.execute(text("SELECT now()"))).scalar_one()
    for aggregation in document.get("aggregations", []):
        if await _update_section_aggregation(conn, aggregation, now):
            if "promoted_page_id" in aggregation:
                result.sections_promoted += 1
            else:
                result.parent_sections_updated += 1
        touched.add(aggregation["page_id"])
    result.hubs_rescored = await _recompute_hubness(conn, sorted(touched))


async def _set_parent(conn: AsyncConnection, tenant: str, owner: str, parent_id: str, child_id: str) -> None:
    """parent_page_id on the child, mirrored as parent_of / child_of links (seed: setParentPage)."""
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


async def _update_section_aggregation(conn: AsyncConnection, aggregation: dict[str, Any], now: datetime) -> bool:
    section = (await conn.execute(text("""
        SELECT id, body_md, aggregation FROM wiki_page_sections WHERE page_id = :page AND section_slug = :slug
        FOR UPDATE
    """), {"page": aggregation["page_id"], "slug": aggregation["section_slug"]})).first()
    if section is None:
        return False
    current = SectionAggregation.model_validate(section.aggregation or {})
    if "promoted_page_id" in aggregation:
        merged = merge_section_aggregation(current, {"promotion_status": "promoted",
                                                     "promoted_page_id": aggregation["promoted_page_id"]})
    else:
        # Supporting records and their time span come from the section's own provenance rows, so a
        # replayed or repeated pass never double counts, and the spread is the evidence's, not the
        # compile's (a bootstrap of months of memories is not "0 days" of evidence).
        evidence = (await conn.execute(text("""
            SELECT count(*) AS records, min(m.created_at) AS first_at, max(m.created_at) AS last_at
            FROM wiki_section_sources s LEFT JOIN memory_units m ON m.id::text = s.source_ref
            WHERE s.section_id = :section AND s.source_kind = 'memory_unit'
        """), {"section": section.id})).one()
        patch: dict[str, Any] = {
            "linked_page_ids": aggregation["linked_page_ids"],
            "supporting_record_count": evidence.records,
            "first_source_at": evidence.first_at.isoformat() if evidence.first_at else current.first_source_at,
            "last_source_at": evidence.last_at.isoformat() if evidence.last_at else now.isoformat(),
        }
        if aggregation.get("observed_tags"):
            patch["observed_tags"] = aggregation["observed_tags"]
        merged = merge_section_aggregation(current, patch)
        score = score_section_aggregation(merged, section.body_md, aggregation.get("child_tags", []), now)
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
