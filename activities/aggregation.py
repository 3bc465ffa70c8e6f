"""The aggregation pass: plan, resolve, apply — after a run's leaf batches.

`aggregation.plan` gathers the run's recently changed pages (at most 60) with their sections and
aggregation metadata, parent candidates from both deterministic expanders (record metadata and
page summaries, merged by slug) and inbound link counts, and asks the planner behind the port.
`aggregation.resolve` checks the plan against the scope (store/aggregation_resolution.py), the
section writer drafts rollups that have no resolvable children, and `aggregation.apply` writes
everything in one transaction: hubs, rollup sections with their merged and re-scored aggregation
metadata, promoted child pages with parent_of/child_of links, and hubness of every touched page.
A plan is applied once (its staging row is marked), so a retried apply changes nothing.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity

from activities.common import compile_step
from activities.deferred_calls import CallDeferred, DeferredCalls
from domain.context import AggregationParentCandidate
from domain.parents import (
    derive_parent_candidates,
    derive_parent_candidates_from_page_summaries,
    merge_parent_candidates,
)
from domain.plan import Plan
from messages.compile import (
    AggregationApplyInput,
    AggregationApplyResult,
    AggregationPlanInput,
    AggregationPlanResult,
    AggregationResolveResult,
    ResolvePlanInput,
    TokenCounts,
)
from planners.port import AggregationRequest, Planner
from store.aggregation_resolution import resolve_aggregation
from store.aggregation_store import (
    apply_aggregation_extras,
    changed_pages,
    inbound_link_counts,
    possible_children,
)
from store.compile_runs import database_now, rejected_writes_fail
from store.corrections import blocked_sections
from store.memories import Cursor, read_after
from store.plan_apply import apply_resolved_plan
from store.plan_staging import (
    draft_line_claims,
    earlier_resolution,
    lock_resolved_plan,
    mark_applied,
    section_drafts,
    stage_plan,
    staged_plan,
    store_resolution,
)


class Aggregation:
    def __init__(self, engine: AsyncEngine, planner: Planner, deferred: DeferredCalls | None = None) -> None:
        """`deferred`: answers the plan's call through a Message Batch when the workflow asks
        (`via_batch`); None: always interactively."""
        self._engine = engine
        self._planner = planner
        self._deferred = deferred

    @activity.defn(name="aggregation.plan")
    @compile_step
    async def plan(self, request: AggregationPlanInput) -> AggregationPlanResult:
        scope = request.scope
        async with self._engine.connect() as conn:
            records, _ = await read_after(conn, scope.tenant, scope.owner,
                                          Cursor(request.cursor_from.updated_at, request.cursor_from.record_id),
                                          max(request.record_count, 0))
            pages = await changed_pages(conn, scope.tenant, scope.owner, request.changed_page_ids)
            candidates = merge_parent_candidates(
                derive_parent_candidates(records),
                derive_parent_candidates_from_page_summaries(pages),
            )
            if not pages and not candidates:
                return AggregationPlanResult(plan_id=request.plan_id, usage=TokenCounts(), skipped=True)
            candidate_models = [AggregationParentCandidate.model_validate(c, from_attributes=True) for c in candidates]
            aggregation_request = AggregationRequest(
                pages=pages, candidates=candidate_models, inbound_links=await inbound_link_counts(conn, pages),
                possible_children=(await possible_children(conn, scope.tenant, scope.owner, candidate_models)
                                   if self._planner.reads_possible_children else []),
            )
            blocked = await blocked_sections(conn, scope.tenant, scope.owner)
        planner = self._planner
        if request.via_batch and self._deferred is not None:
            planner = self._deferred.planner(planner, scope, request.plan_id, request.run_id, "aggregation",
                                             [r.id for r in records])
        try:
            reply = await planner.plan_aggregation(aggregation_request, request.model_id)
        except CallDeferred as deferred:
            return AggregationPlanResult(plan_id=request.plan_id, usage=TokenCounts(),
                                         pending_batch_id=deferred.batch_id)
        # A section the operator said never to promote from stays on its page.
        reply.plan.sectionPromotions = [p for p in reply.plan.sectionPromotions
                                        if (p.pageId.strip().lower(), p.sectionSlug) not in blocked]
        async with self._engine.begin() as conn:
            await stage_plan(conn, request.plan_id, scope, request.run_id, [r.id for r in records], reply.plan)
        return AggregationPlanResult(plan_id=request.plan_id, usage=reply.usage,
                                     deterministic_parents_derived=len(candidates), pages_considered=len(pages))

    @activity.defn(name="aggregation.resolve")
    @compile_step
    async def resolve(self, request: ResolvePlanInput) -> AggregationResolveResult:
        scope = request.scope
        async with self._engine.begin() as conn:
            row = await staged_plan(conn, request.plan_id, scope)
            if (earlier := earlier_resolution(row)) is not None:
                return AggregationResolveResult.model_validate(earlier)
            resolved, result = await resolve_aggregation(conn, scope.tenant, scope.owner, request.plan_id,
                                                         Plan.model_validate(row.plan),
                                                         [str(m) for m in row.memory_ids], await database_now(conn))
            await store_resolution(conn, request.plan_id, resolved, result)
        return result

    @activity.defn(name="aggregation.apply")
    @compile_step
    async def apply(self, request: AggregationApplyInput) -> AggregationApplyResult:
        async with rejected_writes_fail(request.scope, request.plan_id):
            return await self._apply(request)

    async def _apply(self, request: AggregationApplyInput) -> AggregationApplyResult:
        scope = request.scope
        async with self._engine.begin() as conn:
            plan = await lock_resolved_plan(conn, request.plan_id, scope)
            if plan.status == "applied":
                return AggregationApplyResult.model_validate({**(plan.result or {}), "already_applied": True})
            leaf = await apply_resolved_plan(conn, scope.tenant, scope.owner, plan.resolved,
                                             await section_drafts(conn, request.plan_id), deterministic_linking=False,
                                             run_id=plan.run_id,
                                             written_claims=await draft_line_claims(conn, request.plan_id))
            result = AggregationApplyResult(pages_created=leaf.pages_created, pages_upserted=leaf.pages_upserted,
                                            sections_rewritten=leaf.sections_rewritten,
                                            links_upserted=leaf.links_upserted)
            touched = {str(page) for page in leaf.touched_page_ids}
            await apply_aggregation_extras(conn, scope.tenant, scope.owner, plan.resolved, result, touched)
            await mark_applied(conn, request.plan_id, result.model_dump_json())
        return result
