"""The cost, growth and candidates parts' figures in bench/results.json and their sections of the page
(figures from bench/cost_realistic.py and bench/candidates.py)."""

from __future__ import annotations

import json

from bench.formatting import SummaryRow, usd
from bench.plan_tokens import breakdown_lines
from domain.pricing import price_for

COST_TARGET_USD = 0.45
BATCH_COST_TARGET_USD = 0.25
GROWTH_TARGET = 1.15
KINDS = ("planner", "writer", "aggregation", "claim_judge")
THROUGH_THE_SDK = (
    "through the anthropic SDK (`WIKI_LLM=anthropic`), streamed over loopback HTTP to the Claude simulator "
    "(`claude_sim/`), which bills what the product's real requests contain (a token per 4 bytes)"
)


# --------------------------------------------------------------------------- cost


def judge_share(summary: dict) -> float:
    """The claim judge's share of a run's bill (0 when no line was left for it)."""
    judge = summary["by_kind"].get("claim_judge", {}).get("usd", 0.0)
    return round(judge / summary["usd"], 4) if summary["usd"] else 0.0


def cost_headline(cost: dict) -> dict:
    batch = cost.get("batch_mode")
    return {
        "cost_per_1000_memories_usd": cost["usd_per_1000_memories"],
        "cost_per_1000_memories_usd_uncached": cost["usd_per_1000_memories_uncached"],
        "cost_per_1000_memories_batch_usd": batch["usd_per_1000_memories"] if batch else None,
        "judge_cost_share": judge_share(cost),
        "judge_cost_share_batch": judge_share(batch) if batch else None,
        "cache_hit_rate": cost["cache_hit_rate"],
        "tokens_per_memory_by_kind": {kind: cost["by_kind"][kind]["tokens_per_memory"]
                                      for kind in KINDS if kind in cost["by_kind"]},
        "duplicate_candidates_count": cost["duplicate_candidates_count"],
        "measured_through": "anthropic-sdk",
    }


def cost_rows(cost: dict) -> list[SummaryRow]:
    top = cost_headline(cost)
    rows = [SummaryRow("cost per 1,000 memories through the SDK and the simulator", "cost_per_1000_memories_usd",
                       usd(top["cost_per_1000_memories_usd"]), f"≤ ${COST_TARGET_USD:.2f}",
                       top["cost_per_1000_memories_usd"] <= COST_TARGET_USD)]
    if top["cost_per_1000_memories_batch_usd"] is not None:
        rows.append(SummaryRow("the same in Message Batches mode (a bootstrap import)",
                               "cost_per_1000_memories_batch_usd", usd(top["cost_per_1000_memories_batch_usd"]),
                               f"≤ ${BATCH_COST_TARGET_USD:.2f}",
                               top["cost_per_1000_memories_batch_usd"] <= BATCH_COST_TARGET_USD))
    rows.append(SummaryRow("the claim judge's share of that bill (the verification gate on)", "judge_cost_share",
                           f"{100 * top['judge_cost_share']:.1f}%", "–", None))
    rows.append(SummaryRow("duplicate candidates after the 700-memory sample", "duplicate_candidates_count",
                           str(top["duplicate_candidates_count"]), "0", top["duplicate_candidates_count"] == 0))
    rows.append(SummaryRow("what the model calls went through", "measured_through",
                           f"`\"{top['measured_through']}\"`", "`\"anthropic-sdk\"`",
                           top["measured_through"] == "anthropic-sdk"))
    return rows


