"""The many-scopes benchmark's arithmetic: how much of the simulator's quota a run used, and how its
figures are merged into bench/results.json and shown on docs/BENCHMARKS.md without touching other parts'."""

from __future__ import annotations

from bench import many_scopes_report, page, quota
from bench.parts import with_part
from claude_sim import Call, Limits, Usage

LIMITS = Limits(requests_per_minute=60, input_tokens_per_minute=6_000, output_tokens_per_minute=1_200)


def _call(at: float, status: int = 200, prompt: int = 100, output: int = 30) -> Call:
    usage = Usage(input_tokens=prompt - 10, cache_read_input_tokens=10, output_tokens=output) if status == 200 else None
    return Call("anthropic", "planner", "claude-haiku-4-5", True, at, status=status, usage=usage)


def test_utilisation_is_what_admitted_calls_were_charged_over_a_full_bucket_plus_the_refill() -> None:
    calls = [_call(10.0 + second) for second in range(20)] + [_call(12.5, status=429) for _ in range(5)]
    admitted = quota.charges(calls)
    used = quota.utilisation(admitted, LIMITS, seconds=30.0)
    assert [charge.at for charge in admitted] == sorted(charge.at for charge in admitted)
    # A minute's bucket at the start plus 30 s of refill: 1.5 minutes' worth of each limit.
    assert used["requests"] == {"per_minute": 60, "used": 20, "allowance": 90, "utilisation": 0.222}
    assert used["input_tokens"]["used"] == 2_000  # cache reads count: the simulator charges them
    assert used["input_tokens"]["utilisation"] == round(2_000 / 9_000, 3)
    assert used["output_tokens"]["utilisation"] == round(600 / 1_800, 3)
    assert max(used, key=lambda name: used[name]["utilisation"]) == "output_tokens"


def test_steady_utilisation_leaves_out_the_ramp_and_the_tail() -> None:
    # One call a second for 20 s, then a tail of 5 calls 10 s apart.
    calls = [_call(float(second)) for second in range(20)] + [_call(20.0 + 10 * i) for i in range(1, 6)]
    steady = quota.steady_utilisation(quota.charges(calls), LIMITS)
    # The middle 80% of 25 calls: the 3rd to the 23rd, at seconds 2 to 19, 30, 40 and 50; the last one
    # closes the window, so 20 calls charged over 48 s, against a refill of one request a second.
    assert steady["requests"] == round(20 / 48, 3)
    # Seconds 0 to 19, 30, 40 and 50 fall within one minute.
    assert quota.busiest_minute(quota.charges(calls), "requests") == 23


def _section(utilisation: float) -> dict:
    run = {"worker_processes": 2, "wall_seconds": 100.0, "memories": 500, "memories_per_second": 5.0,
           "model_calls": 10, "model_calls_per_second": 0.1, "rate_limit_utilisation": utilisation,
           "binding_limit": "output_tokens", "limits": quota.utilisation(quota.charges([_call(1.0)]), LIMITS, 100.0),
           "steady_rate_limit_utilisation": 0.9, "provider_429s": 3, "last_429_at_seconds": 80.0,
           "cpu_seconds": {"machine_busy_share": 0.5, "other_processes": 1.0, "worker_process_1": 2.0},
           "activity_retries": {"llm.plan_batch": 3}, "activity_retry_causes": {"LlmThrottled": 1}}
    workload = {"scopes": 10, "memories_per_scope": 50, "ttft_seconds": 0.6, "output_tokens_per_second": 150.0,
                "requests_per_minute": 60, "input_tokens_per_minute": 6_000, "output_tokens_per_minute": 1_200,
                "llm_max_per_second": None, "measured_through": "anthropic-sdk"}
    return many_scopes_report.build({2: [run]}, workload)


RUN = {"commit": "a" * 40, "date": "2026-01-01T00:00:00+00:00", "seconds": 100.0, "machine": None,
       "load_average": None, "repeats": 1}


def test_merge_keeps_other_parts_and_says_what_the_part_went_through() -> None:
    realistic = {"wall_seconds": 250.0, "model_critical_path_seconds": 240.0, "overhead_ratio": 1.042, "run": RUN}
    results = with_part({}, "realistic", realistic)
    merged = with_part(results, "many_scopes", {**_section(0.9), "run": RUN})
    assert merged["detail"]["realistic"] == realistic and merged["wall_700_realistic_seconds"] == 250.0
    assert merged["rate_limit_utilisation"] == 0.9 and merged["memories_per_second"] == 5.0
    assert merged["measured_through_by_metric"] == {"3": "anthropic-sdk"}
    assert merged["detail"]["many_scopes"]["measured_through"] == "anthropic-sdk"


def test_the_page_shows_the_part_with_its_verdict_and_its_run() -> None:
    results = with_part({}, "many_scopes", {**_section(0.7), "run": RUN})
    text = page.render(results)
    assert "| `many_scopes` | model quota used (output tokens per minute, the binding limit), 2 worker processes | " \
           "`rate_limit_utilisation` | 70% | ≥ 85% | **missed** |" in text
    assert "## 3. Many scopes sharing one model quota\n\n*Run: commit `aaaaaaaaaa`, 2026-01-01 00:00 UTC," in text
    assert "**Why (missed: 2 worker processes 70%).**" in text
