"""The run's counters, kept by the workflow and written to the ledger row, one metric key per field."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from domain.pricing import TokenCounts
from messages.compile import (
    AggregationApplyResult,
    AggregationPlanResult,
    AggregationResolveResult,
    ApplyBatchResult,
    PlanBatchResult,
    ResolvePlanResult,
)


class RunMetrics(BaseModel):
    records_read: int = 0
    batches: int = 0
    pages_created: int = 0
    pages_upserted: int = 0
    sections_rewritten: int = 0
    sections_written: int = 0
    sections_skipped: int = 0
    unresolved_upserted: int = 0
    unresolved_promoted: int = 0
    promotions_refused: int = 0
    planner_calls: int = 0
    # Of planner_calls, those answered through a Message Batch (at half price); left out of the ledger when 0.
    batched_planner_calls: int = 0
    # Section writer, aggregation planner and merge judge calls sent to a Message Batch (a bulk
    # compile's, workflows/compile_batched_calls.py); left out of the ledger when 0.
    batched_model_calls: int = 0
    section_writer_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: int = 0
    planner_input_chars: int = 0
    links_written_deterministic: int = 0
    links_written_co_mention: int = 0
    links_upserted: int = 0
    duplicate_candidates_count: int = 0
    alias_dedup_merged: int = 0
    fuzzy_dedupe_merges: int = 0
    ladder_merges: int = 0
    judged_merges: int = 0
    judged_apart: int = 0
    unjudged_merge_pairs: int = 0
    merge_questions: int = 0  # ambiguous pairs sent to the judge
    merge_judge_calls: int = 0
    merge_judge_failures: int = 0  # judge activities that failed: their batch merged no ambiguous pair
    # The verification gate: proposed lines rejected (never applied), lines the judge scored, judge
    # calls that failed (their lines stay unverified).
    claims_rejected: int = 0
    claims_judged: int = 0
    claim_judge_failures: int = 0
    llm_retries: int = 0
    truncations: int = 0
    # Model calls cut short (deadline, stall, stream broken): retried by the workflow, then split.
    interrupted_calls: int = 0
    invalid_plans: int = 0
    batch_splits: int = 0
    # Batches planned while the previous batch's sections were written, and such plans left unused
    # (a cap ended the run after the previous batch: the next run plans that batch again).
    plans_ahead: int = 0
    plans_ahead_discarded: int = 0
    dropped_invalid_ids: int = 0
    # Marks that a line replaces an older one as the value of an attribute: kept by apply, and
    # refused (the replaced claim was not on the page, or was newer than the line).
    supersessions_marked: int = 0
    supersessions_refused: int = 0
    cap_hit: str | None = None
    continued_as_new: bool = False
    deterministic_linking_flag_suppressed: bool = False
    skipped_memories: list[str] = Field(default_factory=list)
    error: str | None = None
    # aggregation pass: hubs, rollups, section promotion (its tokens are in cost_usd too: the run's cost is all of it)
    aggregation_planner_calls: int = 0
    aggregation_input_tokens: int = 0
    aggregation_output_tokens: int = 0
    deterministic_parents_derived: int = 0
    parent_sections_updated: int = 0
    sections_promoted: int = 0
    duplicate_candidates_cross_type: int = 0
    rollup_children_rejected: int = 0
    section_promotions_refused: int = 0
    aggregation_error: str | None = None
    # Forget passes served between batches (docs/operations.md): memories forgotten or edited, and the
    # writer calls that re-derived their sections' lines (their tokens are in cost_usd too).
    forget_passes: int = 0
    memories_forgotten: int = 0
    memories_edited: int = 0
    rederive_calls: int = 0
    # Forget passes whose provider step (deleting the scope's Message Batches) failed for good.
    provider_erasures_failed: int = 0

    def _add(self, result: BaseModel, *, renamed: Mapping[str, str] | None = None,
             not_counters: frozenset[str] = frozenset()) -> None:
        """Add every number of `result` to the run counter of the same name (or the one `renamed` gives),
        except those in `not_counters`. A number with no run counter of its name fails here: a new
        counter on a step's result is either summed or declared not to be one."""
        renamed = renamed or {}
        for name, value in result:
            if name in not_counters or isinstance(value, bool) or not isinstance(value, int | float):
                continue
            counter = renamed.get(name, name)
            total = getattr(self, counter) + value
            setattr(self, counter, round(total, 6) if isinstance(total, float) else total)

    def add_claim_gate(self, result: PlanBatchResult) -> None:
        self.claims_rejected += result.claims_rejected
        self.claims_judged += result.claims_judged
        self.claim_judge_failures += int(result.claim_judge_failed)
        self.dropped_invalid_ids += result.claims_dropped_invalid_refs

    def add_usage(self, usage: TokenCounts) -> None:
        self._add(usage, renamed={"cache_read_input_tokens": "cache_read_tokens"})

    def add_resolution(self, resolved: ResolvePlanResult) -> None:
        self._add(resolved, not_counters=frozenset({"new_pages_planned"}))

    def add_apply(self, applied: ApplyBatchResult) -> None:
        self._add(applied)

    def add_aggregation_planning(self, planned: AggregationPlanResult) -> None:
        self._add(planned, not_counters=frozenset({"pages_considered"}))
        if planned.skipped:
            return
        self.aggregation_planner_calls += 1
        self.add_aggregation_usage(planned.usage)

    def add_aggregation_usage(self, usage: TokenCounts) -> None:
        """Tokens of an aggregation planner call, usable or not (a cut-off reply is paid for too)."""
        self.aggregation_input_tokens += usage.input_tokens + usage.cache_read_input_tokens
        self.aggregation_output_tokens += usage.output_tokens
        self.cost_usd = round(self.cost_usd + usage.cost_usd, 6)

    def add_aggregation_resolution(self, resolved: AggregationResolveResult) -> None:
        # The aggregation's refused promotions are of sections, not of mentions.
        self._add(resolved, renamed={"promotions_refused": "section_promotions_refused"})

    def add_aggregation_apply(self, applied: AggregationApplyResult) -> None:
        self._add(applied, not_counters=frozenset({"hubs_rescored"}))

    def as_ledger(self) -> dict:
        data = self.model_dump()
        for optional in ("cap_hit", "error", "aggregation_error"):
            if data[optional] is None:
                del data[optional]
        for quiet in ("batched_planner_calls", "batched_model_calls", "forget_passes", "memories_forgotten",
                      "memories_edited", "rederive_calls", "provider_erasures_failed"):
            if not data[quiet]:
                del data[quiet]
        return data
