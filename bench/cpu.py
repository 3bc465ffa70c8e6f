"""CPU seconds spent during a measurement, by component, from /proc (Linux).

Tells a run that was CPU-bound from one that waited on something else, and how much of the
machine other processes took while the benchmark ran.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


def machine_busy_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of all cores since boot."""
    values = [int(v) for v in (PROC / "stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values) - idle) / TICKS, sum(values) / TICKS


def _stat(pid: int) -> list[str] | None:
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2:].split()  # fields from the 3rd on (state, ppid, ...)


def process_seconds(pid: int, *, with_children: bool = False) -> float:
    """CPU seconds of a process (utime + stime), plus those of its reaped children if asked."""
    fields = _stat(pid)
    if fields is None:
        return 0.0
    own = int(fields[11]) + int(fields[12])
    reaped = int(fields[13]) + int(fields[14]) if with_children else 0
    return (own + reaped) / TICKS


def children_of(pid: int) -> list[int]:
    found = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def tree_seconds(pid: int) -> float:
    """A server and its workers: the process, its reaped children, and its live children."""
    return process_seconds(pid, with_children=True) + sum(process_seconds(child) for child in children_of(pid))


def find_process(*needles: str) -> int | None:
    """The first process whose command line contains every needle."""
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if all(needle in cmdline for needle in needles):
            return int(entry.name)
    return None


@dataclass
class CpuAccount:
    """CPU seconds between `start()` and `stop()`: the machine, this process, and named process trees
    (alive for the whole measurement)."""

    trees: dict[str, int] = field(default_factory=dict)  # name -> pid
    _start: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def _snapshot(self) -> dict[str, float]:
        busy, total = machine_busy_seconds()
        return {"machine_busy": busy, "machine_total": total, "bench_process": process_seconds(os.getpid()),
                **{name: tree_seconds(pid) for name, pid in self.trees.items()}}

    def start(self) -> None:
        self._start = self._snapshot()

    def stop(self) -> dict[str, float]:
        end = self._snapshot()
        for name in end:
            self.seconds[name] = round(end[name] - self._start[name], 2)
        ours = sum(v for k, v in self.seconds.items() if not k.startswith("machine"))
        self.seconds["machine_busy_share"] = round(self.seconds["machine_busy"] / self.seconds["machine_total"], 3)
        self.seconds["other_processes"] = round(max(self.seconds["machine_busy"] - ours, 0.0), 2)
        return self.seconds
