"""The recall part's figures in bench/results.json and its section of the page (figures from bench/recall.py)."""

from __future__ import annotations

from bench.formatting import SummaryRow


def headline(detail: dict) -> dict:
    cpu = detail.get("cpu_ms_per_recall")
    return {"recall_p95_ms": detail["calls"]["recall"]["p95_ms"],
            **({"recall_cpu_ms_per_call": round(cpu["client"] + cpu["postgres"], 1)} if cpu else {}),
            "recall_embed_seconds_per_1000_claims": round(
                detail["scope"]["embed_seconds"] / max(detail["scope"]["embedded_claims"], 1) * 1000, 3)}


def rows(detail: dict) -> list[SummaryRow]:
    p95 = detail["calls"]["recall"]["p95_ms"]
    target = detail["target_p95_ms"]
    memories = detail["scope"]["memories"]
    return [SummaryRow(f"p95 of `recall` (500 tokens), {memories:,}-memory scope", "recall_p95_ms",
                       f"{p95:.1f} ms", f"≤ {target:.0f} ms", p95 <= target)]


def section(detail: dict) -> list[str]:
    scope = detail["scope"]
    lines = [
        "How fast `recall` answers a question on a large scope, and what embedding the claims and memories costs.",
        "",
        f"**How.** `bench/recall.py`: the recall eval's generator at scale, {scope['memories']:,} plain-sentence "
        f"memories about {scope['pages']:,} people (three with thousands of memories each), written in SQL as a "
        f"compile leaves them: {scope['claims']:,} claims (one per memory, and a count line per page citing all "
        f"its memories), two aliases per page, {scope['links']:,} links; every claim and every memory embedded by the "
        f"static model ({scope['embedded_claims']:,} claims and the memories in {scope['embed_seconds']:.2f} s). "
        "Each generated question is put "
        f"to `app.recall.recall` (what `GET /v1/recall` and MCP `recall` run) with a {detail['budget_tokens']}-token "
        "budget, one call after the other.",
        "",
        "| call | p50 | p95 | max | calls | target p95 |",
        "|---|---|---|---|---|---|",
    ]
    for name, figures in detail["calls"].items():
        target = f"≤ {detail['target_p95_ms']:.0f} ms" if name == "recall" else ""
        lines.append(f"| `{name}` | {figures['p50_ms']:.1f} ms | {figures['p95_ms']:.1f} ms | "
                     f"{figures['max_ms']:.1f} ms | {figures['calls']} | {target} |")
    cpu = detail.get("cpu_ms_per_recall")
    if cpu:
        lines += ["", f"CPU per `recall` call: {cpu['client']:.1f} ms in the calling process and {cpu['postgres']:.1f} ms "
                  f"in Postgres, {cpu['client'] + cpu['postgres']:.1f} ms in all: what a call takes when it need not "
                  f"wait for a CPU. Other processes used {cpu['other_processes_share']:.0%} of the machine's CPU time "
                  "meanwhile."]
    search = detail.get("vector_search")
    if search:
        pg = search["pgvector"]
        lines += ["", f"The semantic retriever's nearest 300 of {search['vectors']:,} claim vectors, two ways: scored "
                  f"in numpy from the matrix recall keeps per process, p50 {search['numpy']['p50_ms']:.2f} ms, p95 "
                  f"{search['numpy']['p95_ms']:.2f} ms; pgvector's exact `<=>` scan in Postgres (one round trip), "
                  + (f"p50 {pg['p50_ms']:.2f} ms, p95 {pg['p95_ms']:.2f} ms." if pg else "not available here.")
                  + " Recall keeps numpy: no extension to install on a cluster, and the matrix is read once per "
                  "process."]
    lines += ["", "The client and Postgres share the machine: with a load average above its CPU count (see the run "
              "above) the latencies include waiting for a CPU."]
    return lines
