"""How long the `wiki` command takes to answer, as a person at a terminal waits for it.

Each command runs as its own process (the console script, as typed), BENCH_REPEATS times after one
warm-up run; the medians are reported:
- `wiki --help`: the group's help, which imports no command module;
- `wiki page --help`: a read command's module loaded (its imports), no database;
- `wiki search brisket`: a whole read command, connecting to Postgres and querying an empty scope.

`python -m bench cli_startup` measures it alone (bench/parts.py); `make bench` runs it with the rest.
"""

from __future__ import annotations

import asyncio
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.formatting import SummaryRow

WIKI = str(Path(sys.executable).with_name("wiki"))
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


TARGETS_SECONDS = {"help": 0.5, "read": 1.5}


async def measure_cli_startup(services, repeats: int) -> dict:
    """The bench part: the commands against a fresh migrated database of the bench's Postgres."""
    async with services.fresh_database() as url:
        with tempfile.TemporaryDirectory(prefix="wiki-bench-cli-") as tmp:
            return await asyncio.to_thread(measure, url, Path(tmp) / "data", repeats)


def headline(detail: dict) -> dict:
    return {key: detail[key] for key in ("cli_help_seconds", "cli_module_help_seconds", "cli_read_seconds")}


def rows(detail: dict) -> list[SummaryRow]:
    return [
        SummaryRow("`wiki --help`", "cli_help_seconds", f"{detail['cli_help_seconds']:.2f} s",
                   f"≤ {TARGETS_SECONDS['help']} s", detail["cli_help_seconds"] <= TARGETS_SECONDS["help"]),
        SummaryRow("a read command (`wiki search`)", "cli_read_seconds", f"{detail['cli_read_seconds']:.2f} s",
                   f"≤ {TARGETS_SECONDS['read']} s", detail["cli_read_seconds"] <= TARGETS_SECONDS["read"]),
    ]


def section(detail: dict) -> list[str]:
    lines = [
        "How long the `wiki` command takes to answer, as a person at a terminal waits for it: each command "
        "run as its own process (the console script), after one warm-up run; medians.",
        "",
        "| command | median | runs |",
        "|---|---|---|",
    ]
    for name, args in COMMANDS.items():
        runs = detail["cli_startup_runs"][name]
        lines.append(f"| `wiki {' '.join(args)}` | {statistics.median(runs):.2f} s | "
                     f"{', '.join(f'{run:.2f}' for run in runs)} |")
    return lines
