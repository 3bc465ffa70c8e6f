"""The scripted planner behind the port: deterministic plans from the memories' metadata hints.

It runs the whole product offline (demo, tests, benchmarks) with identical output each time. Its
token counts are what the same call would have cost with Claude, estimated from the prompt that
would have been sent: the system prompt and the scope's pages as the cached prefix, the batch as
fresh input, the plan as output.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from domain.context import MemoryRecord, PlannerContext
from domain.pricing import TokenUsage, estimate_tokens, priced
from domain.resolution import MergeQuestion, scripted_judgement
from domain.resolved_plan import SectionTask
from planners.judge_prompt import JUDGE_SYSTEM, build_judge_prompt
from planners.port import AggregationRequest, JudgeReply, PlanReply, SectionReply
from planners.prompts import SECTION_WRITER_SYSTEM, build_aggregation_prompt, build_planner_prompt
from planners.scripted import scripted_plan, scripted_write_section
from planners.scripted_aggregation import scripted_aggregation_plan


class ScriptedPlanner:
    reads_possible_children = True

    def __init__(self, latency_seconds: float = 0.0) -> None:
        # Simulated model latency per call (benchmarks only); 0 in tests and the demo.
        self._latency = latency_seconds

    async def _wait(self) -> None:
        if self._latency:
            await asyncio.sleep(self._latency)

    async def plan_batch(self, context: PlannerContext, model_id: str) -> PlanReply:
        prompt = build_planner_prompt(context)
        await self._wait()
        plan = scripted_plan(context)
        usage = TokenUsage(
            input_tokens=estimate_tokens(len(prompt.batch_user)),
            cache_read_input_tokens=estimate_tokens(len(prompt.system) + len(prompt.stable_user)),
            output_tokens=estimate_tokens(len(plan.model_dump_json())),
        )
        return PlanReply(plan=plan, usage=priced(model_id, usage), input_chars=prompt.chars)

    async def write_section(self, task: SectionTask, cited: list[MemoryRecord], model_id: str) -> SectionReply:
        await self._wait()
        body = scripted_write_section(task.existing_body, task.proposed_body)
        prompt_chars = len(task.existing_body or "") + len(task.proposed_body) + sum(len(m.content) for m in cited)
        usage = TokenUsage(input_tokens=estimate_tokens(prompt_chars + len(SECTION_WRITER_SYSTEM)),
                           output_tokens=estimate_tokens(len(body)))
        return SectionReply(body=body, usage=priced(model_id, usage))

    async def plan_aggregation(self, request: AggregationRequest, model_id: str) -> PlanReply:
        prompt = build_aggregation_prompt(request.pages, request.candidates, request.inbound_links)
        plan = scripted_aggregation_plan(request.pages, request.candidates, request.possible_children,
                                         datetime.now().astimezone())
        usage = TokenUsage(input_tokens=estimate_tokens(len(prompt.batch_user)),
                           cache_read_input_tokens=estimate_tokens(len(prompt.system)),
                           output_tokens=estimate_tokens(len(plan.model_dump_json())))
        return PlanReply(plan=plan, usage=priced(model_id, usage), input_chars=prompt.chars)

    async def judge_merges(self, questions: list[MergeQuestion], model_id: str) -> JudgeReply:
        await self._wait()
        decisions = [scripted_judgement(question) for question in questions]
        prompt = build_judge_prompt(questions)
        usage = TokenUsage(input_tokens=estimate_tokens(len(JUDGE_SYSTEM) + len(prompt.batch_user)),
                           output_tokens=estimate_tokens(sum(len(d.model_dump_json()) for d in decisions)))
        return JudgeReply(decisions=decisions, usage=priced(model_id, usage))