def cost_section(cost: dict) -> list[str]:
    kinds = cost["by_kind"]
    prices = cost["prices_usd_per_million_tokens"]
    lines = [
        "What the model costs per memory: the 700-memory sample at zero latency, billed by call kind.",
        "",
        f"**How.** Model calls go {THROUGH_THE_SDK}, priced at the list prices of `{cost['model_id']}` "
        f"(`domain/pricing.py`: USD per million tokens, input {prices['input']:g}, output {prices['output']:g}, "
        f"cache write {prices['cache_write']:g}, cache read {prices['cache_read']:g}). One run: the cost is a count, "
        "not a timing.",
        "",
        f"**{usd(cost['usd_per_1000_memories'])} per 1,000 memories** ({usd(cost['usd'])} for "
        f"{cost['memories']}; {cost['model_calls']} model calls; cache hit rate {100 * cost['cache_hit_rate']:.1f}%; "
        f"{cost['batches']} batches; {cost['wiki']['active_pages']} pages, {cost['wiki']['open_mentions']} open "
        f"mentions).",
        "",
        "| call kind | calls | per 1,000 memories | input / output / cache-read / cache-write tokens per memory "
        "| input / output tokens per call |",
        "|---|---|---|---|---|",
    ]
    for kind in (kind for kind in KINDS if kind in kinds):
        k, t = kinds[kind], kinds[kind]["tokens_per_memory"]
        lines.append(f"| {kind} | {k['calls']} | {usd(k['usd_per_1000_memories'])} | {t['input']:,} / "
                     f"{t['output']:,} / {t['cache_read']:,} / {t['cache_write']:,} | "
                     f"{k['per_call']['input_tokens']:,} / {k['per_call']['output_tokens']:,} |")
    parts = cost.get("planner_prompt_bytes_per_call", {})
    if parts:
        total = sum(parts.values())
        lines += ["", "A leaf plan's prompt, mean bytes per call (÷ 4 = the simulator's tokens): "
                  + ", ".join(f"{name.replace('_', ' ')} {value:,} ({100 * value / total:.0f}%)"
                              for name, value in sorted(parts.items(), key=lambda kv: -kv[1])) + "."]
    planner = kinds.get("planner")
    if planner:
        in_usd = planner["input_tokens"] * prices["input"] / 1e6 * 1000 / cost["memories"]
        out_usd = planner["output_tokens"] * prices["output"] / 1e6 * 1000 / cost["memories"]
        verdict = "met" if cost["usd_per_1000_memories"] <= COST_TARGET_USD else "missed"
        text = (f"**Why the cost target is {verdict}.** The planner is {100 * planner['usd'] / cost['usd']:.0f}% of the "
                f"bill: per 1,000 memories {usd(in_usd)} of input ({planner['per_call']['input_tokens']:,} tokens a "
                f"plan) and {usd(out_usd)} of output ({planner['per_call']['output_tokens']:,} tokens a plan, in the "
                "compact reply contract of `planners/compact_plan.py`).")
        if cost["cache_hit_rate"] == 0:
            text += (" Nothing was read from the prompt cache: the only prefix stable from plan to plan is the tool "
                     f"schema and the system prompt (~{parts.get('system', 0) // 4:,} tokens), under the "
                     f"{prices['min_cacheable_tokens']:,}-token minimum of `{cost['model_id']}` for a cache "
                     "breakpoint, so no breakpoint is set.")
        lines += ["", text]
    lines += ["", _judge_text(cost), "", *_cache_minimums(parts.get("system", 0) // 4)]
    lines += _batch(cost.get("batch_mode"))
    table = breakdown_lines(cost.get("planner_tokens_by_part"))
    if table:
        lines += ["", "Mean tokens per leaf plan by part of its prompt and reply (`bench/plan_tokens.py`: bytes / 4, "
                  "as the simulator bills):", "", *table]
    return lines


def _judge_text(cost: dict) -> str:
    judge = cost["by_kind"].get("claim_judge")
    share = f"{100 * judge_share(cost):.1f}%"
    if judge is None:
        return (f"**The claim judge: {share} of the bill** (`judge_cost_share`): every line the plans proposed "
                "was a quote of its memory or a line the compiler derived, so no line was left for it.")
    return (f"**The claim judge: {share} of the bill** (`judge_cost_share`): {judge['calls']} calls, "
            f"{usd(judge['usd_per_1000_memories'])} per 1,000 memories, "
            f"{judge['per_call']['input_tokens']:,} input and {judge['per_call']['output_tokens']:,} output tokens a call. "
            "Every line that is neither a quote of its memory nor a line the compiler derived is judged, the "
            "plans' and the section writer's own alike; a call reads up to 60 lines, each memory they cite sent "
            "once, and answers a few tokens a line (planners/claim_judge_prompt.py).")


# Models whose prompt-cache minimum the cost part reports: the one measured and the Sonnets around it.
CACHE_MODELS = ("claude-haiku-4-5", "claude-sonnet-4-5", "claude-sonnet-4-6")


def _cache_minimums(stable_prefix_tokens: int) -> list[str]:
    lines = [f"Prompt cache: a breakpoint caches a prefix only when it reaches the model's minimum; the leaf "
             f"planner's stable prefix (tool schema and system prompt) is ~{stable_prefix_tokens:,} tokens here.", "",
             "| model | minimum cacheable prefix | the planner's stable prefix cached |", "|---|---|---|"]
    for model in CACHE_MODELS:
        minimum = price_for(model).min_cacheable_tokens
        lines.append(f"| `{model}` | {minimum:,} tokens | {'yes' if stable_prefix_tokens >= minimum else 'no'} |")
    return lines


def _batch(batch: dict | None) -> list[str]:
    if not batch:
        return []
    kinds = batch["by_kind"]
    same = ("the interactive compile's (same section and provenance digests)" if batch.get("same_wiki_as_interactive")
            else "**not** the interactive compile's")
    lines = ["", f"**Message Batches mode: {usd(batch['usd_per_1000_memories'])} per 1,000 memories** "
             f"(`cost_per_1000_memories_batch_usd`; {batch['model_calls']} model calls; the wiki is {same}; "
             f"`duplicate_candidates_count` {batch['duplicate_candidates_count']}). The same sample compiled as a "
             "bootstrap import sends its model calls through Message Batches, billed at half price: its leaf plans, "
             "and its section writer, aggregation planner and merge judge calls, which wait in a batch and are read "
             "when it has ended (activities/deferred_calls.py). Only the claim judge of the verification gate (which "
             "a collected plan passes as an interactive one does) is asked interactively, at list price, when a line "
             "is left for it. The simulator ends a batch at once and the workflow polls every second, so the wall "
             "time of this compile says nothing about a real batch's (minutes to hours).", "",
             "| call kind | calls (batched) | per 1,000 memories |", "|---|---|---|"]
    for kind in [*(kind for kind in KINDS if kind in kinds), *sorted(set(kinds) - set(KINDS))]:
        k = kinds[kind]
        name = {"judge": "merge judge", "claim_judge": "claim judge"}.get(kind, kind)
        lines.append(f"| {name} | {k['calls']} ({k.get('batched_calls', 0)}) | {usd(k['usd_per_1000_memories'])} |")
    return lines


# --------------------------------------------------------------------------- growth


def growth_headline(growth: dict) -> dict:
    key = f"cost_growth_ratio_{growth['thousands']}k"
    return {"cost_growth_ratio_10k": growth["ratio"] if key == "cost_growth_ratio_10k" else None,
            **({} if key == "cost_growth_ratio_10k" else {key: growth["ratio"]})}


def growth_rows(growth: dict) -> list[SummaryRow]:
    key = f"cost_growth_ratio_{growth['thousands']}k"
    return [SummaryRow(f"cost per memory, {growth['thousands']}th thousand / 1st thousand of one scope", key,
                       f"{growth['ratio']:.3f}", f"≤ {GROWTH_TARGET}", growth["ratio"] <= GROWTH_TARGET)]


def growth_section(growth: dict) -> list[str]:
    first, last = growth["first"], growth["last"]
    lines = [
        "Whether a memory costs more as its scope ages: the cost per memory of the last thousand memories of one "
        "scope against that of the first.",
        "",
        f"**How.** One scope fed `sample/corpus.py`'s generated {growth['thousands']},000-memory corpus at zero "
        f"latency, model calls {THROUGH_THE_SDK}: the 1st thousand compiled and billed, then the rest, the "
        f"{growth['thousands']}th thousand billed on its own.",
        "",
        f"1st thousand {usd(first['usd_per_1000_memories'])} per 1,000 memories, {growth['thousands']}th thousand "
        f"{usd(last['usd_per_1000_memories'])}: **ratio {growth['ratio']}** (target ≤ {GROWTH_TARGET}). "
        f"`duplicate_candidates_count` at the end: {growth['duplicate_candidates_count']}.",
        "",
        "| thousand | calls | planner input / output tokens per call | writer calls, input / output per call "
        "| per 1,000 memories | compile |",
        "|---|---|---|---|---|---|",
    ]
    empty = {"calls": 0, "per_call": {"input_tokens": 0, "output_tokens": 0}}
    for row in (first, last):
        planner, writer = row["by_kind"].get("planner", empty), row["by_kind"].get("writer", empty)
        lines.append(f"| {row['thousand']} | {row['model_calls']} | {planner['per_call']['input_tokens']:,} / "
                     f"{planner['per_call']['output_tokens']:,} | {writer['calls']}, "
                     f"{writer['per_call']['input_tokens']:,} / {writer['per_call']['output_tokens']:,} | "
                     f"{usd(row['usd_per_1000_memories'])} | {row['compile_seconds']:,} s |")
    return [*lines, "", _growth_why(growth)]


def _growth_why(growth: dict) -> str:
    """Which call kind's cost per memory grew, and what in it: the measured breakdown in words."""
    first, last = growth["first"], growth["last"]
    verdict = "met" if growth["ratio"] <= GROWTH_TARGET else "missed"
    grown = [f"{kind} {usd(first['by_kind'].get(kind, {}).get('usd_per_1000_memories', 0.0))} → "
             f"{usd(last['by_kind'].get(kind, {}).get('usd_per_1000_memories', 0.0))}" for kind in KINDS]
    text = f"**Why ({verdict}).** Per 1,000 memories, 1st → {growth['thousands']}th thousand: " + ", ".join(grown) + "."
    planner_a, planner_b = first["by_kind"].get("planner"), last["by_kind"].get("planner")
    if planner_a and planner_b:
        text += (f" A leaf plan's input went from {planner_a['per_call']['input_tokens']:,} to "
                 f"{planner_b['per_call']['input_tokens']:,} tokens and its output from "
                 f"{planner_a['per_call']['output_tokens']:,} to {planner_b['per_call']['output_tokens']:,}")
        parts_a, parts_b = first.get("planner_prompt_bytes_per_call"), last.get("planner_prompt_bytes_per_call")
        if parts_a and parts_b:
            text += " (prompt bytes per plan, " + ", ".join(
                f"{name.replace('_', ' ')} {parts_a.get(name, 0):,} → {parts_b.get(name, 0):,}"
                for name in ("candidate_pages", "open_mentions", "memories", "system")) + ")"
        text += ": an aged scope has a page for most names a batch writes, each sent with its section excerpts."
    shown_a, shown_b = first.get("shown_per_plan"), last.get("shown_per_plan")
    if shown_a and shown_b:
        text += " Shown per plan, 1st → last thousand: " + ", ".join(
            f"{name.replace('_', ' ')} {shown_a.get(name, 0):g} → {shown_b.get(name, 0):g}"
            for name in ("candidate_pages", "candidate_sections", "open_mentions", "sightings")) + "."
    writer_a, writer_b = first["by_kind"].get("writer"), last["by_kind"].get("writer")
    if writer_a or writer_b:
        calls_a, calls_b = (writer_a or {}).get("calls", 0), (writer_b or {}).get("calls", 0)
        text += f" Writer calls per thousand: {calls_a} → {calls_b}"
        split_a, split_b = first.get("writer_calls"), last.get("writer_calls")
        if split_a and split_b:
            text += (f" (condensing only {split_a['condense_only']} → {split_b['condense_only']}, rewrites "
                     f"{split_a['rewrite']} → {split_b['rewrite']})")
        text += (f". A section past its {growth['section_budget_chars']:,}-character budget whose oldest lines are "
                 "dated is folded in code, down to half the budget (planners/section_fold.py); the writer is called "
                 "for the rest: a body whose bulk is prose, a rewrite.")
    return text


# --------------------------------------------------------------------------- candidates


def _same_wiki(rows: list[dict]) -> bool:
    return len({json.dumps(row.get("wiki_digest"), sort_keys=True) for row in rows}) == 1


def candidates_rows(detail: dict) -> list[SummaryRow]:
    paddings = ", ".join(str(row["padding"]) for row in detail["rows"])
    same = _same_wiki(detail["rows"])
    return [SummaryRow(f"same wiki whatever the recent-page padding ({paddings})", None, "yes" if same else "**no**",
                       "yes", same)]


def candidates_section(detail: dict) -> list[str]:
    rows = detail["rows"]
    lines = [
        "Whether sending fewer candidate pages to the planner misses merges: the sample compiled once per "
        "recent-page padding (`store.scope_reads.MAX_RECENT_PADDING`, recently compiled pages sent after the pages "
        f"the batch names; the product's is {detail['product_padding']}).",
        "",
        f"**How.** The 700-memory sample at zero latency, model calls {THROUGH_THE_SDK}, once per padding "
        "(`bench/candidates.py`). A merge missed would show as a different wiki (more pages, a duplicate candidate) "
        "or different digests of its sections, provenance (each section's memories) or bodies.",
        "",
        "| padding | candidate pages per plan | planner input tokens per plan | per 1,000 memories | pages / open "
        "mentions | new pages merged | `duplicate_candidates_count` | digests (sections / provenance / bodies) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        digest = row.get("wiki_digest", {})
        lines.append(f"| {row['padding']} | {row['candidates_per_plan']} | {row['planner_input_tokens_per_plan']:,} | "
                     f"{usd(row['usd_per_1000_memories'])} | {row['wiki']['active_pages']} / "
                     f"{row['wiki']['open_mentions']} | {row['proposed_new_pages_merged']:g} | "
                     f"{row['duplicate_candidates_count']} | {digest.get('sections', '-')[:8]} / "
                     f"{digest.get('provenance', '-')[:8]} / {digest.get('bodies', '-')[:8]} |")
    same = _same_wiki(rows)
    lines += ["", "Every padding gave the same wiki: on the sample no merge depends on a padded page (the simulator "
              "reads the prompt as a careful model would and links a memory to a page by the names the memory writes, "
              "and the batch's own lookups find those). The padding is for memories that refer to a recent page "
              "without naming it, which a real model could resolve and the sample cannot measure." if same else
              "The paddings gave different wikis: see the digests."]
    return lines

