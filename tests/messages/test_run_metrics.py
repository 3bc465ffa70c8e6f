"""The run's counters: each step's result adds to the counters of the same name (a few renamed), and
the ledger row keeps exactly its keys."""

from __future__ import annotations

import random
import uuid

import pytest
from pydantic import BaseModel

from domain.pricing import TokenCounts
from messages.compile import (
    AggregationApplyResult,
    AggregationPlanResult,
    AggregationResolveResult,
    ApplyBatchResult,
    ResolvePlanResult,
)
from messages.run_metrics import RunMetrics

LEDGER_KEYS = [
    "records_read", "batches", "pages_created", "pages_upserted", "sections_rewritten", "sections_written",
    "sections_skipped", "unresolved_upserted", "unresolved_promoted", "promotions_refused", "planner_calls",
    "batched_planner_calls", "section_writer_calls", "input_tokens", "output_tokens",
    "cache_creation_input_tokens", "cache_read_tokens", "cost_usd", "latency_ms", "planner_input_chars",
    "links_written_deterministic", "links_written_co_mention", "links_upserted", "duplicate_candidates_count",
    "alias_dedup_merged", "fuzzy_dedupe_merges", "ladder_merges", "judged_merges", "judged_apart",
    "unjudged_merge_pairs", "merge_questions", "merge_judge_calls", "merge_judge_failures", "claims_rejected",
    "claims_judged", "claim_judge_failures", "llm_retries",
    "truncations", "interrupted_calls", "invalid_plans", "batch_splits", "plans_ahead", "plans_ahead_discarded",
    "dropped_invalid_ids", "supersessions_marked", "supersessions_refused", "cap_hit", "continued_as_new", "deterministic_linking_flag_suppressed",
    "skipped_memories", "error", "aggregation_planner_calls", "aggregation_input_tokens",
    "aggregation_output_tokens", "deterministic_parents_derived", "parent_sections_updated", "sections_promoted",
    "duplicate_candidates_cross_type", "rollup_children_rejected", "section_promotions_refused",
    "aggregation_error",
]

# result counter -> run counter it adds to, per kind of result (the other numbers are not run counters)
USAGE = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
         "cache_creation_input_tokens": "cache_creation_input_tokens",
         "cache_read_input_tokens": "cache_read_tokens", "cost_usd": "cost_usd"}
RESOLUTION = {name: name for name in ("sections_skipped", "dropped_invalid_ids", "alias_dedup_merged",
                                      "fuzzy_dedupe_merges", "ladder_merges", "judged_merges", "judged_apart",
                                      "unjudged_merge_pairs", "promotions_refused")}
APPLY = {name: name for name in ("pages_created", "pages_upserted", "sections_rewritten", "sections_written",
                                 "unresolved_upserted", "unresolved_promoted", "links_upserted",
                                 "links_written_deterministic", "links_written_co_mention", "dropped_invalid_ids",
                                 "supersessions_marked", "supersessions_refused")}
AGGREGATION_RESOLUTION = {"dropped_invalid_ids": "dropped_invalid_ids",
                          "duplicate_candidates_cross_type": "duplicate_candidates_cross_type",
                          "rollup_children_rejected": "rollup_children_rejected",
                          "promotions_refused": "section_promotions_refused"}
AGGREGATION_APPLY = {name: name for name in ("pages_created", "pages_upserted", "parent_sections_updated",
                                             "sections_rewritten", "sections_promoted", "links_upserted")}


def _filled(model: type[BaseModel], rng: random.Random, **fixed: object) -> BaseModel:
    """The model with a random value in every numeric field."""
    values: dict[str, object] = {}
    for name, info in model.model_fields.items():
        if info.annotation in (int, "int"):
            values[name] = rng.randint(1, 10_000)
        elif info.annotation in (float, "float"):
            values[name] = round(rng.uniform(0, 5), 6)
    return model.model_validate({**values, **fixed})


def _started(rng: random.Random) -> RunMetrics:
    return _filled(RunMetrics, rng)  # type: ignore[return-value]


def _expected(before: RunMetrics, result: BaseModel, mapping: dict[str, str]) -> dict:
    expected = before.model_dump()
    for source, target in mapping.items():
        total = expected[target] + getattr(result, source)
        expected[target] = round(total, 6) if isinstance(total, float) else total
    return expected


@pytest.mark.parametrize("seed", range(20))
def test_each_result_adds_to_its_run_counters_and_to_nothing_else(seed: int) -> None:
    rng = random.Random(seed)
    plan_id = uuid.uuid4()
    cases = [
        ("add_usage", _filled(TokenCounts, rng), USAGE),
        ("add_resolution", _filled(ResolvePlanResult, rng, plan_id=plan_id), RESOLUTION),
        ("add_apply", _filled(ApplyBatchResult, rng), APPLY),
        ("add_aggregation_resolution", _filled(AggregationResolveResult, rng, plan_id=plan_id),
         AGGREGATION_RESOLUTION),
        ("add_aggregation_apply", _filled(AggregationApplyResult, rng), AGGREGATION_APPLY),
    ]
    for method, result, mapping in cases:
        metrics = _started(rng)
        expected = _expected(metrics, result, mapping)
        getattr(metrics, method)(result)
        assert metrics.model_dump() == expected, method


@pytest.mark.parametrize("skipped", [False, True])
def test_an_aggregation_plan_counts_its_parents_and_its_call_unless_skipped(skipped: bool) -> None:
    rng = random.Random(3)
    usage = _filled(TokenCounts, rng)
    planned = _filled(AggregationPlanResult, rng, plan_id=uuid.uuid4(), usage=usage, skipped=skipped)
    metrics = _started(rng)
    expected = metrics.model_dump()
    expected["deterministic_parents_derived"] += planned.deterministic_parents_derived
    if not skipped:
        expected["aggregation_planner_calls"] += 1
        expected["aggregation_input_tokens"] += usage.input_tokens + usage.cache_read_input_tokens
        expected["aggregation_output_tokens"] += usage.output_tokens
        expected["cost_usd"] = round(expected["cost_usd"] + usage.cost_usd, 6)
    metrics.add_aggregation_planning(planned)
    assert metrics.model_dump() == expected


def test_the_ledger_row_keeps_its_keys_and_leaves_out_what_is_unset() -> None:
    assert list(RunMetrics(cap_hit="max_records", error="x", aggregation_error="y",
                           batched_planner_calls=1).as_ledger()) == LEDGER_KEYS
    absent = {"cap_hit", "error", "aggregation_error", "batched_planner_calls"}
    assert list(RunMetrics().as_ledger()) == [key for key in LEDGER_KEYS if key not in absent]
