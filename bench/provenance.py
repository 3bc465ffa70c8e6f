"""Where a benchmark part's figures came from, and where they are kept.

Every part of the bench (bench/parts.py) records the run that measured it beside its figures in
bench/results.json: the commit, the date, the machine, the load average at its start and end, how
many repeats and how long it took. The page (bench/page.py) prints that record at the head of the
part's section, so a figure is never shown without the run it came from.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS_PATH = ROOT / "bench" / "results.json"
DOC_PATH = ROOT / "docs" / "BENCHMARKS.md"


def machine() -> dict[str, Any]:
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
                 platform.processor() or "unknown")
    meminfo = Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists() else ""
    mem_kib = next((int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal")), 0)
    return {"nproc": os.cpu_count(), "memory_gib": round(mem_kib / 1024 / 1024, 1), "cpu_model": model,
            "python": platform.python_version()}


def load_average() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def git_commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()

    commit = git("rev-parse", "HEAD") or "unknown"
    # The bench's own outputs change as its parts are written: they say nothing about the code measured.
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                  f":!{RESULTS_PATH.relative_to(ROOT)}", f":!{DOC_PATH.relative_to(ROOT)}")
    return f"{commit} (with uncommitted changes)" if changed else commit


class RunRecord:
    """The provenance of one part's measurement: started when created, closed by `finish`."""

    def __init__(self) -> None:
        self.commit = git_commit()
        self.date = datetime.now(UTC).isoformat(timespec="seconds")
        self.load_at_start = load_average()
        self._started = time.monotonic()

    def finish(self, repeats: int | None) -> dict[str, Any]:
        return {"commit": self.commit, "date": self.date, "seconds": round(time.monotonic() - self._started, 1),
                "machine": machine(), "load_average": {"start": self.load_at_start, "end": load_average()},
                "repeats": repeats}


def load_results() -> dict[str, Any]:
    return json.loads(RESULTS_PATH.read_text()) if RESULTS_PATH.exists() else {}


def write_results(results: dict[str, Any]) -> None:
    RESULTS_PATH.write_text(json.dumps(results, indent=2, default=str) + "\n")
