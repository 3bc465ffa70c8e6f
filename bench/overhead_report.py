"""The orchestration overhead part's figures in bench/results.json and its section of the page."""

from __future__ import annotations

import statistics

from bench.formatting import SummaryRow, met, seconds

OVERHEAD_TARGET = 1.15
COMPILE_L0_TARGET_SECONDS = 20.0
CONTENTION_WORTH_SAYING = 0.10  # other processes' share of the CPUs above which the section says so
MODEL_ACTIVITIES = frozenset({"llm.plan_batch", "llm.write_section", "llm.judge_merges", "aggregation.plan"})
METHOD = (
    "**How.** The 700-memory sample (`sample/corpus.py`, seed 7) retained in a fresh database, then one admin "
    "compile followed across continue-as-new by an in-process worker (`app.worker.build_worker`), its model "
    "calls going through the anthropic SDK (`WIKI_LLM=anthropic`), streamed over loopback HTTP to the Claude "
    "simulator (`claude_sim/`), whose time to first token is L and whose reply then arrives whole. Wall time "
    "runs from the signal to the last run's result. The model critical path and every per-batch figure come "
    "from the histories of every run of the chain (`bench/history.py`): L for each planner call and for each "
    "write phase (only calls that actually waited L count), a write phase during which the next batch was "
    "planned ahead costing the longer of the two. Database round trips are counted by a SQLAlchemy "
    "`before_cursor_execute` / `begin` listener on the worker's engine (each transaction adds a BEGIN and a "
    "COMMIT); CPU seconds come from `/proc` (`bench/cpu.py`). Each latency is compiled `BENCH_REPEATS` times, "
    "interleaved; the median run is shown."
)


def headline(detail: dict) -> dict:
    return {"overhead_ratio": round(statistics.median(detail["overhead_ratio_runs"]), 3),
            "compile_700_seconds_l0": detail["l0"]["median"]["wall_seconds"]}


def rows(detail: dict) -> list[SummaryRow]:
    top = headline(detail)
    merges = detail["sample_merges"]
    return [
        SummaryRow("wall time / model critical path at L = 500 ms", "overhead_ratio", f"{top['overhead_ratio']:.2f}",
                   f"≤ {OVERHEAD_TARGET}", top["overhead_ratio"] <= OVERHEAD_TARGET),
        SummaryRow("700-memory compile at L = 0", "compile_700_seconds_l0", seconds(top["compile_700_seconds_l0"]),
                   f"< {COMPILE_L0_TARGET_SECONDS:.0f} s",
                   top["compile_700_seconds_l0"] < COMPILE_L0_TARGET_SECONDS),
        SummaryRow("duplicate candidates after the 700-memory sample (L = 0 compile)", None,
                   str(merges["duplicate_candidates_count"]), "0", merges["duplicate_candidates_count"] == 0),
    ]


