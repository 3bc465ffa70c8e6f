"""`make bench` / `python -m bench`: every benchmark, then bench/results.json and docs/BENCHMARKS.md.

It ends with the read-latency benchmark (bench/reads.py), which `python -m bench.reads` runs alone,
and the cost and wall time per memory (bench/cost_realistic.py: cost by call kind, the 700-memory
sample at a realistic model speed, the cost growth of one scope), which `python -m bench.cost_realistic`
runs alone, and the load on `wiki serve` (bench/server_load.py; `python -m bench.server_load` runs it alone).
BENCH_REPEATS (default 3) sets how many times each measurement runs; the report gives medians.
The many-scopes run (metric 3, bench/many_scopes.py; `python -m bench.many_scopes` runs it alone) is
shaped by the environment variables `bench.many_scopes.workload_from_env` names.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench import cost_realistic, many_scopes, report, server_load
from bench.cost import cost_per_memory
from bench.overhead import bench_settings, compile_sample
from bench.prompt_size import SCOPE_SIZES, planner_input
from bench.reads import bench_reads, read_p95
from bench.services import running_services

LATENCIES_MS = (0, 500)
log = logging.getLogger("bench")


async def run_all(repeats: int) -> dict:
    started_at = datetime.now(UTC)
    started = time.monotonic()
    machine = report.machine()
    workload = many_scopes.workload_from_env()
    compiles: dict[int, list[dict]] = {latency: [] for latency in LATENCIES_MS}
    async with running_services() as services:
        for repeat in range(repeats):
            for latency in LATENCIES_MS:  # interleaved, so a slow spell of the machine hits both alike
                result = await compile_sample(services, latency)
                compiles[latency].append(result.summary())
                log.info("700-memory compile %d/%d at L=%d ms: %.1f s", repeat + 1, repeats, latency,
                         result.wall_seconds)
        prompt_scopes = []
        for pages in SCOPE_SIZES:
            prompt_scopes.append(await planner_input(services, pages))
            log.info("planner input with %d pages: %d chars", pages, prompt_scopes[-1]["input_chars"])
        many = await many_scopes.measure_section(services, workload, repeats)
        async with services.fresh_database() as url:
            with tempfile.TemporaryDirectory(prefix="wiki-bench-reads-") as data_dir:
                reads = await bench_reads(url, Path(data_dir))
        async with services.fresh_database() as url:
            with tempfile.TemporaryDirectory(prefix="wiki-bench-load-") as data_dir:
                load = await server_load.bench_server_load(url, services.temporal_address, Path(data_dir),
                                                           services.postgres.pid())
        cost_and_wall = await cost_realistic.run(cost_realistic.MEASUREMENTS, services)
    l0 = report.median_run(compiles[0])
    results = report.build_results(
        repeats=repeats, started_at=started_at, bench_seconds=time.monotonic() - started, machine_info=machine,
        l0_runs=compiles[0], l500_runs=compiles[500], prompt_scopes=prompt_scopes, many_scopes=many,
        cost=cost_per_memory(l0["ledger"], bench_settings().model_id),
    )
    results["read_p95_ms"] = read_p95(reads)
    results["detail"]["reads"] = reads
    server_load.merge_into_results(results, load)
    # Last: its SDK-billed cost replaces the ledger's `cost_per_1000_memories_usd`.
    return cost_realistic.merge_into_results(results, cost_and_wall)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    repeats = int(os.environ.get("BENCH_REPEATS", "3"))
    if repeats < 1:
        raise SystemExit("BENCH_REPEATS must be at least 1")
    results = asyncio.run(run_all(repeats))
    report.write_results(results)
    report.write_markdown(results)
    log.info("wrote %s and %s", report.RESULTS_PATH, report.DOC_PATH)


if __name__ == "__main__":
    main()
