"""The bootstrap part's figures in bench/results.json and its section of the page (figures from
bench/bootstrap.py)."""

from __future__ import annotations

from bench.formatting import SummaryRow, load, met, seconds

OFFLINE_WALL_TARGET_SECONDS = 600.0


def _ok(run: dict, *, wall: bool) -> bool:
    fine = run["completed"] and run["attempts_timed_out"] == 0
    if wall:
        fine = fine and run["attempts_cancelled"] == 0 and run["wall_seconds"] <= OFFLINE_WALL_TARGET_SECONDS
    return fine


def headline(detail: dict) -> dict:
    offline, simulated = detail["offline"], detail["simulator_batches"]
    return {"bootstrap_10k_offline_seconds": offline["wall_seconds"],
            "bootstrap_10k_offline_attempts_timed_out": offline["attempts_timed_out"],
            "bootstrap_10k_offline_attempts_cancelled": offline["attempts_cancelled"],
            "bootstrap_10k_batches_seconds": simulated["wall_seconds"],
            "bootstrap_10k_batches_attempts_timed_out": simulated["attempts_timed_out"]}


def rows(detail: dict) -> list[SummaryRow]:
    offline, simulated = detail["offline"], detail["simulator_batches"]
    return [
        SummaryRow(f"{offline['memories']:,} memories offline in one compile (load {load(offline['load_average']['start'])})",
                   "bootstrap_10k_offline_seconds",
                   f"{seconds(offline['wall_seconds'])}, {offline['attempts_timed_out']} timed out, "
                   f"{offline['attempts_cancelled']} cancelled",
                   f"completes, 0 timed out or cancelled, ≤ {OFFLINE_WALL_TARGET_SECONDS:g} s", _ok(offline, wall=True)),
        SummaryRow(f"{simulated['memories']:,} memories through the SDK and the simulator, Message Batches",
                   "bootstrap_10k_batches_seconds",
                   f"{seconds(simulated['wall_seconds'])}, {simulated['attempts_timed_out']} timed out",
                   "completes, 0 timed out", _ok(simulated, wall=False)),
    ]


def _run_row(name: str, run: dict) -> str:
    cpu = run["cpu_seconds"]
    return (f"| {name} | {'yes' if run['completed'] else '**no**'} ({run['memories_compiled']:,} of {run['memories']:,}) "
            f"| {run['wall_seconds']:,.1f} | {run['memories_per_second']:.2f} | {run['peak_worker_memory_mib']:,.0f} "
            f"| {run['activity_attempts']:,} | {run['attempts_timed_out']} | {run['attempts_cancelled']} "
            f"| {run['attempts_failed']} | {cpu.get('worker', 0):,.0f} / {cpu.get('postgres', 0):,.0f} / "
            f"{cpu.get('temporal', 0):,.0f} | {load(run['load_average']['start'])} → {load(run['load_average']['end'])} |")


def section(detail: dict) -> list[str]:
    offline, simulated = detail["offline"], detail["simulator_batches"]
    offload, cpus = detail["offload"], detail["cpus"]
    lines = [
        f"{offline['memories']:,} memories of the sample generator retained at once, then compiled by one signal, as "
        "`wiki compile` does, by one worker process composed as `wiki worker` composes it "
        f"({cpus} CPUs: a CPU pool of {cpus} threads, {detail['slots_per_cpu']} activity slots per CPU with the "
        f"scripted planner, {detail.get('page_size', 50)} memories a batch offline, 50 with the model). Offline: the scripted planner, trigger admin. Simulator: the anthropic SDK against the "
        "Claude simulator, `wiki compile --bootstrap` in Message Batches mode (the simulator ends a batch at once; the "
        "workflow polls every second). Attempts are every regular activity's attempts in the runs' histories plus "
        "every local activity; timed out, cancelled and failed are the ledger's counts (activities/attempts.py). "
        "The machine is shared with other work: its load average at the start and the end is beside each figure.",
        "",
        "| import | completed | wall s | memories/s | peak worker MiB | attempts | timed out | cancelled | failed "
        "| CPU s worker / Postgres / Temporal | load average |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        _run_row("offline (scripted planner)", offline),
        _run_row("SDK + simulator, Message Batches", simulated),
        "",
        f"Offline target: completes with 0 attempts timed out or cancelled in ≤ {OFFLINE_WALL_TARGET_SECONDS:g} s: "
        f"{met(_ok(offline, wall=True))}. Through the simulator: completes with 0 timed out: "
        f"{met(_ok(simulated, wall=False))} ({simulated.get('model_calls', 0):,} model calls, "
        f"{simulated.get('batched_model_calls', 0):,} of them in Message Batches).",
        "",
        "**Where CPU-bound steps run** (planners/cpu_pool.py): "
        f"{offload['sections']} section rewrites ({offload['memories']:,} memories, {offload['pickled_mib']} MiB "
        "pickled) while a probe measures how late the event loop wakes it, the wait a heartbeat would have:",
        "",
        "| way | wall s | longest loop stall ms | load average |",
        "|---|---|---|---|",
        *[f"| {name} | {way['wall_seconds']:.2f} | {way['longest_loop_stall_ms']:,} | {load(way['load'])} |"
          for name, way in offload["ways"].items()],
        "",
        f"**Activity slots per CPU** ({detail['slots'][0]['activity_slots'] // max(detail['slots'][0]['slots_per_cpu'], 1)} "
        "CPUs), the offline import of a smaller sample:",
        "",
        "| slots per CPU | slots | wall s | memories/s | peak worker MiB | timed out | cancelled | load average |",
        "|---|---|---|---|---|---|---|---|",
        *[f"| {s['slots_per_cpu']} | {s['activity_slots']} | {s['wall_seconds']:.1f} | {s['memories_per_second']:.2f} "
          f"| {s['peak_worker_memory_mib']:,.0f} | {s['attempts_timed_out']} | {s['attempts_cancelled']} "
          f"| {load(s['load_average']['start'])} → {load(s['load_average']['end'])} |" for s in detail["slots"]],
    ]
    if "page_sizes" in detail:
        sizes = detail["page_sizes"]
        lines += [
            "",
            f"**Memories per batch**, the offline import of {sizes[0]['memories']:,} memories (WIKI_RECORD_PAGE_SIZE; "
            f"unset, the scripted planner takes {detail['page_size']}): it rebuilds every section a batch touches "
            "from all the memories the section cites, so fewer batches rebuild a large section fewer times.",
            "",
            "| memories per batch | runs | wall s | memories/s | CPU s worker / Postgres | peak worker MiB | timed out "
            "| cancelled | load average |",
            "|---|---|---|---|---|---|---|---|---|",
            *[f"| {s['page_size']} | {s['runs']} | {s['wall_seconds']:.1f} | {s['memories_per_second']:.2f} "
              f"| {s['cpu_seconds'].get('worker', 0):,.0f} / {s['cpu_seconds'].get('postgres', 0):,.0f} "
              f"| {s['peak_worker_memory_mib']:,.0f} | {s['attempts_timed_out']} | {s['attempts_cancelled']} "
              f"| {load(s['load_average']['start'])} → {load(s['load_average']['end'])} |" for s in sizes],
        ]
    return lines