def section(detail: dict) -> list[str]:
    l0, l500 = detail["l0"]["median"], detail["l500"]["median"]
    ratio = headline(detail)["overhead_ratio"]
    columns = [("L = 0", l0), ("L = 500 ms", l500)]
    table = [
        ("wall time (median)", lambda r: seconds(r["wall_seconds"])),
        ("model critical path", lambda r: seconds(r["critical_path_seconds"])),
        ("model activities as run (their DB work included)", lambda r: seconds(r["measured_model_activity_seconds"])),
        ("batches / workflow runs (continue-as-new)", lambda r: f"{r['batches']} / {r['workflow_runs']}"),
        ("activities executed", lambda r: str(r["activities_executed"])),
        ("history events (all runs) / per batch",
         lambda r: f"{r['history_events']} / {r['history_events_per_batch']:.0f}"),
        ("DB round trips per batch (statements + BEGIN/COMMIT)",
         lambda r: f"{r['db_round_trips_per_batch']:.0f} ({r['db_statements_per_batch']:.0f} statements, "
                   f"{r['db_transactions_per_batch']:.0f} transactions)"),
        ("section writes: phases / rounds (a round waits for every earlier write)",
         lambda r: f"{r['section_write_phases']} / {r['section_write_rounds']}"),
        ("activity attempts retried", lambda r: str(sum(r["activity_retries"].values()))),
        ("CPU busy (share of all CPUs) / other processes' CPU seconds",
         lambda r: f"{r['cpu_seconds']['machine_busy_share']:.0%} / {r['cpu_seconds']['other_processes']:.1f} s"),
    ]
    lines = [
        "What the workflow costs around the model: the 700-memory sample compiled with a model of fixed latency "
        "L, the wall time against the model's own critical path.",
        "",
        METHOD,
        "",
        "| | " + " | ".join(name for name, _ in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    lines += [f"| {label} | " + " | ".join(render(run) for _, run in columns) + " |" for label, render in table]
    lines += ["", f"Overhead ratio per run at L = 500 ms: {', '.join(f'{r:.2f}' for r in detail['overhead_ratio_runs'])} "
              f"(median {ratio:.2f}). Activities by type: "
              + ", ".join(f"`{name}` {count}" for name, count in l0["activities_by_type"].items()) + "."]
    lines += ["", _overhead_why(ratio, l500), "", _l0_why(l0), "", _merges(detail["sample_merges"])]
    return lines


def _db_hotspots(run: dict, top: int = 3) -> str:
    spent = {name: entry["run"] for name, entry in run["activity_seconds_by_type"].items()}
    statements = run["db_statements_by_activity"]
    batches = max(run["batches"], 1)
    ranked = sorted((name for name in spent if name not in MODEL_ACTIVITIES), key=spent.__getitem__, reverse=True)
    return ", ".join(f"`{name}` {spent[name]:.1f} s ({statements.get(name, 0) / batches:.0f} statements per batch)"
                     for name in ranked[:top])


def _overhead_why(ratio: float, l500: dict) -> str:
    latency = l500["latency_ms"] / 1000
    wall, critical = l500["wall_seconds"], l500["critical_path_seconds"]
    extra_rounds = l500["section_write_rounds"] - l500["section_write_phases"]
    waiting_on_groups = extra_rounds * latency
    inside_model_calls = max(l500["measured_model_activity_seconds"] - critical - waiting_on_groups, 0.0)
    database_steps = sum(entry["run"] for name, entry in l500["activity_seconds_by_type"].items()
                         if name not in MODEL_ACTIVITIES)
    between = wall - critical - waiting_on_groups
    rest = max(between - inside_model_calls - database_steps, 0.0)
    batches = max(l500["batches"], 1)
    verdict = "met" if ratio <= OVERHEAD_TARGET else (
        f"missed by {ratio / OVERHEAD_TARGET - 1:.0%}: {seconds(wall)} against an allowed "
        f"{seconds(critical * OVERHEAD_TARGET)}")
    rounds = (
        f"{seconds(waiting_on_groups)} is model time beyond it: a batch with more section writes than "
        f"`section_writer_concurrency` needs more than one L for them ({l500['section_write_rounds']} rounds "
        f"counted for {l500['section_write_phases']} write phases). "
        if extra_rounds else
        f"Every write phase took one round ({l500['section_write_phases']} phases): all of a batch's section "
        "writes ran at once. ")
    text = (
        f"**Why ({verdict}).** Of the {seconds(wall)} at L = 500 ms, {seconds(critical)} is the model critical "
        f"path. {rounds}The remaining {seconds(between)} ({between / batches:.2f} s per batch) is work between "
        f"and around model calls: {seconds(inside_model_calls)} inside the model activities themselves (the "
        f"planner's context read and plan staging, each writer's task read and draft write), "
        f"{seconds(database_steps)} in the database activities (run as local activities; the largest: "
        f"{_db_hotspots(l500)}), and {seconds(rest)} in workflow tasks, task dispatch and activity pickup "
        "between them. Only a batch's plan ahead runs beside another batch's work (during its section writes); "
        "the rest of a scope's compile is sequential, so it adds to the model's time."
        + _contention(l500["cpu_seconds"]))
    if ratio > OVERHEAD_TARGET:
        text += (f" The target allows {critical * (OVERHEAD_TARGET - 1) / batches * 1000:.0f} ms per batch for all "
                 "of it.")
    return text


def _l0_why(l0: dict) -> str:
    ok = l0["wall_seconds"] < COMPILE_L0_TARGET_SECONDS
    cpu = l0["cpu_seconds"]
    return (
        f"At L = 0 the compile {'meets' if ok else 'misses'} the {COMPILE_L0_TARGET_SECONDS:.0f} s target "
        f"({seconds(l0['wall_seconds'])}). CPU seconds during it: bench process (worker, workflows, simulator) "
        f"{cpu.get('bench_process', 0):.1f}, Postgres {cpu.get('postgres', 0):.1f}, Temporal server "
        f"{cpu.get('temporal', 0):.1f}, other processes {cpu['other_processes']:.1f}; the CPUs were "
        f"{cpu['machine_busy_share']:.0%} busy.{_contention(cpu)}"
    )


def _contention(cpu: dict[str, float]) -> str:
    """A sentence when processes other than the benchmark took a noticeable share of the CPUs."""
    share = cpu["other_processes"] / cpu["machine_total"] if cpu["machine_total"] else 0.0
    if share < CONTENTION_WORTH_SAYING:
        return ""
    return (f" Processes outside the benchmark took {share:.0%} of the machine's CPU time meanwhile, so this "
            f"figure is slower than the same code on an idle machine.")


def _merges(merges: dict) -> str:
    ways = [(merges.get(name), label) for name, label in (
        ("alias_dedup_merged", "by exact alias"), ("fuzzy_dedupe_merges", "by trigram similarity"),
        ("ladder_merges", "on the resolution ladder's other rungs"), ("judged_merges", "by the merge judge"))]
    apart = merges.get("judged_apart")
    return (
        f"In the L = 0 compile, {merges['proposed_new_pages_merged']:g} proposed new pages were merged into existing "
        "ones (" + ", ".join(f"{count:g} {label}" for count, label in ways if count is not None) + ")"
        + (f", {apart:g} judged apart" if apart is not None else "")
        + f"; `duplicate_candidates_count` at the end was {merges['duplicate_candidates_count']} "
        f"(target 0: {met(merges['duplicate_candidates_count'] == 0)})."
    )
