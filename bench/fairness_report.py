"""The fairness part's figures in bench/results.json and its section of the page (figures from
bench/fairness.py)."""

from __future__ import annotations

from bench.formatting import SummaryRow, load, seconds

P95_RATIO_TARGET = 2.0
THROUGHPUT_SHARE_TARGET = 0.8
# Below this share of the quota used, the big tenant alone was not bounded by the quota.
BINDING_UTILISATION = 0.6
LIMIT_LABELS = {"requests": "requests", "input_tokens": "input tokens", "output_tokens": "output tokens"}


def _ratio(numerator: float, denominator: float) -> float:
    return round(numerator / denominator, 3) if denominator else 0.0


def build(*, workload: dict, calibration: dict, window_seconds: float, phases: dict[str, dict]) -> dict:
    """detail.fairness: the workload, the calibration, every phase and the ratios against the idle system
    and the big tenant alone."""
    idle_p95 = phases["small_alone"]["small_tenants"]["p95_seconds"]
    alone = phases["big_alone"]["big_tenant"]["memories_per_second"]
    ratios = {}
    for name in ("fairness_on", "fairness_off"):
        phase = phases[name]
        ratios[name] = {"small_tenant_p95_ratio": _ratio(phase["small_tenants"]["p95_seconds"], idle_p95),
                        "big_tenant_throughput_share": _ratio(phase["big_tenant"]["memories_per_second"], alone)}
    return {"measured_through": workload["measured_through"], "workload": workload, "calibration": calibration,
            "window_seconds": window_seconds, "phases": phases, "ratios": ratios}


def headline(detail: dict) -> dict:
    on, off = detail["ratios"]["fairness_on"], detail["ratios"]["fairness_off"]
    return {
        "fair_small_tenant_p95_ratio": on["small_tenant_p95_ratio"],
        "fair_big_tenant_throughput_share": on["big_tenant_throughput_share"],
        "fair_off_small_tenant_p95_ratio": off["small_tenant_p95_ratio"],
        "fair_off_big_tenant_throughput_share": off["big_tenant_throughput_share"],
        "fair_quota_utilisation": detail["phases"]["fairness_on"]["quota"]["utilisation"],
    }


def rows(detail: dict) -> list[SummaryRow]:
    top = headline(detail)
    return [
        SummaryRow("small tenants' p95 retain-to-compiled, busy / idle, fairness on",
                   "fair_small_tenant_p95_ratio", f"{top['fair_small_tenant_p95_ratio']:.2f}",
                   f"≤ {P95_RATIO_TARGET:g}", top["fair_small_tenant_p95_ratio"] <= P95_RATIO_TARGET),
        SummaryRow("the same, fairness off", "fair_off_small_tenant_p95_ratio",
                   f"{top['fair_off_small_tenant_p95_ratio']:.2f}", "–", None),
        SummaryRow("big tenant's throughput, busy / alone, fairness on", "fair_big_tenant_throughput_share",
                   f"{top['fair_big_tenant_throughput_share']:.0%}", f"≥ {THROUGHPUT_SHARE_TARGET:.0%}",
                   top["fair_big_tenant_throughput_share"] >= THROUGHPUT_SHARE_TARGET),
        SummaryRow("the same, fairness off", "fair_off_big_tenant_throughput_share",
                   f"{top['fair_off_big_tenant_throughput_share']:.0%}", "–", None),
        SummaryRow("model quota used while both ran, fairness on", "fair_quota_utilisation",
                   f"{top['fair_quota_utilisation']:.0%}", "–", None),
    ]


PHASE_LABELS = {"big_alone": "big tenant alone", "small_alone": "small tenants alone (idle system)",
                "fairness_on": "both, fairness on", "fairness_off": "both, fairness off"}


def _cell(phase: dict, *path: str, fmt=seconds) -> str:
    value: object = phase
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return "–"
        value = value[key]
    return fmt(value)  # type: ignore[arg-type]


