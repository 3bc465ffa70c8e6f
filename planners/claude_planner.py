"""The model planner behind the port: prompts built from the context, one model call, the reply
validated against the plan contract. The model is Claude through `ModelClient`, or a model on an
OpenAI-compatible server through `OpenAICompatibleClient` (planners/openai_client.py): the same
prompts and the same reply parsing, the gateway's price (None: Claude's list price by model id).

An unusable reply (cut off, or not the contract) was still paid for: its priced tokens travel on
the error, so the run's ledger counts them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from domain.claim_judge import ClaimQuestion
from domain.context import MemoryRecord, PlannerContext
from domain.errors import ModelInterrupted, ModelTruncated, PlanInvalid, StepFailed
from domain.guards import JsonResponseError, parse_json_response
from domain.merge_questions import MergeQuestion
from domain.plan import Plan
from domain.pricing import ModelPrice, TokenCounts, TokenUsage, estimate_tokens, priced
from domain.reply_errors import reply_problem
from domain.resolved_plan import SectionTask
from planners.claim_judge_prompt import (
    CLAIM_JUDGE_MAX_TOKENS,
    CLAIM_JUDGE_REPLY_SCHEMA,
    CLAIM_JUDGE_SYSTEM,
    build_claim_judge_prompt,
    parse_claim_judge_reply,
)
from planners.claude_client import Completes, ModelGateway, ModelReply
from planners.compact_plan import CompactPlan, to_plan
from planners.handles import Handles
from planners.judge_prompt import JUDGE_REPLY_SCHEMA, JUDGE_SYSTEM, build_judge_prompt, parse_judge_reply
from planners.port import AggregationRequest, ClaimJudgeReply, JudgeReply, PlanReply, SectionReply
from planners.prompts import (
    AGGREGATION_REPLY_SCHEMA,
    PLANNER_REPLY_SCHEMA,
    SECTION_WRITER_SYSTEM,
    build_aggregation_prompt,
    build_planner_prompt,
    build_section_writer_prompt,
    force_aggregation_arrays,
    planner_max_tokens,
)
from planners.section_edits import SECTION_BUDGET_CHARS, append_lines, apply_edits, parse_edits
from planners.section_fold import folded_body

T = TypeVar("T")
log = logging.getLogger(__name__)
# The leaf planner's max_tokens is sized to each batch (planners/leaf_prompt.py planner_max_tokens);
# the writer's to its edits: room for the proposal twice over (a writer answers with edits, and a
# condensing one writes summary lines no longer than what they fold).
WRITER_MIN_TOKENS = 1_024
WRITER_MAX_TOKENS = 16_000
AGGREGATION_MAX_TOKENS = 16_000
JUDGE_MAX_TOKENS = 8_000


def writer_max_tokens(existing_body: str | None, proposed_body: str) -> int:
    return min(WRITER_MAX_TOKENS, max(WRITER_MIN_TOKENS,
                                      2 * estimate_tokens(len(existing_body or "") + len(proposed_body)) + 256))


class ClaudePlanner:
    judges_claims = True
    reads_possible_children = False
    # The writer merges the proposal into the body it is shown; older memories stay out of its prompt.
    rewrites_from_sources = False

    def __init__(self, client: ModelGateway, calls: Completes | None = None) -> None:
        """`client`: the gateway (Message Batches and re-derivation use it too); `calls`: what answers
        this planner's model calls, the client itself unless given."""
        self._client = client
        self._calls: Completes = calls or client
        self._price = client.price

    @property
    def client(self) -> ModelGateway:
        return self._client

    def answered_by(self, calls: Completes) -> ClaudePlanner:
        """The same planner with its model calls answered by `calls`."""
        return ClaudePlanner(self._client, calls)

    async def plan_batch(self, context: PlannerContext, model_id: str) -> PlanReply:
        call = plan_call(context)
        try:
            reply = await self._calls.complete(model=model_id, system=call.system, user=call.user,
                                               max_tokens=call.max_tokens, json_schema=PLANNER_REPLY_SCHEMA)
        except (ModelTruncated, PlanInvalid, ModelInterrupted) as error:
            raise priced_error(error, model_id, price=self._price) from None
        return plan_reply(call, reply, model_id, price=self._price)

    async def write_section(self, task: SectionTask, cited: list[MemoryRecord], model_id: str) -> SectionReply:
        """The section's new body. An update that only adds lines is appended without a model call while
        the section stays within its budget, and past it folded in code when its oldest dated lines are
        what has to go; otherwise the writer answers with line edits
        (planners/section_edits.py). A reply cut off, refused or not edits falls back to the append,
        so one section never fails a compile."""
        appended = append_lines(task.existing_body, task.proposed_body)
        if task.additive and len(appended) <= SECTION_BUDGET_CHARS:
            return SectionReply(body=appended, usage=priced(model_id, TokenUsage(), price=self._price))
        # Past the budget, what has to go may be dated lines only: the compiler folds them into a
        # recount, with headroom, and no model is called (planners/section_fold.py).
        folded = folded_body(appended, SECTION_BUDGET_CHARS) if task.additive else None
        if folded is not None:
            return SectionReply(body=folded, usage=priced(model_id, TokenUsage(), price=self._price), derived=True)
        # An additive update past the budget is appended first: the writer then only condenses the
        # body it is shown, so it retypes no proposed line and needs no source record.
        condense_only = task.additive
        body_shown = appended if condense_only else task.existing_body
        prompt = build_section_writer_prompt(task.page_title, task.page_type, task.slug, task.heading,
                                             body_shown, task.proposed_body, [m.content for m in cited],
                                             appended=condense_only)
        try:
            reply = await self._calls.complete(model=model_id, system=SECTION_WRITER_SYSTEM, user=prompt,
                                               max_tokens=writer_max_tokens(None, task.proposed_body))
        except (ModelTruncated, PlanInvalid) as error:
            log.warning("section writer gave no usable edits; keeping the appended proposal: %s", error)
            spent = error.spent if isinstance(error.spent, TokenUsage) else TokenUsage()
            return SectionReply(body=appended, usage=priced(model_id, spent, price=self._price))
        except ModelInterrupted as error:
            raise priced_error(error, model_id, price=self._price) from None  # the workflow retries it
        try:
            body = apply_edits(body_shown, parse_edits(reply.text))
        except ValueError as error:
            log.warning("section writer reply is not edits; keeping the appended proposal: %s", error)
            body = appended
        if not body:
            log.warning("section writer's edits left an empty body; keeping the appended proposal")
            body = appended
        return SectionReply(body=body, usage=priced(model_id, reply.usage, batch=reply.batch, price=self._price))

    async def plan_aggregation(self, request: AggregationRequest, model_id: str) -> PlanReply:
        prompt = build_aggregation_prompt(request.pages, request.candidates, request.inbound_links)
        try:
            reply = await self._calls.complete(model=model_id, system=prompt.system, user=prompt.user,
                                               max_tokens=AGGREGATION_MAX_TOKENS,
                                               json_schema=AGGREGATION_REPLY_SCHEMA)
            try:
                plan = parse_aggregation_plan(reply.text)
            except PlanInvalid as error:
                error.spent = reply.usage
                raise
        except (ModelTruncated, PlanInvalid, ModelInterrupted) as error:
            raise priced_error(error, model_id, price=self._price) from None
        plan, unknown = prompt.handles.resolve(plan)
        if unknown:
            log.warning("aggregation reply named %d handle(s) its prompt never showed", unknown)
        return PlanReply(plan=plan, usage=priced(model_id, reply.usage, batch=reply.batch, price=self._price),
                         input_chars=prompt.chars, unknown_handles=unknown)


    async def _judged(self, model_id: str, system: str, user: str, max_tokens: int, schema: dict[str, Any],
                      parse: Callable[[str], T]) -> tuple[T, TokenCounts]:
        """One judge call (merges or claims), its parsed answer and what it cost; a reply that cannot be
        read, or is cut off, fails with its tokens priced."""
        try:
            reply = await self._calls.complete(model=model_id, system=system, user=user, max_tokens=max_tokens,
                                               json_schema=schema)
            try:
                return parse(reply.text), priced(model_id, reply.usage, batch=reply.batch, price=self._price)
            except PlanInvalid as error:
                error.spent = reply.usage
                raise
        except (ModelTruncated, PlanInvalid, ModelInterrupted) as error:
            raise priced_error(error, model_id, price=self._price) from None

    async def judge_claims(self, questions: list[ClaimQuestion], model_id: str) -> ClaimJudgeReply:
        if not questions:
            return ClaimJudgeReply(verdicts=[], usage=priced(model_id, TokenUsage(), price=self._price))
        prompt = build_claim_judge_prompt(questions)
        verdicts, usage = await self._judged(model_id, CLAIM_JUDGE_SYSTEM, prompt.user, CLAIM_JUDGE_MAX_TOKENS,
                                             CLAIM_JUDGE_REPLY_SCHEMA,
                                             lambda text: parse_claim_judge_reply(text, prompt))
        return ClaimJudgeReply(verdicts=verdicts, usage=usage)

    async def judge_merges(self, questions: list[MergeQuestion], model_id: str) -> JudgeReply:
        if not questions:
            return JudgeReply(decisions=[], usage=priced(model_id, TokenUsage(), price=self._price))
        prompt = build_judge_prompt(questions)
        decisions, usage = await self._judged(model_id, JUDGE_SYSTEM, prompt.batch_user, JUDGE_MAX_TOKENS,
                                              JUDGE_REPLY_SCHEMA, lambda text: parse_judge_reply(text, prompt.keys))
        return JudgeReply(decisions=decisions, usage=usage)



