"""The scripted planner behind the port: deterministic plans from the memories' metadata hints.

It runs the whole product offline (demo, tests, benchmarks) with identical output each time. It
plans from the leaf prompt's view of the context (`planner_view`: what Claude would be shown, bounds
applied), never from more. Its token counts are what the same call would have cost with Claude,
estimated from the prompt that would have been sent at four characters a token: the system prompt
as a cache read only when it is long enough for the model to cache it (as the model gateway marks
it), the rest as fresh input, the plan as output.
"""

from __future__ import annotations

import asyncio

from domain.claim_judge import ClaimQuestion
from domain.context import MemoryRecord, PlannerContext
from domain.merge_questions import MergeQuestion
from domain.pricing import TokenUsage, cache_prefix_worthwhile, estimate_tokens, priced
from domain.resolved_plan import SectionTask
from planners.cpu_pool import off_loop
from planners.judge_prompt import JUDGE_SYSTEM, build_judge_prompt
from planners.port import AggregationRequest, ClaimJudgeReply, JudgeReply, PlanReply, SectionReply
from planners.prompts import (
    PLANNER_REPLY_SCHEMA,
    SECTION_WRITER_SYSTEM,
    PlannerPrompt,
    build_aggregation_prompt,
    build_planner_prompt,
    planner_view,
    to_json,
)
from planners.scripted.aggregation import evidence_now, scripted_aggregation_plan
from planners.scripted.judgement import scripted_judgement
from planners.scripted.leaf_plan import scripted_plan, scripted_rewrite_section


class ScriptedPlanner:
    # No model reads a line offline: the gate asks no judge, and no line is verified.
    judges_claims = False
    reads_possible_children = True
    # Sections are rebuilt from every memory they cite (planners/scripted/condense.py).
    rewrites_from_sources = True

    def __init__(self, latency_seconds: float = 0.0) -> None:
        # Simulated model latency per call (benchmarks only); 0 in tests and the demo.
        self._latency = latency_seconds

    async def _wait(self) -> None:
        if self._latency:
            await asyncio.sleep(self._latency)

    # Every answer is computed, for seconds on a large section: off the event loop (planners/cpu_pool.py).

    async def plan_batch(self, context: PlannerContext, model_id: str) -> PlanReply:
        await self._wait()
        return await off_loop(_plan_batch, context, model_id)

    async def write_section(self, task: SectionTask, cited: list[MemoryRecord], model_id: str) -> SectionReply:
        await self._wait()
        return await off_loop(_write_section, task, cited, model_id)

    async def plan_aggregation(self, request: AggregationRequest, model_id: str) -> PlanReply:
        return await off_loop(_plan_aggregation, request, model_id)

    async def judge_claims(self, questions: list[ClaimQuestion], model_id: str) -> ClaimJudgeReply:
        """No verdict: offline nothing reads a line (`judges_claims` is False, so the gate never asks)."""
        return ClaimJudgeReply(verdicts=[], usage=priced(model_id, TokenUsage()))

    async def judge_merges(self, questions: list[MergeQuestion], model_id: str) -> JudgeReply:
        await self._wait()
        return await off_loop(_judge_merges, questions, model_id)


def _plan_batch(context: PlannerContext, model_id: str) -> PlanReply:
    prompt = build_planner_prompt(context)
    plan = scripted_plan(planner_view(context))
    usage = _estimated_usage(model_id, prompt, len(to_json(PLANNER_REPLY_SCHEMA)), plan.model_dump_json())
    return PlanReply(plan=plan, usage=priced(model_id, usage), input_chars=prompt.chars)


def _write_section(task: SectionTask, cited: list[MemoryRecord], model_id: str) -> SectionReply:
    body = scripted_rewrite_section(task, cited)
    # Priced as Claude's writer would be: it is shown the task's memories, not the older ones.
    task_refs = set(task.source_refs)
    prompt_chars = len(task.existing_body or "") + len(task.proposed_body) + sum(
        len(m.content) for m in cited if str(m.id) in task_refs)
    usage = TokenUsage(input_tokens=estimate_tokens(prompt_chars + len(SECTION_WRITER_SYSTEM)),
                       output_tokens=estimate_tokens(len(body)))
    return SectionReply(body=body, usage=priced(model_id, usage))


def _plan_aggregation(request: AggregationRequest, model_id: str) -> PlanReply:
    prompt = build_aggregation_prompt(request.pages, request.candidates, request.inbound_links)
    plan = scripted_aggregation_plan(request.pages, request.candidates, request.possible_children,
                                     evidence_now(request))
    usage = _estimated_usage(model_id, prompt, 0, plan.model_dump_json())
    return PlanReply(plan=plan, usage=priced(model_id, usage), input_chars=prompt.chars)


def _judge_merges(questions: list[MergeQuestion], model_id: str) -> JudgeReply:
    decisions = [scripted_judgement(question) for question in questions]
    prompt = build_judge_prompt(questions)
    usage = TokenUsage(input_tokens=estimate_tokens(len(JUDGE_SYSTEM) + len(prompt.batch_user)),
                       output_tokens=estimate_tokens(sum(len(d.model_dump_json()) for d in decisions)))
    return JudgeReply(decisions=decisions, usage=priced(model_id, usage))


def _estimated_usage(model_id: str, prompt: PlannerPrompt, schema_chars: int, reply: str) -> TokenUsage:
    """Tokens of the call Claude would get: the stable prefix (tool schema and system prompt) read from
    the cache only when it is long enough for the model to cache; everything else fresh input."""
    prefix = estimate_tokens(len(prompt.system) + schema_chars)
    user = estimate_tokens(len(prompt.user))
    cached = cache_prefix_worthwhile(model_id, prefix)
    return TokenUsage(input_tokens=user + (0 if cached else prefix), cache_read_input_tokens=prefix if cached else 0,
                      output_tokens=estimate_tokens(len(reply)))