def section(detail: dict) -> list[str]:
    workload, calibration, phases = detail["workload"], detail["calibration"], detail["phases"]
    big = workload["big_scopes"] * workload["big_memories_per_scope"]
    lines = [
        f"One tenant bootstraps {big:,} memories ({workload['big_scopes']} agents of "
        f"{workload['big_memories_per_scope']}) while {workload['small_tenants']} small tenants each retain "
        f"{workload['small_memories']} memories in {workload['small_retains']} retains at random moments, all "
        "sharing one model quota; compiles started with priorities and fairness keys, then with neither.",
        "",
        "**How.** Every model call goes through the anthropic SDK to the Claude simulator at a realistic speed "
        f"(time to first token {workload['ttft_seconds']:g} s, {workload['output_tokens_per_second']:g} output "
        f"tokens/s) with per-minute limits of {workload['requests_per_minute']:,} requests, "
        f"{workload['input_tokens_per_minute']:,} input and {workload['output_tokens_per_minute']:,} output "
        "tokens: the provider quota. One worker process (`bench/scope_worker.py`) serves the compile queue and "
        "the model queue, whose rate limit Temporal enforces for every worker of the queue: "
        f"{calibration['llm_max_per_second']} calls/s, from `domain/model_quota.py` for the mean call a "
        f"calibration bootstrap measured ({calibration['mean_input_tokens']:,} input and "
        f"{calibration['mean_output_tokens']:,} output tokens), so the backlog waits in Temporal, where "
        "priority and fairness order it. A retain's time runs from the retain to the end of the compile it "
        f"woke (debounce 0). The small tenants' moments fall in the first {detail['window_seconds']:g} s "
        f"({workload['window_share']:.0%} of the big tenant's time alone) and are the same in every phase. Bootstrap plans go interactive "
        "(`WIKI_LLM_BATCH_MODE=off`): Message Batches have a quota of their own. With fairness on, the worker "
        "also caps each tenant's calls at `WIKI_LLM_TENANT_QUOTA_SHARE` "
        f"({workload.get('tenant_quota_share', 0.85):.0%}) of the queue's rate (Temporal's per-fairness-key "
        "rate limit), so the bootstrap leaves the rest free for the small tenants. Each phase has a fresh "
        "database and its own task queues on the same dev server (fairness enabled); fairness off starts the "
        "compiles with no priority and no fairness key (`WIKI_FAIRNESS_ENABLED=false`). "
        f"Scaled down from the 10,000-memory bootstrap to {big:,} so the four phases fit on the shared "
        "machine; the small tenants' part is as specified.",
        "",
        "| | retains | p50 | p95 | big tenant | big tenant memories/s | quota used (binding limit) | 429s | load average |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, label in PHASE_LABELS.items():
        phase = phases[name]
        quota = phase.get("quota")
        used = f"{quota['utilisation']:.0%} ({LIMIT_LABELS[quota['binding_limit']]})" if quota else "–"
        lines.append(
            f"| {label} | {_cell(phase, 'small_tenants', 'retains', fmt=str)} "
            f"| {_cell(phase, 'small_tenants', 'p50_seconds')} | {_cell(phase, 'small_tenants', 'p95_seconds')} "
            f"| {_cell(phase, 'big_tenant', 'seconds')} "
            f"| {_cell(phase, 'big_tenant', 'memories_per_second', fmt=lambda v: f'{v:.2f}')} | {used} "
            f"| {phase['provider_429s']} | {load(phase['load_average']['start'])} → {load(phase['load_average']['end'])} |")
    on, off = detail["ratios"]["fairness_on"], detail["ratios"]["fairness_off"]
    lines += [
        "",
        f"With fairness on, the small tenants' p95 is {on['small_tenant_p95_ratio']:.2f}× their idle p95 and the "
        f"big tenant keeps {on['big_tenant_throughput_share']:.0%} of its throughput alone; with fairness off, "
        f"{off['small_tenant_p95_ratio']:.2f}× and {off['big_tenant_throughput_share']:.0%}. The big tenant's "
        "share can be no more than the quota the small tenants leave it: their interactive compiles spend "
        "their own part of it whatever the order." + _samples_note(phases),
    ]
    lines += breakdown_lines(phases)
    alone = phases["big_alone"].get("quota")
    if alone and alone["utilisation"] < BINDING_UTILISATION:
        queue = phases["big_alone"].get("queue_rate_used")
        used_queue = f" and {queue:.0%} of the model queue's rate" if queue is not None else ""
        lines += ["", f"Quota used is what the admitted calls were charged over the most the simulator would have "
                  f"admitted in the phase, for the limit used most. Alone, the big tenant used "
                  f"{alone['utilisation']:.0%} of the provider's quota{used_queue} over its run: its agents' own "
                  "pace (each agent's batches run one after another, each waiting for its model calls) bounded it "
                  "on average, not the quota. Its calls come in bursts (a batch schedules all its section writes "
                  "at once), and the model queue's rate limit counts calls, so the bursts wait in the queue: the "
                  "order of what waits there is what priority and fairness change."]
    return lines


BUCKET_LABELS = {"starting": "retain and start", "model_streaming": "model answering",
                 "activity_running": "activity beyond the model", "activity_queued": "activity queued",
                 "workflow_queued": "workflow task queued", "workflow_running": "workflow tasks and local steps"}


def _samples_note(phases: dict[str, dict]) -> str:
    retains = phases["small_alone"]["small_tenants"]["retains"]
    rank = max(1, -(-retains * 95 // 100))
    return (f" Each p95 is the nearest rank of {retains} retains (the {rank}th fastest), so it moves with a "
            "few slow retains: the arrivals are seeded, identical in every phase, and the idle phase runs just "
            "before the busy ones, on the same machine and settings (the load averages beside each phase).")


def breakdown_lines(phases: dict[str, dict]) -> list[str]:
    """Where the slowest small-tenant retains' time went, per phase (bench/fairness_trace.py)."""
    traced = {name: phase["small_tenants"]["where_the_time_went"] for name, phase in phases.items()
              if "where_the_time_went" in phase.get("small_tenants", {})}
    if not traced:
        return []
    lines = ["", "Where the small tenants' time went, from their compiles' workflow histories: the mean seconds of "
             "the retains at or above the p95 (all retains in brackets). \"Model answering\" is the simulator's "
             "latency for the calls' output; \"activity beyond the model\" is the rest of a running activity "
             "(database work, the worker's own work, waits for the shared CPU); \"activity queued\" is the wait "
             "in the task queue (its rate limit, priority order, worker slots).", "",
             "| | " + " | ".join(BUCKET_LABELS.values()) + " |", "|---|" + "---|" * len(BUCKET_LABELS)]
    for name, label in PHASE_LABELS.items():
        if name in traced:
            slow, every = traced[name]["slowest_retains"], traced[name]["all_retains"]
            cells = [f"{slow.get(key, 0):.1f} s ({every.get(key, 0):.1f})" for key in BUCKET_LABELS]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines
