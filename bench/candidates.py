"""Candidate pages sent against merges missed: the 700-memory sample at zero latency through the SDK
and the simulator, once per recent-page padding (`store.scope_reads.MAX_RECENT_PADDING`).

The bench part `candidates` (bench/parts.py): the paddings PADDINGS and the product's own. A leaf
plan is sent the pages its batch names (by alias, trigram and full text), then recently compiled
pages up to the padding. For each padding: candidate pages per plan, planner input tokens per plan,
cost per 1,000 memories, and what the wiki came out as — active pages, open mentions, proposed new
pages merged into existing ones, and `duplicate_candidates_count` (pages that should have been one).
A padding whose wiki matches the full padding's with fewer tokens missed no merge the padding would
have caught.
"""

from __future__ import annotations

import logging

import store.scope_reads as scope_reads
from bench.cost_realistic import cost_summary, plain_text, planner_prompt_parts
from bench.overhead import bench_settings, compile_sample
from bench.services import Services

# Recent-page paddings compared with the product's (`MAX_RECENT_PADDING`): many, and none.
PADDINGS = (100, 0)
CANDIDATE_HEADING = "## Candidate pages already in this scope"
log = logging.getLogger("bench.candidates")


def candidates_per_plan(calls) -> float:
    """Mean candidate pages a leaf plan was sent (one `- p…` line each in its prompt)."""
    counts = []
    for call in calls:
        if call.kind != "planner" or call.usage is None:
            continue
        user = "".join(plain_text(m.get("content")) for m in call.body.get("messages", []) if m.get("role") == "user")
        block = user.split(CANDIDATE_HEADING, 1)[-1].split("\n## ", 1)[0] if CANDIDATE_HEADING in user else ""
        counts.append(sum(1 for line in block.splitlines() if line.startswith("- p")))
    return round(sum(counts) / len(counts), 1) if counts else 0.0


async def measure_candidates(services: Services, repeats: int) -> dict:
    """The sample compiled once per padding, the product's first (`repeats` does not apply: the
    figures are counts and digests)."""
    product = scope_reads.MAX_RECENT_PADDING
    paddings = sorted({product, *PADDINGS}, key=lambda padding: (padding != product, -padding))
    return {"product_padding": product, "rows": await measure(services, paddings)}


async def measure(services: Services, paddings: list[int]) -> list[dict]:
    model_id = bench_settings().model_id
    rows = []
    default = scope_reads.MAX_RECENT_PADDING
    for padding in paddings:
        scope_reads.MAX_RECENT_PADDING = padding  # read at call time by the in-process worker
        try:
            calls: list = []
            run = await compile_sample(services, 0, calls_out=calls)
        finally:
            scope_reads.MAX_RECENT_PADDING = default
        cost = cost_summary(calls, int(run.ledger["records_read"]), model_id)
        planner = cost["by_kind"]["planner"]
        rows.append({
            "padding": padding, "candidates_per_plan": candidates_per_plan(calls),
            "planner_input_tokens_per_plan": planner["per_call"]["input_tokens"],
            "planner_prompt_bytes_per_call": planner_prompt_parts(calls),
            "usd_per_1000_memories": cost["usd_per_1000_memories"],
            "wiki": run.wiki_counts, "wiki_digest": run.wiki_digest,
            "proposed_new_pages_merged": run.ledger["alias_dedup_merged"] + run.ledger["fuzzy_dedupe_merges"],
            "duplicate_candidates_count": run.duplicate_candidates_count,
        })
        log.info("padding %d: %s", padding, rows[-1])
    return rows
