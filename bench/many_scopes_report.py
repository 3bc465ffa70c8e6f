"""The many-scopes part's figures in bench/results.json and its section of the page (figures from
bench/many_scopes.py)."""

from __future__ import annotations

import statistics

from bench.formatting import SummaryRow, processes

UTILISATION_TARGET = 0.85
CPU_SATURATED = 0.85  # the machine's busy share above which the CPUs, not the workload, bound a rate
LIMIT_LABELS = {"requests": "requests", "input_tokens": "input tokens", "output_tokens": "output tokens"}
METHOD = (
    "**How.** Worker processes run `python -m bench.scope_worker`: the product's workers as "
    "`app.worker.build_workers` composes them (compile queue and `WIKI_LLM_TASK_QUEUE`), with "
    "`WIKI_LLM=anthropic`: every model call goes through the anthropic SDK, streamed over loopback HTTP, to "
    "one Claude simulator in the bench process (`ANTHROPIC_BASE_URL`), whose per-minute rate limits are the "
    "quota all processes share. Over a limit the simulator answers 429 with `retry-after` and the "
    "`anthropic-ratelimit-*` headers; the product fails the attempt as `LlmThrottled` with that delay and "
    "Temporal retries it. Utilisation of a limit is what the simulator charged the calls it admitted over "
    "the most it could have admitted in the run's wall time (a full minute's bucket at the start plus the "
    "refill: `limit × (1 + wall / 60 s)`), per limit (`bench/quota.py`); the figure reported is the binding "
    "(most used) limit's. `BENCH_REPEATS` runs of each number of worker processes, interleaved; the median "
    "run is shown."
)


def _rationale(many: dict) -> str:
    workload = many["workload"]
    run = next(iter(many["by_worker_processes"].values()))["median"]
    output = run["limits"]["output_tokens"]
    mean_output = output["used"] / max(run["model_calls"], 1)
    speed = workload["output_tokens_per_second"]
    call_seconds = workload["ttft_seconds"] + (mean_output / speed if speed else 0.0)
    return (
        "**Why this latency and this quota.** With no simulated latency a scope's calls follow each other as "
        "fast as the CPUs allow, so how fast calls are produced would measure the machine, not the sharing of a "
        f"quota; at a realistic speed (time to first token {workload['ttft_seconds']:g} s, {speed:g} output "
        f"tokens/s) a call of this run's mean {mean_output:,.0f} output tokens takes {call_seconds:.0f} s, each "
        "scope waits on its own calls as it would against Claude, and the question is whether the scopes "
        f"together keep the quota busy. The workload's {output['used']:,} output tokens need "
        f"{output['used'] / output['per_minute']:.1f} minutes of the quota, several times one scope's own "
        "sequence of calls, so the quota bounds the run."
    )


def _median_run(runs: list[dict]) -> dict:
    middle = statistics.median_low([run["memories_per_second"] for run in runs])
    return next(run for run in runs if run["memories_per_second"] == middle)


def build(runs: dict[int, list[dict]], workload: dict) -> dict:
    """detail.many_scopes: the workload, and every run by worker processes with the median run."""
    return {
        "measured_through": workload.get("measured_through", "anthropic-sdk"),
        "workload": workload,
        "by_worker_processes": {str(workers): {"median": _median_run(entries), "runs": entries}
                                for workers, entries in runs.items()},
    }


def headline(detail: dict) -> dict:
    """The figures of the run with the most worker processes."""
    most = detail["by_worker_processes"][str(max(int(w) for w in detail["by_worker_processes"]))]["median"]
    return {"rate_limit_utilisation": most["rate_limit_utilisation"],
            "memories_per_second": most["memories_per_second"],
            "measured_through_by_metric": {"3": detail["measured_through"]}}


def rows(detail: dict) -> list[SummaryRow]:
    most = str(max(int(w) for w in detail["by_worker_processes"]))
    out: list[SummaryRow] = []
    for workers, entry in detail["by_worker_processes"].items():
        run = entry["median"]
        limit = LIMIT_LABELS[run["binding_limit"]]
        out.append(SummaryRow(f"model quota used ({limit} per minute, the binding limit), {processes(workers)}",
                              "rate_limit_utilisation" if workers == most else None,
                              f"{run['rate_limit_utilisation']:.0%}", f"≥ {UTILISATION_TARGET:.0%}",
                              run["rate_limit_utilisation"] >= UTILISATION_TARGET))
    scopes = detail["workload"]["scopes"]
    for workers, entry in detail["by_worker_processes"].items():
        out.append(SummaryRow(f"memories compiled per second, {scopes} scopes at once, {processes(workers)}",
                              "memories_per_second" if workers == most else None,
                              f"{entry['median']['memories_per_second']:.1f}", "–", None))
    return out


def _k(value: float) -> str:
    return f"{value / 1000:,.0f}k" if value >= 10_000 else f"{value:,.0f}"


