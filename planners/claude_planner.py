"""The Claude planner behind the port: prompts built from the context, one model call, the reply
validated against the plan contract.

An unusable reply (cut off, or not the contract) was still paid for: its priced tokens travel on
the error, so the run's ledger counts them.
"""

from __future__ import annotations

import json
import logging

from pydantic import ValidationError

from domain.context import MemoryRecord, PlannerContext
from domain.errors import ModelTruncated, PlanInvalid
from domain.guards import JsonResponseError, parse_json_response
from domain.plan import Plan
from domain.pricing import TokenUsage, priced
from domain.resolution import MergeQuestion
from domain.resolved_plan import SectionTask
from planners.claude_client import ModelClient
from planners.judge_prompt import JUDGE_REPLY_SCHEMA, JUDGE_SYSTEM, build_judge_prompt, parse_judge_reply
from planners.port import AggregationRequest, JudgeReply, PlanReply, SectionReply
from planners.prompts import (
    AGGREGATION_REPLY_SCHEMA,
    PLANNER_REPLY_SCHEMA,
    SECTION_WRITER_SYSTEM,
    build_aggregation_prompt,
    build_planner_prompt,
    build_section_writer_prompt,
    force_aggregation_arrays,
)
from planners.scripted import scripted_write_section

log = logging.getLogger(__name__)
PLANNER_MAX_TOKENS = 24_000
WRITER_MAX_TOKENS = 2_048
AGGREGATION_MAX_TOKENS = 16_000
JUDGE_MAX_TOKENS = 8_000


class ClaudePlanner:
    reads_possible_children = False

    def __init__(self, client: ModelClient) -> None:
        self._client = client

    async def plan_batch(self, context: PlannerContext, model_id: str) -> PlanReply:
        prompt = build_planner_prompt(context)
        try:
            reply = await self._client.complete(model=model_id, system=prompt.system, stable_user=prompt.stable_user,
                                                batch_user=prompt.batch_user, max_tokens=PLANNER_MAX_TOKENS,
                                                json_schema=PLANNER_REPLY_SCHEMA)
            try:
                plan = parse_plan(reply.text)
            except PlanInvalid as error:
                error.spent = reply.usage
                raise
        except (ModelTruncated, PlanInvalid) as error:
            raise _priced_error(error, model_id) from None
        return PlanReply(plan=plan, usage=priced(model_id, reply.usage), input_chars=prompt.chars)

    async def write_section(self, task: SectionTask, cited: list[MemoryRecord], model_id: str) -> SectionReply:
        """The writer's body; a reply cut off or empty falls back to the proposal merged into the
        existing body (what the scripted writer does), so one long section never fails a compile."""
        prompt = build_section_writer_prompt(task.page_title, task.page_type, task.slug, task.heading,
                                             task.existing_body, task.proposed_body, [m.content for m in cited])
        try:
            reply = await self._client.complete(model=model_id, system=SECTION_WRITER_SYSTEM, batch_user=prompt,
                                                max_tokens=WRITER_MAX_TOKENS)
        except ModelTruncated as error:
            log.warning("section writer output truncated; keeping the merged proposal: %s", error)
            spent = error.spent if isinstance(error.spent, TokenUsage) else TokenUsage()
            return SectionReply(body=scripted_write_section(task.existing_body, task.proposed_body),
                                usage=priced(model_id, spent))
        body = reply.text.strip()
        if not body:
            log.warning("section writer returned an empty body; keeping the merged proposal")
            body = scripted_write_section(task.existing_body, task.proposed_body)
        return SectionReply(body=body, usage=priced(model_id, reply.usage))

    async def plan_aggregation(self, request: AggregationRequest, model_id: str) -> PlanReply:
        prompt = build_aggregation_prompt(request.pages, request.candidates, request.inbound_links)
        try:
            reply = await self._client.complete(model=model_id, system=prompt.system, batch_user=prompt.batch_user,
                                                max_tokens=AGGREGATION_MAX_TOKENS,
                                                json_schema=AGGREGATION_REPLY_SCHEMA)
            try:
                plan = parse_aggregation_plan(reply.text)
            except PlanInvalid as error:
                error.spent = reply.usage
                raise
        except (ModelTruncated, PlanInvalid) as error:
            raise _priced_error(error, model_id) from None
        return PlanReply(plan=plan, usage=priced(model_id, reply.usage), input_chars=prompt.chars)


    async def judge_merges(self, questions: list[MergeQuestion], model_id: str) -> JudgeReply:
        if not questions:
            return JudgeReply(decisions=[], usage=priced(model_id, TokenUsage()))
        prompt = build_judge_prompt(questions)
        try:
            reply = await self._client.complete(model=model_id, system=JUDGE_SYSTEM, batch_user=prompt.batch_user,
                                                max_tokens=JUDGE_MAX_TOKENS, json_schema=JUDGE_REPLY_SCHEMA)
            try:
                decisions = parse_judge_reply(reply.text, prompt.keys)
            except PlanInvalid as error:
                error.spent = reply.usage
                raise
        except (ModelTruncated, PlanInvalid) as error:
            raise _priced_error(error, model_id) from None
        return JudgeReply(decisions=decisions, usage=priced(model_id, reply.usage))


def _priced_error(error: ModelTruncated | PlanInvalid, model_id: str) -> ModelTruncated | PlanInvalid:
    spent = error.spent if isinstance(error.spent, TokenUsage) else TokenUsage()
    error.spent = priced(model_id, spent)
    return error


def parse_plan(reply_text: str) -> Plan:
    """The model's answer as a Plan, or PlanInvalid (the workflow retries once, then splits)."""
    try:
        raw = parse_json_response(reply_text)
    except (JsonResponseError, json.JSONDecodeError, ValueError) as error:
        raise PlanInvalid(f"planner output is not JSON: {error}") from None
    if isinstance(raw, dict) and isinstance(raw.get("plan"), dict) and "pageUpdates" not in raw:
        raw = raw["plan"]  # some models wrap the tool input once more
    try:
        return Plan.model_validate(raw)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in item['loc']) or 'plan'}: {item['msg']}" for item in error.errors()[:5])
        raise PlanInvalid(f"planner output does not match the plan contract: {problems}") from None


def parse_aggregation_plan(reply_text: str) -> Plan:
    try:
        raw = force_aggregation_arrays(parse_json_response(reply_text))
        return Plan.model_validate(raw)
    except (JsonResponseError, ValueError, ValidationError) as error:
        raise PlanInvalid(f"aggregation planner output is not a valid plan: {str(error)[:300]}") from None
