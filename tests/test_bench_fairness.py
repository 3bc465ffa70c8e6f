"""The fairness benchmark's arithmetic: the small tenants' moments, percentiles, a phase's figures, the
ratios against the idle system and the big tenant alone, and its rows and section on the page."""

from __future__ import annotations

import random

from bench import fairness_report, fairness_trace
from bench.fairness import FairnessWorkload, Phase, percentile, small_schedule
from bench.quota import Charge
from claude_sim import Limits


def test_the_small_tenants_retain_all_their_memories_at_moments_inside_the_window():
    workload = FairnessWorkload(small_tenants=5, small_memories=20, small_retains=2)
    schedule = small_schedule(workload, window_seconds=100.0)
    assert schedule == small_schedule(workload, window_seconds=100.0), "the same moments in every phase"
    assert len(schedule) == 10 and all(0 <= retain.at_seconds <= 100 for retain in schedule)
    assert [retain.at_seconds for retain in schedule] == sorted(retain.at_seconds for retain in schedule)
    for tenant in {retain.tenant for retain in schedule}:
        retained = [memory for retain in schedule if retain.tenant == tenant for memory in retain.memories]
        assert len(retained) == 20 and len({memory.content for memory in retained}) == 20


def test_percentile_is_the_nearest_rank_for_generated_samples():
    rng = random.Random(95)
    for _ in range(200):
        values = sorted(rng.uniform(0, 100) for _ in range(rng.randint(1, 60)))
        p95 = percentile(values, 0.95)
        assert p95 in values
        assert sum(value <= p95 for value in values) >= 0.95 * len(values)
        assert sum(value < p95 for value in values) < 0.95 * len(values)


def _phase(name: str, *, big_seconds: float | None, latencies: list[float]) -> dict:
    phase = Phase(name, wall_seconds=100.0, big_seconds=big_seconds, big_memories=1000 if big_seconds else 0,
                  small_latencies=latencies, load={"start": [1.0, 1.0, 1.0], "end": [2.0, 2.0, 2.0]},
                  admitted=[Charge(float(second), 1, 1000, 500) for second in range(50)])
    return phase.summary(Limits(requests_per_minute=600, input_tokens_per_minute=600_000,
                                output_tokens_per_minute=60_000))


def test_the_ratios_are_against_the_idle_system_and_the_big_tenant_alone():
    phases = {
        "big_alone": _phase("big_alone", big_seconds=100.0, latencies=[]),
        "small_alone": _phase("small_alone", big_seconds=None, latencies=[10.0] * 19 + [20.0]),
        "fairness_on": _phase("fairness_on", big_seconds=120.0, latencies=[12.0] * 19 + [30.0]),
        "fairness_off": _phase("fairness_off", big_seconds=110.0, latencies=[60.0] * 19 + [90.0]),
    }
    workload = {"measured_through": "anthropic-sdk", "big_scopes": 10, "big_memories_per_scope": 100, "window_share": 0.6,
                "small_tenants": 20, "small_memories": 20, "small_retains": 2, "ttft_seconds": 0.6,
                "output_tokens_per_second": 150.0, "requests_per_minute": 600, "input_tokens_per_minute": 600_000,
                "output_tokens_per_minute": 60_000}
    detail = fairness_report.build(workload=workload, calibration={"model_calls": 9, "mean_input_tokens": 1000,
                                                                   "mean_output_tokens": 500, "llm_max_per_second": 1.7},
                                   window_seconds=60.0, phases=phases)
    top = fairness_report.headline(detail)
    # p95 of 20 values is the 19th: 10 s idle, 12 s with fairness, 60 s without.
    assert top["fair_small_tenant_p95_ratio"] == 1.2 and top["fair_off_small_tenant_p95_ratio"] == 6.0
    assert top["fair_big_tenant_throughput_share"] == round(100 / 120, 3)
    assert top["fair_off_big_tenant_throughput_share"] == round(100 / 110, 3)
    assert top["fair_quota_utilisation"] == detail["phases"]["fairness_on"]["quota"]["utilisation"]
    verdicts = {row.key: row.ok for row in fairness_report.rows(detail)}
    assert verdicts["fair_small_tenant_p95_ratio"] is True and verdicts["fair_big_tenant_throughput_share"] is True
    text = "\n".join(fairness_report.section(detail))
    assert "| both, fairness off | 20 | 60.0 s | 60.0 s |" in text
    assert "1.20× their idle p95" in text
    assert "Where the small tenants' time went" not in text, "no traces, no table"
    slow = dict.fromkeys(fairness_trace.BUCKETS, 0.0) | {"model_streaming": 8.0, "activity_queued": 2.5}
    phases["fairness_on"]["small_tenants"]["where_the_time_went"] = {"slowest_retains": slow, "all_retains": slow}
    text = "\n".join(fairness_report.section(detail))
    assert "| both, fairness on | 0.0 s (0.0) | 8.0 s (8.0) | 0.0 s (0.0) | 2.5 s (2.5) |" in text


def test_a_retains_time_is_split_once_between_the_buckets_by_precedence():
    intervals = fairness_trace.Intervals()
    intervals.add("starting", 0.0, 0.5)
    intervals.add("activity_queued", 0.5, 2.0)
    intervals.add("activity_running", 2.0, 7.0)
    intervals.add("model_streaming", 2.0, 6.0)
    intervals.add("workflow_queued", 6.5, 8.0)  # overlaps the running activity: that wins
    assert fairness_trace.breakdown(intervals, 9.0) == {
        "starting": 0.5, "model_streaming": 4.0, "activity_running": 1.0, "activity_queued": 1.5,
        "workflow_queued": 1.0, "workflow_running": 1.0}


def test_generated_spans_always_add_up_to_the_latency():
    rng = random.Random(7)
    for _ in range(300):
        intervals = fairness_trace.Intervals()
        for _ in range(rng.randint(0, 12)):
            start = rng.uniform(-5, 30)
            intervals.add(rng.choice(fairness_trace.BUCKETS), start, start + rng.uniform(0, 10))
        total = rng.uniform(0.1, 30)
        buckets = fairness_trace.breakdown(intervals, total)
        assert set(buckets) == set(fairness_trace.BUCKETS)
        assert abs(sum(buckets.values()) - total) < 0.01 and all(value >= 0 for value in buckets.values())
