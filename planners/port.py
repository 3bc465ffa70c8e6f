"""The planner port: what a compile asks of a model, answered by Claude or by the scripted planner.

The worker's composition root picks one implementation (`WIKI_LLM`); the activities load the
context from the store, call the port and store what it returns, the same for both. A planner
never touches the database and never sees Temporal: failures are `domain.errors.StepFailed`.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from domain.claim_judge import ClaimQuestion, ClaimVerdict
from domain.context import AggregationPage, AggregationParentCandidate, MemoryRecord, PlannerContext
from domain.merge_questions import MergeDecision, MergeQuestion
from domain.plan import Plan
from domain.resolved_plan import SectionTask
from messages.compile import TokenCounts


class PlanReply(BaseModel):
    plan: Plan
    usage: TokenCounts
    # Characters of the prompt the planner was (or, for the scripted planner, would have been) sent.
    input_chars: int = 0
    # References in the reply that were not handles the prompt showed (planners/handles.py).
    unknown_handles: int = 0


class SectionReply(BaseModel):
    body: str
    usage: TokenCounts
    # Written in code from the lines the section already had and the plan's (an append, a fold of
    # dated lines: planners/section_fold.py), no model's words: it needs no grounding check.
    derived: bool = False


class JudgeReply(BaseModel):
    decisions: list[MergeDecision]
    usage: TokenCounts


class ClaimJudgeReply(BaseModel):
    verdicts: list[ClaimVerdict]
    usage: TokenCounts


class AggregationRequest(BaseModel):
    pages: list[AggregationPage]
    candidates: list[AggregationParentCandidate]
    inbound_links: dict[str, int] = Field(default_factory=dict)  # page id -> inbound reference links
    # Pages that could sit under a candidate hub; read only for planners that ask for them.
    possible_children: list[AggregationPage] = Field(default_factory=list)


class Planner(Protocol):
    # True when judge_claims asks a model. The scripted planner reads no line: offline nothing is
    # judged, and every line that is neither quoted nor derived stays unverified.
    judges_claims: bool
    # True when plan_aggregation needs AggregationRequest.possible_children (a database read).
    reads_possible_children: bool
    # True when write_section rebuilds a section from every memory it cites, so `cited` must hold the
    # memories the section cited before as well as the task's (a database read).
    rewrites_from_sources: bool

    async def plan_batch(self, context: PlannerContext, model_id: str) -> PlanReply:
        """The leaf plan of one batch of memories."""
        ...

    async def write_section(self, task: SectionTask, cited: list[MemoryRecord], model_id: str) -> SectionReply:
        """The section's new body, merging the proposal into the existing body. `cited` holds the
        task's memories, and the section's earlier ones when `rewrites_from_sources`."""
        ...

    async def plan_aggregation(self, request: AggregationRequest, model_id: str) -> PlanReply:
        """Hubs, rollups and section promotions over the pages a run changed."""
        ...

    async def judge_merges(self, questions: list[MergeQuestion], model_id: str) -> JudgeReply:
        """For each ambiguous pair of a batch (domain/resolution.py), whether it is one thing: one call
        for them all. A pair left without a decision does not merge."""
        ...

    async def judge_claims(self, questions: list[ClaimQuestion], model_id: str) -> ClaimJudgeReply:
        """Whether the memories each line cites support it (domain/claim_judge.py): a model reads the
        lines and the memories, several lines per call, each memory sent once, with a prompt of its own
        (never the writer's). A line left without a verdict stays unverified. A planner with no model
        (`judges_claims` False) is never asked."""
        ...
