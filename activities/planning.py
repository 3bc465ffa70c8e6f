"""Model-calling activities of the leaf pass: the batch planner and the section writer.

Both load what they need from Postgres by id and store what they produce there (the plan staging
table), so workflow history only carries ids and token counts. The planner behind the port (Claude
or the scripted one) is chosen once, in the worker's composition root.
"""

from __future__ import annotations

import logging
from uuid import UUID

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from temporalio import activity

from activities.claim_gate import gate_plan
from activities.common import compile_step
from activities.deferred_calls import CallDeferred, DeferredCalls
from activities.writer_gate import checked_draft, record_writer_rejections
from domain.context import PlannerContext
from domain.guards import strip_wikilinks
from domain.ignored_names import without_ignored
from domain.merge_questions import question_evidence
from domain.plan import Plan
from messages.compile import (
    JudgeMergesInput,
    JudgeMergesResult,
    PlanBatchInput,
    PlanBatchResult,
    Scope,
    TokenCounts,
    WriteSectionInput,
    WriteSectionResult,
)
from planners.cpu_pool import off_loop
from planners.port import Planner, PlanReply
from store.claims import RejectedClaim, record_rejected_claims
from store.compile_runs import database_now
from store.corrections import ignored_names
from store.memories import load_memories
from store.mention_pool import kin_open_mentions
from store.merge_evidence import merge_questions
from store.page_matching import Judgement
from store.plan_preview import preview_resolved_plan
from store.plan_resolution import resolve_plan
from store.plan_staging import (
    plan_run_id,
    section_task,
    stage_plan,
    staged_plan,
    store_merge_decisions,
    store_section_draft,
)
from store.scope_reads import (
    candidate_pages,
    held_sighting_ids,
    names_in_batch,
    open_mentions,
    section_source_refs,
)

log = logging.getLogger(__name__)
MAX_OPEN_MENTIONS = 100  # the batch's own names first, then the most seen
# Ambiguous pairs one judge call decides; any beyond (a batch of near-identical names) do not merge.
MAX_JUDGED_PAIRS = 60


async def planner_context(engine: AsyncEngine, request: PlanBatchInput) -> PlannerContext:
    """What the leaf planner is shown for one batch: its memories, candidate pages and open mentions.

    Planned ahead (`after_plan_id`), the batch is shown the wiki as the previous batch's resolved plan
    will leave it (store/plan_preview.py), applied in this transaction and rolled back with it.
    """
    async with engine.connect() as conn:  # never committed: the preview, if any, is rolled back on exit
        if request.after_plan_id is not None and not await _previewed(conn, request):
            log.warning("plan %s: the previous plan %s is not resolved and unapplied; planning against the "
                        "wiki as it stands", request.plan_id, request.after_plan_id)
        return await _read_context(conn, request)


async def _previewed(conn: AsyncConnection, request: PlanBatchInput) -> bool:
    assert request.after_plan_id is not None
    try:
        async with conn.begin_nested():
            return await preview_resolved_plan(conn, request.scope, request.after_plan_id,
                                               deterministic_linking=request.deterministic_linking_enabled)
    except DBAPIError as error:
        # The plan's own apply will meet the same rejection and fail the compile: this plan is not used.
        log.warning("previewing plan %s failed (%s); planning against the wiki as it stands",
                    request.after_plan_id, str(error.orig or error).splitlines()[0])
        return False


async def _read_context(conn: AsyncConnection, request: PlanBatchInput) -> PlannerContext:
    scope = request.scope
    memories = await load_memories(conn, scope.tenant, scope.owner, request.memory_ids)
    names = names_in_batch(memories)
    pages = await candidate_pages(conn, scope.tenant, scope.owner, names, request.max_candidate_pages)
    # The open rows of the batch's names under other spellings (store/mention_pool.py) are shown too:
    # a sighting counts with the thing's earlier ones whatever spelling it used.
    kin = await kin_open_mentions(conn, scope.tenant, scope.owner, names)
    mentions = await open_mentions(conn, scope.tenant, scope.owner, names, MAX_OPEN_MENTIONS,
                                   [*request.promotion_mention_ids, *kin])
    held = await load_memories(conn, scope.tenant, scope.owner, held_sighting_ids(mentions))
    return PlannerContext(
        tenant_id=scope.tenant, owner_id=scope.owner, memories=memories, candidate_pages=pages,
        open_mentions=mentions, promotion_candidate_ids=request.promotion_mention_ids, held_memories=held,
    )


async def staged(engine: AsyncEngine, scope: Scope, plan_id: UUID, run_id: str, memory_ids: list[UUID],
                 reply: PlanReply, judge: Planner | None = None, model_id: str = "") -> PlanBatchResult:
    """Pass the plan's lines through the verification gate, stage what passed for the resolver with
    the gate's rejections, and say what it cost."""
    if reply.plan.dropped_links:
        log.warning("planner sent %d malformed page links; dropped", reply.plan.dropped_links)
    async with engine.connect() as conn:
        ignored = await ignored_names(conn, scope.tenant, scope.owner)
    gate = await gate_plan(engine, judge, scope, without_ignored(reply.plan, ignored), model_id)
    async with engine.begin() as conn:
        await stage_plan(conn, plan_id, scope, run_id, memory_ids, gate.plan)
        await record_rejected_claims(conn, scope.tenant, scope.owner, run_id, plan_id, gate.rejected)
    usage = TokenCounts.model_validate({key: value + getattr(gate.usage, key)
                                        for key, value in reply.usage.model_dump().items()})
    return PlanBatchResult(plan_id=plan_id, usage=usage, planner_input_chars=reply.input_chars,
                           merge_proposals=len(reply.plan.newPages) + len(reply.plan.promotions),
                           dropped_invalid_links=reply.plan.dropped_links, claims_rejected=len(gate.rejected),
                           claims_judged=gate.judged, claim_judge_failed=gate.judge_failed,
                           claims_dropped_invalid_refs=gate.dropped_refs)


class Planning:
    def __init__(self, engine: AsyncEngine, planner: Planner, deferred: DeferredCalls | None = None) -> None:
        """`deferred`: answers the writer's and the merge judge's calls through Message Batches when the
        workflow asks (`via_batch`); None: always interactively."""
        self._engine = engine
        self._planner = planner
        self._deferred = deferred

    def _planner_for(self, scope: Scope, plan_id: UUID, run_id: str, call: str, via_batch: bool,
                     memory_ids: list[UUID]) -> Planner:
        if not via_batch or self._deferred is None:
            return self._planner
        return self._deferred.planner(self._planner, scope, plan_id, run_id, call, memory_ids)

    @activity.defn(name="llm.plan_batch")
    @compile_step
    async def plan_batch(self, request: PlanBatchInput) -> PlanBatchResult:
        context = await planner_context(self._engine, request)
        reply = await self._planner.plan_batch(context, request.model_id)
        return await staged(self._engine, request.scope, request.plan_id, request.run_id, request.memory_ids, reply,
                            self._planner, request.model_id)

    @activity.defn(name="llm.judge_merges")
    @compile_step
    async def judge_merges(self, request: JudgeMergesInput) -> JudgeMergesResult:
        """Decide the plan's ambiguous merges (domain/resolution.py) in one model call, before it resolves.

        The pairs are the ones resolving the plan now meets: the resolver runs once here, read-only and
        with no decisions, and records them. Then the judge sees each pair with its evidence, and the
        decisions are stored with the plan for `compile.resolve_plan`. Nothing ambiguous: no model call.
        """
        scope = request.scope
        async with self._engine.connect() as conn:  # read-only: the transaction is rolled back on exit
            row = await staged_plan(conn, request.plan_id, scope)
            if row.status != "planned":
                return JudgeMergesResult(plan_id=request.plan_id)  # resolved already, with its decisions
            judgement = Judgement()
            await resolve_plan(conn, scope.tenant, scope.owner, request.plan_id, Plan.model_validate(row.plan),
                               [str(m) for m in row.memory_ids], await database_now(conn), judgement)
            asked = judgement.asked[:MAX_JUDGED_PAIRS]
            if not asked:
                return JudgeMergesResult(plan_id=request.plan_id)
            questions = await merge_questions(conn, scope.tenant, scope.owner, asked)
            run_id = (await plan_run_id(conn, request.plan_id, scope) or "") if request.via_batch else ""
        judge = self._planner_for(scope, request.plan_id, run_id, "judge_merges", request.via_batch,
                                  [UUID(str(m)) for m in row.memory_ids])
        try:
            reply = await judge.judge_merges(questions, request.model_id)
        except CallDeferred as deferred:
            return JudgeMergesResult(plan_id=request.plan_id, pending_batch_id=deferred.batch_id)
        shown = {question.key: question_evidence(question) for question in questions}
        decisions = [d.model_copy(update={"evidence": shown.get(d.key, {})}) for d in reply.decisions]
        async with self._engine.begin() as conn:
            await store_merge_decisions(conn, request.plan_id, scope, decisions)
        return JudgeMergesResult(plan_id=request.plan_id, questions=len(questions),
                                 judged_same=sum(1 for d in decisions if d.same), usage=reply.usage)

    @activity.defn(name="llm.write_section")
    @compile_step
    async def write_section(self, request: WriteSectionInput) -> WriteSectionResult:
        scope = request.scope
        async with self._engine.connect() as conn:
            task = await section_task(conn, request.plan_id, scope, request.task_key)
            refs = task.source_refs
            if self._planner.rewrites_from_sources:
                # This writer rebuilds the section from all it cites: the memories cited before, too.
                refs = [*await section_source_refs(conn, scope.tenant, scope.owner, task.page_id, task.slug),
                        *refs]
            cited = await load_memories(conn, scope.tenant, scope.owner, refs)
            run_id = (await plan_run_id(conn, request.plan_id, scope) or "") if request.via_batch else ""
        writer = self._planner_for(scope, request.plan_id, run_id, f"write_section:{request.task_key}",
                                   request.via_batch, [m.id for m in cited])
        try:
            reply = await writer.write_section(task, cited, request.model_id)
        except CallDeferred as deferred:
            return WriteSectionResult(task_key=request.task_key, usage=TokenCounts(),
                                      pending_batch_id=deferred.batch_id)
        body, rejected = strip_wikilinks(reply.body), list[RejectedClaim]()
        if not self._planner.rewrites_from_sources and not reply.derived:
            # A model wrote this body: its own lines pass the grounding check (activities/writer_gate.py).
            body, rejected = await off_loop(checked_draft, task, body, cited)  # CPU: off the event loop
        async with self._engine.begin() as conn:
            await store_section_draft(conn, request.plan_id, request.task_key, body)
            await record_writer_rejections(conn, scope, request.plan_id, rejected)
        return WriteSectionResult(task_key=request.task_key, usage=reply.usage)