class PlanCall(BaseModel):
    """A leaf plan's request, kept whole so that its reply can be read later (a Message Batch answers
    hours after the prompt was built): the prompt, its max_tokens, and the handles it showed."""

    system: str
    user: str
    max_tokens: int
    handles: Handles
    input_chars: int


def plan_call(context: PlannerContext) -> PlanCall:
    prompt = build_planner_prompt(context)
    return PlanCall(system=prompt.system, user=prompt.user, handles=prompt.handles, input_chars=prompt.chars,
                    max_tokens=planner_max_tokens(len(context.memories), len(context.promotion_candidate_ids)))


def plan_reply(call: PlanCall, reply: ModelReply, model_id: str, *, batch: bool = False,
               price: ModelPrice | None = None) -> PlanReply:
    """The plan in `reply` with its handles mapped back to ids, priced (`batch`: at the batch price;
    `price`: the gateway's, else the model id's list price)."""
    try:
        plan, unknown_ends = read_plan(reply.text, call.handles)
    except PlanInvalid as error:
        error.spent = reply.usage
        raise priced_error(error, model_id, batch=batch, price=price) from None
    plan, unknown = call.handles.resolve(plan)
    unknown += unknown_ends
    if unknown:
        # Left as written: resolution drops each one and counts it in dropped_invalid_ids.
        log.warning("planner reply named %d handle(s) its prompt never showed", unknown)
    return PlanReply(plan=plan, usage=priced(model_id, reply.usage, batch=batch, price=price),
                     input_chars=call.input_chars,
                     unknown_handles=unknown)


