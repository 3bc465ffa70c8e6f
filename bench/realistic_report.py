"""The realistic-speed and overlap parts' figures in bench/results.json and their sections of the page
(figures from bench/cost_realistic.py)."""

from __future__ import annotations

from bench.formatting import SummaryRow, missed_by, seconds

WALL_TARGET_SECONDS = 200.0
OVERHEAD_TARGET = 1.10
SPEED = (
    "The simulator answers with a time to first token of {ttft:g} s and {speed:g} output tokens/s: an assumed "
    "speed for Claude Haiku 4.5 (we found no published figure to prefer)."
)
CRITICAL_PATH = (
    "The model critical path is, from the compile's histories (`bench/history.py`), every planner call's time to "
    "first token plus its output at that speed, plus the slowest model-calling section write of each write "
    "phase, a write phase during which the next batch was planned ahead costing the longer of the two."
)


def realistic_headline(realistic: dict) -> dict:
    return {"wall_700_realistic_seconds": realistic["wall_seconds"],
            "model_critical_path_700_realistic_seconds": realistic["model_critical_path_seconds"],
            "overhead_ratio_realistic": realistic["overhead_ratio"]}


def realistic_rows(realistic: dict) -> list[SummaryRow]:
    return [
        SummaryRow("700-memory compile at a realistic model speed", "wall_700_realistic_seconds",
                   seconds(realistic["wall_seconds"]), f"≤ {WALL_TARGET_SECONDS:g} s",
                   realistic["wall_seconds"] <= WALL_TARGET_SECONDS),
        SummaryRow("its wall time / its model critical path", "overhead_ratio_realistic",
                   f"{realistic['overhead_ratio']:.3f}", f"≤ {OVERHEAD_TARGET}",
                   realistic["overhead_ratio"] <= OVERHEAD_TARGET),
    ]


def realistic_section(realistic: dict) -> list[str]:
    parts = realistic["critical_path_parts"]
    critical = realistic["model_critical_path_seconds"]
    overhead = realistic["wall_seconds"] - critical
    # Plans ahead are (nearly all of) the overlapped phases: the writes they overlap are the shorter part.
    leaf_budget = max(WALL_TARGET_SECONDS - overhead - parts["aggregation_plans"] - parts["write_phases"], 0.0)
    plans = max(realistic["leaf_plan_calls"], 1)
    ahead = realistic.get("leaf_plans_ahead", 0)
    tokens_per_plan = max(leaf_budget / plans - realistic["ttft_seconds"], 0.0) * realistic["output_tokens_per_second"]
    planning = (f"{ahead} of the {plans} leaf plans were planned while the previous batch's sections were written "
                "(overlap: docs/ARCHITECTURE.md), so each of those write phases costs the longer of the two, and "
                "the plans are" if ahead else
                "each batch is planned only after the previous one is applied (no plan ahead), and the plans are")
    ok = realistic["wall_seconds"] <= WALL_TARGET_SECONDS
    return [
        "How long the 700-memory sample takes to compile when the model answers at a realistic speed, and how much "
        "of that is the model's own time.",
        "",
        "**How.** " + SPEED.format(ttft=realistic["ttft_seconds"], speed=realistic["output_tokens_per_second"])
        + " Model calls go through the anthropic SDK, streamed over loopback HTTP to the simulator. " + CRITICAL_PATH,
        "",
        f"**Wall {seconds(realistic['wall_seconds'])}** (target ≤ {WALL_TARGET_SECONDS:g} s: "
        f"{missed_by(realistic['wall_seconds'], WALL_TARGET_SECONDS, '', ' s')}); model critical path "
        f"{seconds(critical)} (leaf plans made in turn "
        f"{seconds(parts['leaf_plans'])}, write phases with the next batch planned during them "
        f"{seconds(parts.get('overlapped_phases', 0.0))}, other write phases {seconds(parts['write_phases'])}, "
        f"aggregation plans {seconds(parts['aggregation_plans'])}); overhead ratio {realistic['overhead_ratio']} "
        f"(wall / critical path). {realistic['batches']} batches, {realistic['leaf_plan_calls']} leaf plans of "
        f"{realistic['leaf_plan_output_tokens_mean']:,} output tokens on average; `duplicate_candidates_count` "
        f"{realistic['duplicate_candidates_count']}.",
        "",
        f"**Why ({'met' if ok else 'missed'}).** The wall time is output-bound: the leaf plans are most of the "
        f"critical path; {planning} {realistic['leaf_plan_output_tokens_mean']:,} output tokens each. The model's own "
        f"time is {seconds(critical)} against the {WALL_TARGET_SECONDS:g} s target. "
        + ("" if ok else
           f"With the aggregation plans and the write phases nothing overlaps as they are, the leaf plans would have "
           f"to fit in {leaf_budget:,.0f} s, i.e. about {tokens_per_plan:,.0f} output tokens a plan instead of "
           f"{realistic['leaf_plan_output_tokens_mean']:,}. ")
        + f"The orchestration overhead is {seconds(overhead)} in all "
        f"({overhead / max(realistic['batches'], 1):.1f} s a batch: workflow tasks, database activities, dispatch), "
        f"{'within' if realistic['overhead_ratio'] <= OVERHEAD_TARGET else 'above'} the overhead ratio's "
        f"{OVERHEAD_TARGET} target.",
    ]