def section(many: dict) -> list[str]:
    workload = many["workload"]
    cap = workload.get("llm_max_per_second")
    latency = (f"time to first token {workload['ttft_seconds']:g} s and {workload['output_tokens_per_second']:g} "
               "output tokens/s" if workload["ttft_seconds"] or workload["output_tokens_per_second"]
               else "no simulated latency")
    lines = [
        f"How much of one model quota many scopes compiling at once keep busy: {workload['scopes']} scopes × "
        f"{workload['memories_per_scope']} new memories each (every scope already has a wiki compiled from "
        f"{workload['memories_per_scope']} earlier memories), all compiles started together, by "
        + " and by ".join(processes(workers) for workers in many["by_worker_processes"])
        + f". Measured through the anthropic SDK (`measured_through`: `\"{many['measured_through']}\"`), "
        f"against one Claude simulator answering at {latency}. The quota is the simulator's: "
        f"{workload['requests_per_minute']:,} requests, {workload['input_tokens_per_minute']:,} input tokens and "
        f"{workload['output_tokens_per_minute']:,} output tokens per minute (each a bucket holding a minute's "
        "allowance, full at the start); over it, 429 with `retry-after`. "
        + (f"`WIKI_LLM_MAX_PER_SECOND` = {cap:g}." if cap else
           "`WIKI_LLM_MAX_PER_SECOND` is unset: the provider's 429s alone pace the calls."),
        "",
        METHOD,
        "",
        "| worker processes | wall | memories/s | model calls | calls/s | requests used | input tokens used | "
        "output tokens used | binding limit, middle 80% of calls | 429s | CPU busy | "
        "CPU s: workers / Postgres / Temporal / bench + simulator / others |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for workers, entry in many["by_worker_processes"].items():
        run = entry["median"]
        cpu = run["cpu_seconds"]
        used = run["limits"]
        worker_cpu = sum(v for k, v in cpu.items() if k.startswith("worker_process"))
        cells = [f"{used[name]['utilisation']:.0%} ({_k(used[name]['used'])} of {_k(used[name]['allowance'])})"
                 if name in used else "–" for name in ("requests", "input_tokens", "output_tokens")]
        steady = run.get("steady_rate_limit_utilisation")
        lines.append(
            f"| {workers} | {run['wall_seconds']:.1f} s | {run['memories_per_second']:.1f} | {run['model_calls']} | "
            f"{run['model_calls_per_second']:.2f} | {' | '.join(cells)} | "
            f"{'–' if steady is None else f'{steady:.0%}'} | {run['provider_429s']} | "
            f"{cpu['machine_busy_share']:.0%} | {worker_cpu:.0f} / {cpu.get('postgres', 0):.0f} / "
            f"{cpu.get('temporal', 0):.0f} / {cpu.get('bench_process', 0):.0f} / {cpu['other_processes']:.0f} |")
    lines += ["", _rationale(many), "", _why(many)]
    return lines


def _why(many: dict) -> str:
    entries = many["by_worker_processes"]
    medians = {workers: entry["median"] for workers, entry in entries.items()}
    sentences = []
    missed = {w: run for w, run in medians.items() if run["rate_limit_utilisation"] < UTILISATION_TARGET}
    verdict = "met" if not missed else "missed: " + "; ".join(
        f"{processes(w)} {run['rate_limit_utilisation']:.0%}" for w, run in missed.items())
    sentences.append(f"**Why ({verdict}).**")
    for workers, run in medians.items():
        binding = run["binding_limit"]
        used = run["limits"][binding]
        rate = used["per_minute"] / 60
        sentences.append(
            f"With {processes(workers)} the binding limit was {LIMIT_LABELS[binding]}: "
            f"{used['used']:,} charged in {run['wall_seconds']:.0f} s, of at most {used['allowance']:,} "
            f"({used['per_minute']:,} at the start + {rate:,.0f}/s); "
            f"{run['model_calls']} calls admitted, {run['provider_429s']} answered 429.")
        steady = run.get("steady_rate_limit_utilisation")
        if steady is not None:
            sentences.append(
                f"Over the middle 80% of the admitted calls it was used at {steady:.0%} of its refill rate.")
        last = run.get("last_429_at_seconds")
        if last is not None:
            sentences.append(
                f"The last 429 was answered {last:.0f} s into the run: in the remaining "
                f"{run['wall_seconds'] - last:.0f} s the last scopes, down to their own sequential calls "
                "(plan, section writes, aggregation), asked for less than the quota refilled; the run left "
                f"{used['allowance'] - used['used']:,} {LIMIT_LABELS[binding]} unused, "
                f"{(used['allowance'] - used['used']) / rate:.0f} s of refill.")
        if run["cpu_seconds"]["machine_busy_share"] >= CPU_SATURATED:
            sentences.append(f"The CPUs were {run['cpu_seconds']['machine_busy_share']:.0%} busy "
                             f"({run['cpu_seconds']['other_processes']:.0f} CPU s by processes outside the bench).")
        if run["model_calls"]:
            sentences.append(
                f"{run['provider_429s'] / run['model_calls']:.1f} refused attempts per admitted call: every "
                "scope waiting for the quota retries after the `retry-after` it was sent, and each refused "
                "attempt is an activity attempt (its context read from Postgres, its prompt built and sent).")
        if run["activity_retries"]:
            sentences.append(
                f"Activity attempts retried: {sum(run['activity_retries'].values()):,} ("
                + ", ".join(f"`{name}` {count:,}" for name, count in sorted(run["activity_retries"].items()))
                + "); activities retried, by the cause of their last failed attempt: "
                + ", ".join(f"{count} {cause}" for cause, count in sorted(run["activity_retry_causes"].items()))
                + ".")
    spread = {w: [r["rate_limit_utilisation"] for r in entry["runs"]] for w, entry in entries.items()}
    if any(len(values) > 1 for values in spread.values()):
        sentences.append("Runs: " + "; ".join(f"{processes(w)} {', '.join(f'{u:.0%}' for u in values)}"
                                              for w, values in spread.items()) + " (the median is reported).")
    return " ".join(sentences)
