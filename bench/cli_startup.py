"""How long the `wiki` command takes to answer, as a person at a terminal waits for it.

Each command runs as its own process (the console script, as typed), BENCH_REPEATS times after one
warm-up run; the medians are reported:
- `wiki --help`: the group's help, which imports no command module;
- `wiki page --help`: a read command's module loaded (its imports), no database;
- `wiki search brisket`: a whole read command, connecting to Postgres and querying an empty scope.

`python -m bench.cli_startup` runs it alone on a throwaway embedded Postgres and writes its keys into
bench/results.json; `make bench` runs it with the rest.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WIKI = str(Path(sys.executable).with_name("wiki"))
RESULTS_PATH = Path(__file__).resolve().parent / "results.json"
COMMANDS = {
    "help": ["--help"],
    "module_help": ["page", "--help"],
    "read": ["search", "brisket", "--tenant", "bench", "--owner", "cli"],
}
log = logging.getLogger("bench.cli_startup")


def _seconds(args: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    done = subprocess.run([WIKI, *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"wiki {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed


def measure(database_url: str, data_dir: Path, repeats: int) -> dict:
    """Median seconds per command, and every run."""
    env = {**os.environ, "DATABASE_URL": database_url, "WIKI_DATA_DIR": str(data_dir), "COLUMNS": "100"}
    runs: dict[str, list[float]] = {}
    for name, args in COMMANDS.items():
        _seconds(args, env)  # warm-up: the file cache, as a second command in a session has it
        runs[name] = [round(_seconds(args, env), 3) for _ in range(repeats)]
        log.info("wiki %s: median %.2f s", " ".join(args), statistics.median(runs[name]))
    return {
        "cli_help_seconds": round(statistics.median(runs["help"]), 3),
        "cli_module_help_seconds": round(statistics.median(runs["module_help"]), 3),
        "cli_read_seconds": round(statistics.median(runs["read"]), 3),
        "cli_startup_runs": runs,
    }


async def _standalone(repeats: int) -> dict:
    from runtime.database import engine_for, migrate
    from runtime.devservices import EmbeddedPostgres, free_port

    with tempfile.TemporaryDirectory(prefix="wiki-bench-cli-") as tmp:
        server = EmbeddedPostgres(pgdata=Path(tmp) / "pg" / "data", port=free_port(), durable=False)
        server.ensure_running()
        try:
            engine = engine_for(server.url())
            await migrate(engine)
            await engine.dispose()
            return await asyncio.to_thread(measure, server.url(), Path(tmp) / "data", repeats)
        finally:
            server.stop()


def merge_into_results(measured: dict) -> None:
    results = json.loads(RESULTS_PATH.read_text()) if RESULTS_PATH.exists() else {}
    runs = measured.pop("cli_startup_runs")
    results.update(measured)
    results.setdefault("detail", {})["cli_startup_runs"] = runs
    RESULTS_PATH.write_text(json.dumps(results, indent=2, default=str) + "\n")  # as bench/report.py writes it


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    repeats = int(os.environ.get("BENCH_REPEATS", "3"))
    merge_into_results(asyncio.run(_standalone(repeats)))
    log.info("wrote %s", RESULTS_PATH)


if __name__ == "__main__":
    main()