def overlap_rows(overlap: dict) -> list[SummaryRow]:
    off, on = overlap["off"], overlap["on"]
    saved = off["model_critical_path_seconds"] - on["model_critical_path_seconds"]
    return [SummaryRow("model critical path saved by planning the next batch during the writes", None,
                       f"{seconds(saved)} ({saved / off['model_critical_path_seconds']:.1%})", "–", None),
            SummaryRow("same wiki with overlap on as off", None, "yes" if overlap["same_wiki"] else "**no**", "yes",
                       overlap["same_wiki"])]


def overlap_section(overlap: dict) -> list[str]:
    off, on = overlap["off"], overlap["on"]
    rows = [
        ("wall", lambda r: seconds(r["wall_seconds"])),
        ("model critical path", lambda r: seconds(r["model_critical_path_seconds"])),
        ("leaf plans made in turn", lambda r: seconds(r["critical_path_parts"]["leaf_plans"])),
        ("write phases with a plan ahead (the longer of the two)",
         lambda r: seconds(r["critical_path_parts"].get("overlapped_phases", 0.0))),
        ("other write phases", lambda r: seconds(r["critical_path_parts"]["write_phases"])),
        ("aggregation plans", lambda r: seconds(r["critical_path_parts"]["aggregation_plans"])),
        ("leaf plans planned ahead / all", lambda r: f"{r.get('leaf_plans_ahead', 0)} / {r['leaf_plan_calls']}"),
        ("overhead ratio (wall / critical path)", lambda r: f"{r['overhead_ratio']:.3f}"),
    ]
    saved = off["model_critical_path_seconds"] - on["model_critical_path_seconds"]
    return [
        "What planning batch n + 1 while batch n's sections are written (overlap, docs/ARCHITECTURE.md) gains at a "
        "realistic model speed, and whether the wiki stays the same.",
        "",
        "**How.** The 700-memory sample compiled twice in a row, `WIKI_OVERLAP_PLANNING=false` then `true`, as in "
        "the realistic part. " + SPEED.format(ttft=on["ttft_seconds"], speed=on["output_tokens_per_second"])
        + " " + CRITICAL_PATH + " The wikis are compared by digest (sections, provenance, bodies).",
        "",
        "| | overlap off | overlap on |",
        "|---|---|---|",
        *[f"| {label} | {render(off)} | {render(on)} |" for label, render in rows],
        "",
        f"Overlap took {seconds(saved)} off the model critical path ({saved / off['model_critical_path_seconds']:.1%}); "
        f"the wall went from {seconds(off['wall_seconds'])} to {seconds(on['wall_seconds'])}. "
        + ("The wiki was the same (equal digests of sections, provenance and bodies)." if overlap["same_wiki"] else
           "**The wiki differed** (the digests of sections, provenance or bodies)."),
    ]
