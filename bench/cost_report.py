"""The "Cost and wall time per memory" section of docs/BENCHMARKS.md, from bench/results.json."""

from __future__ import annotations

from pathlib import Path


def write_section(results: dict, doc_path: Path) -> None:
    pass
