"""The server_load part's figures in bench/results.json and its section of the page (figures from
bench/server_load.py)."""

from __future__ import annotations

from bench.formatting import SummaryRow, load, met

CPU_PARTS = ("server", "postgres", "temporal", "bench_process")


def cpu_per_request(step: dict) -> float:
    """CPU milliseconds the machine's cores paid for one answered request: the server, Postgres, the
    Temporal dev server (a retain's wake-up) and the load generator."""
    cpu = step.get("cpu_ms_per_request", {})
    return round(sum(cpu.get(part, 0.0) for part in CPU_PARTS), 2)


def capacity(detail: dict) -> float | None:
    """The most requests per second the machine's cores could answer at the CPU per request of the
    first rate (the least contended): a ceiling that does not depend on what else ran."""
    steps = detail.get("steps") or []
    spent = cpu_per_request(steps[0]) if steps else 0.0
    return round(1000 * detail["cpus"] / spent) if spent else None


def headline(detail: dict) -> dict:
    held = detail["held"] or {}
    overload = detail["overload"]
    steps = detail.get("steps") or []
    return {
        "server_load_requests_per_second": held.get("ok_per_second", 0.0),
        "server_load_p50_ms": held.get("p50_ms"),
        "server_load_p95_ms": held.get("p95_ms"),
        "server_load_p99_ms": held.get("p99_ms"),
        "server_load_errors": held.get("errors"),
        "server_overload_500s": sum(count for status, count in overload["statuses"].items()
                                    if status.startswith("5") and status != "503"),
        "server_overload_hangs": overload["hangs"],
        "server_overload_refusals": {status: count for status, count in overload["statuses"].items()
                                     if status in ("429", "503")},
        "server_load_cpu_ms_per_request": cpu_per_request(steps[0]) if steps else None,
        "server_load_cpu_capacity_per_second": capacity(detail),
    }


def rows(detail: dict) -> list[SummaryRow]:
    top = headline(detail)
    targets = detail["targets"]
    rate = top["server_load_requests_per_second"]
    p95 = top["server_load_p95_ms"]
    return [
        SummaryRow(f"mixed requests/s held by `wiki serve` ({detail['tokens']} tokens, 0 errors, p95 ≤ "
                   f"{targets['p95_ms']:.0f} ms)", "server_load_requests_per_second", f"{rate:.0f}/s",
                   f"≥ {targets['requests_per_second']}/s", rate >= targets["requests_per_second"]),
        SummaryRow("p95 at the load held", "server_load_p95_ms", "—" if p95 is None else f"{p95:.1f} ms",
                   f"≤ {targets['p95_ms']:.0f} ms", p95 is not None and p95 <= targets["p95_ms"]),
        SummaryRow("500s and unanswered requests beyond the load held", "server_overload_500s",
                   f"{top['server_overload_500s']} / {top['server_overload_hangs']}", "0 / 0",
                   top["server_overload_500s"] == 0 and top["server_overload_hangs"] == 0),
    ]


def section(detail: dict) -> list[str]:
    mix = ", ".join(f"{kind} {percent}%" for kind, percent in detail["mix_percent"].items())
    lines = [
        "How much mixed traffic from a fleet of agents `wiki serve` answers, and how it refuses the rest.",
        "",
        f"**How.** A generated scope of {detail['pages']:,} pages (bench/reads.py's generator) read and written by "
        f"{detail['tokens']} write tokens; the mix: {mix}. {detail['method']}. Load average before / after: "
        f"{load(detail['load_average_before'])} / {load(detail['load_average_after'])} on {detail['cpus']} CPUs.",
        "",
        "| offered | answered ok | p50 | p95 | p99 | errors | statuses | CPU ms per request (server / Postgres / "
        "Temporal / generator) | machine busy |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for step in [*detail["steps"], {**detail["overload"], "offered_per_second": "overload"}]:
        cpu = step.get("cpu_ms_per_request", {})
        busy = step.get("machine_busy_share")
        offered = step["offered_per_second"]
        lines.append(
            f"| {offered if offered == 'overload' else f'{offered:g}/s'} | {step['ok_per_second']:.0f}/s | "
            f"{step['p50_ms']:.1f} ms | {step['p95_ms']:.1f} ms | {step['p99_ms']:.1f} ms | {step['errors']} | "
            f"{', '.join(f'{status}: {count}' for status, count in step['statuses'].items())} | "
            f"{cpu.get('server', 0):.1f} / {cpu.get('postgres', 0):.1f} / {cpu.get('temporal', 0):.1f} / "
            f"{cpu.get('bench_process', 0):.1f} | "
            f"{'—' if busy is None else f'{100 * busy:.0f}%'} |")
    held = detail["held"]
    top = headline(detail)
    lines += [
        "",
        (f"**Held:** {held['ok_per_second']:.0f} requests/s with p95 {held['p95_ms']:.1f} ms and no error "
         f"(target ≥ {detail['targets']['requests_per_second']}/s, p95 ≤ {detail['targets']['p95_ms']:.0f} ms: "
         f"{met(held['ok_per_second'] >= detail['targets']['requests_per_second'])})." if held else
         "**Held:** no rate was held (every rate had an error or a p95 over the target)."),
        f"**Beyond it** ({detail['overload']['statuses']}): {top['server_overload_500s']} answers 500, "
        f"{top['server_overload_hangs']} requests unanswered, refusals {top['server_overload_refusals'] or 'none'}, "
        f"{detail['overload']['refusals_without_retry_after']} of them without Retry-After.",
        "",
        "The server, Postgres, the Temporal dev server and the load generator share the machine's CPUs with "
        "whatever else runs (the load averages above): the CPU per request is the figure that depends least on "
        "that. "
        + (f"At the first rate it was {top['server_load_cpu_ms_per_request']:.1f} ms in all, so "
           f"{detail['cpus']} cores could answer at most {top['server_load_cpu_capacity_per_second']:.0f} "
           "requests/s with nothing else running (a ceiling: at full use, queues make p95 grow)."
           if top["server_load_cpu_capacity_per_second"] else ""),
    ]
    return lines
