"""Model-calling activities: the leaf planner and the section writer.

Both load what they need from Postgres by id and store what they produce there (the plan staging
table), so workflow history only carries ids and token counts. `WIKI_LLM` picks Claude (Anthropic
API or Bedrock, through the anthropic SDK) or the deterministic scripted planner; everything
around the call — context loading, validation, staging — is the same for both.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from pydantic import ValidationError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities import error_types
from activities.heartbeat import heartbeating
from domain.compile_messages import (
    PlanBatchInput,
    PlanBatchResult,
    TokenCounts,
    WriteSectionInput,
    WriteSectionResult,
)
from domain.context import PlannerContext
from domain.guards import JsonResponseError, parse_json_response, strip_wikilinks
from domain.plan import Plan
from domain.pricing import TokenUsage, cost_usd
from planners.claude_client import ModelClient
from planners.prompts import (
    PLANNER_REPLY_SCHEMA,
    SECTION_WRITER_SYSTEM,
    build_planner_prompt,
    build_section_writer_prompt,
)
from planners.scripted import scripted_plan, scripted_write_section
from runtime.settings import Settings
from store.memories import load_memories
from store.plan_staging import stage_plan
from store.scope_reads import candidate_pages, names_in_batch, open_mentions

log = logging.getLogger(__name__)
PLANNER_MAX_TOKENS = 24_000
WRITER_MAX_TOKENS = 2_048
MAX_OPEN_MENTIONS = 100  # the batch's own names first, then the most seen


def build_model_client(settings: Settings) -> ModelClient | None:
    """None for the scripted planner; otherwise the SDK client (its own retries off: Temporal retries)."""
    if settings.llm == "scripted":
        return None
    api_key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
    return ModelClient(provider=settings.llm, api_key=api_key, aws_region=settings.aws_region)


def estimate_tokens(chars: int) -> int:
    return (chars + 3) // 4


def _counts(model_id: str, usage: TokenUsage) -> TokenCounts:
    return TokenCounts(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
        cost_usd=cost_usd(model_id, usage),
    )


class Planning:
    def __init__(self, engine: AsyncEngine, settings: Settings, model_client: ModelClient | None) -> None:
        self._engine = engine
        self._model = model_client
        self._latency = settings.scripted_latency_ms / 1000

    # ------------------------------------------------------------------ planner

    @activity.defn(name="llm.plan_batch")
    @heartbeating
    async def plan_batch(self, request: PlanBatchInput) -> PlanBatchResult:
        scope = request.scope
        async with self._engine.connect() as conn:
            memories = await load_memories(conn, scope.tenant, scope.owner, request.memory_ids)
            names = names_in_batch(memories)
            pages = await candidate_pages(conn, scope.tenant, scope.owner, names, request.max_candidate_pages)
            mentions = await open_mentions(conn, scope.tenant, scope.owner, names, MAX_OPEN_MENTIONS,
                                           request.promotion_mention_ids)
        context = PlannerContext(
            tenant_id=scope.tenant, owner_id=scope.owner, memories=memories, candidate_pages=pages,
            open_mentions=mentions, promotion_candidate_ids=request.promotion_mention_ids,
        )
        prompt = build_planner_prompt(context)
        input_chars = len(prompt.system) + len(prompt.stable_user) + len(prompt.batch_user)
        if self._model is None:
            plan, usage = await self._scripted(context, prompt)
        else:
            try:
                plan, usage = await self._claude(request.model_id, prompt)
            except ApplicationError as error:
                if error.type not in (error_types.LLM_TRUNCATED, error_types.PLAN_INVALID):
                    raise
                # A cut-off or unusable reply was paid for: its priced tokens ride on the error for the ledger.
                spent = TokenUsage.model_validate(error.details[0]) if error.details else TokenUsage()
                raise ApplicationError(error.message, _counts(request.model_id, spent).model_dump(),
                                       type=error.type, non_retryable=True) from None
        if plan.dropped_links:
            log.warning("planner sent %d malformed page links; dropped", plan.dropped_links)
        await self._stage_plan(request, plan)
        return PlanBatchResult(plan_id=request.plan_id, usage=_counts(request.model_id, usage),
                               planner_input_chars=input_chars, dropped_invalid_links=plan.dropped_links)

    async def _scripted(self, context: PlannerContext, prompt) -> tuple[Plan, TokenUsage]:
        if self._latency:
            await asyncio.sleep(self._latency)  # simulated model latency (benchmarks only)
        plan = scripted_plan(context)
        # What the same call would have cost with Claude: the system prompt and the scope's pages are
        # the cached prefix, the batch is fresh input, the plan is the output.
        usage = TokenUsage(
            input_tokens=estimate_tokens(len(prompt.batch_user)),
            cache_read_input_tokens=estimate_tokens(len(prompt.system) + len(prompt.stable_user)),
            output_tokens=estimate_tokens(len(plan.model_dump_json())),
        )
        return plan, usage

    async def _claude(self, model_id: str, prompt) -> tuple[Plan, TokenUsage]:
        reply = await self._model.complete(model=model_id, system=prompt.system, stable_user=prompt.stable_user,
                                           batch_user=prompt.batch_user, max_tokens=PLANNER_MAX_TOKENS,
                                           json_schema=PLANNER_REPLY_SCHEMA)
        try:
            return parse_plan(reply.text), reply.usage
        except ApplicationError as error:
            # The unusable reply was still paid for: its tokens travel with the error.
            raise ApplicationError(error.message, reply.usage.model_dump(), type=error.type,
                                   non_retryable=True) from None

    async def _stage_plan(self, request: PlanBatchInput, plan: Plan) -> None:
        async with self._engine.begin() as conn:
            await stage_plan(conn, request.plan_id, request.scope, request.run_id, request.memory_ids, plan)

    # ------------------------------------------------------------------ section writer

    @activity.defn(name="llm.write_section")
    @heartbeating
    async def write_section(self, request: WriteSectionInput) -> WriteSectionResult:
        scope = request.scope
        async with self._engine.connect() as conn:
            # Only this task's entry of the resolved plan: a batch runs a dozen or more writers at once,
            # and each parsing the whole document cost more than its database round trip.
            task: dict[str, Any] | None = (await conn.execute(text("""
                SELECT resolved -> 'tasks' -> CAST(:key AS text) FROM wiki_compile_plans
                WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner
            """), {"id": request.plan_id, "tenant": scope.tenant, "owner": scope.owner,
                   "key": request.task_key})).scalar_one_or_none()
            if not isinstance(task, dict):
                raise ApplicationError(f"section task {request.task_key} of plan {request.plan_id} not found",
                                       type=error_types.SCOPE_VIOLATION, non_retryable=True)
            cited = await load_memories(conn, scope.tenant, scope.owner, task["source_refs"])
        if self._model is None:
            if self._latency:
                await asyncio.sleep(self._latency)
            body = scripted_write_section(task["existing_body"], task["proposed_body"])
            prompt_chars = len(task["existing_body"] or "") + len(task["proposed_body"]) + sum(
                len(m.content) for m in cited)
            usage = TokenUsage(input_tokens=estimate_tokens(prompt_chars + len(SECTION_WRITER_SYSTEM)),
                               output_tokens=estimate_tokens(len(body)))
        else:
            prompt = build_section_writer_prompt(
                task["page_title"], task["page_type"], task["slug"], task["heading"], task["existing_body"],
                task["proposed_body"], [m.content for m in cited],
            )
            body, usage = await self._claude_section(request.model_id, prompt, task)
        async with self._engine.begin() as conn:
            await conn.execute(text("""
                INSERT INTO wiki_compile_section_drafts (plan_id, task_key, body_md) VALUES (:plan, :key, :body)
                ON CONFLICT (plan_id, task_key) DO UPDATE SET body_md = excluded.body_md
            """), {"plan": request.plan_id, "key": request.task_key, "body": strip_wikilinks(body)})
        return WriteSectionResult(task_key=request.task_key, usage=_counts(request.model_id, usage))


    async def _claude_section(self, model_id: str, prompt: str, task: dict[str, Any]) -> tuple[str, TokenUsage]:
        """The writer's body; a reply cut off or empty falls back to the proposal merged into the
        existing body (what the scripted writer does), so one long section never fails a compile."""
        try:
            reply = await self._model.complete(model=model_id, system=SECTION_WRITER_SYSTEM, batch_user=prompt,
                                               max_tokens=WRITER_MAX_TOKENS)
        except ApplicationError as error:
            if error.type != error_types.LLM_TRUNCATED:
                raise
            log.warning("section writer output truncated; keeping the merged proposal: %s", error)
            spent = TokenUsage.model_validate(error.details[0]) if error.details else TokenUsage()
            return scripted_write_section(task["existing_body"], task["proposed_body"]), spent
        body = reply.text.strip()
        if not body:
            log.warning("section writer returned an empty body; keeping the merged proposal")
            body = scripted_write_section(task["existing_body"], task["proposed_body"])
        return body, reply.usage


def parse_plan(reply_text: str) -> Plan:
    """The model's answer as a Plan, or a PlanInvalid error (the workflow retries once, then splits)."""
    try:
        raw = parse_json_response(reply_text)
    except (JsonResponseError, json.JSONDecodeError, ValueError) as error:
        raise ApplicationError(f"planner output is not JSON: {error}", type=error_types.PLAN_INVALID,
                               non_retryable=True) from None
    if isinstance(raw, dict) and isinstance(raw.get("plan"), dict) and "pageUpdates" not in raw:
        raw = raw["plan"]  # some models wrap the tool input once more
    try:
        return Plan.model_validate(raw)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in item['loc']) or 'plan'}: {item['msg']}" for item in error.errors()[:5])
        raise ApplicationError(f"planner output does not match the plan contract: {problems}",
                               type=error_types.PLAN_INVALID, non_retryable=True) from None