def priced_error(error: StepFailed, model_id: str, *, batch: bool = False,
                 price: ModelPrice | None = None) -> StepFailed:
    """The error with its spent tokens priced, so the workflow can add a paid-for failure to the ledger."""
    spent = error.spent if isinstance(error.spent, TokenUsage) else TokenUsage()
    error.spent = priced(model_id, spent, batch=batch, price=price)
    return error


def read_plan(reply_text: str, handles: Handles) -> tuple[Plan, int]:
    """The model's answer in the compact contract (planners/compact_plan.py) as a long-form Plan, still
    in handles, with the number of link ends that named no page; or PlanInvalid (the workflow retries
    once, then splits). An answer in the long form is read as such (no handle count added)."""
    raw = _reply_json(reply_text)
    if isinstance(raw, dict) and "pageUpdates" in raw:
        return _validated_plan(raw), 0
    try:
        compact = CompactPlan.model_validate(raw)
    except ValidationError as error:
        raise PlanInvalid(f"planner output does not match the plan contract: {_problems(error, CompactPlan)}") from None
    try:
        return to_plan(compact, handles.quotes, handles.page_keys, handles.held_quotes, handles.derivable(),
                       facts=handles.facts)
    except ValidationError as error:
        raise PlanInvalid(f"planner output does not match the plan contract: {_problems(error)}") from None


def parse_plan(reply_text: str) -> Plan:
    """A long-form plan (the Plan model's JSON), or PlanInvalid."""
    return _validated_plan(_reply_json(reply_text))


def _reply_json(reply_text: str):  # noqa: ANN202 - whatever JSON the model sent, judged by the caller
    try:
        raw = parse_json_response(reply_text)
    except (JsonResponseError, json.JSONDecodeError, ValueError) as error:
        raise PlanInvalid(f"planner output is not JSON: {reply_problem(error)}") from None
    if isinstance(raw, dict) and isinstance(raw.get("plan"), dict) and not {"pageUpdates", "updates"} & raw.keys():
        raw = raw["plan"]  # some models wrap the tool input once more
    return raw


def _validated_plan(raw: object) -> Plan:
    try:
        return Plan.model_validate(raw)
    except ValidationError as error:
        raise PlanInvalid(f"planner output does not match the plan contract: {_problems(error)}") from None


def _problems(error: ValidationError, model: type[BaseModel] = Plan) -> str:
    return reply_problem(error, model)


def parse_aggregation_plan(reply_text: str) -> Plan:
    try:
        raw = force_aggregation_arrays(parse_json_response(reply_text))
        return Plan.model_validate(raw)
    except (JsonResponseError, ValueError, ValidationError) as error:
        raise PlanInvalid(f"aggregation planner output is not a valid plan: {reply_problem(error, Plan)}") from None
