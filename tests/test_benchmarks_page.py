"""docs/BENCHMARKS.md is generated: exactly what bench/page.py makes of bench/results.json, whose
top-level figures are those of its parts' details, each part with the run that measured it. A hand
edit of either file fails here; `python -m bench.page` regenerates the page."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from bench import page
from bench.__main__ import repeats_from_env, selected_parts
from bench.parts import PARTS, headlines, with_part
from bench.provenance import DOC_PATH, load_results
from tests.docs_text import doc_files, is_generated

RESULTS = load_results()


def test_the_page_is_what_the_generator_makes_of_results_json() -> None:
    assert DOC_PATH.read_text() == page.render(RESULTS), (
        "docs/BENCHMARKS.md differs from what bench/page.py makes of bench/results.json: "
        "run `python -m bench.page` (or `make bench`), never edit the page by hand")


def test_the_top_level_figures_are_the_parts_own() -> None:
    top = {key: value for key, value in RESULTS.items() if key != "detail"}
    assert top == headlines(RESULTS["detail"])
    assert set(RESULTS["detail"]) <= {part.name for part in PARTS}


@pytest.mark.parametrize("name", sorted(RESULTS["detail"]))
def test_every_measured_part_records_the_run_that_measured_it(name: str) -> None:
    run = RESULTS["detail"][name]["run"]
    assert run["commit"] and run["date"]
    assert page.render(RESULTS).count(f"*Run: commit {page._commit(run)}, {page._date(run)},") >= 1


def test_measuring_a_part_replaces_its_figures_and_keeps_every_other_part() -> None:
    name = next(iter(RESULTS["detail"]))
    changed = copy.deepcopy(RESULTS["detail"][name])
    changed["run"] = {**changed["run"], "commit": "f" * 40, "date": "2030-01-01T00:00:00+00:00"}
    merged = with_part(RESULTS, name, changed)
    assert merged["detail"][name]["run"]["commit"] == "f" * 40
    assert {other: merged["detail"][other] for other in merged["detail"] if other != name} == {
        other: RESULTS["detail"][other] for other in RESULTS["detail"] if other != name}
    assert "`ffffffffff` | 2030-01-01 00:00 UTC" in page.render(merged)


def test_a_part_never_measured_says_how_to_measure_it() -> None:
    name = next(iter(RESULTS["detail"]))
    without = {key: value for key, value in RESULTS["detail"].items() if key != name}
    text = page.render({**headlines(without), "detail": without})
    assert f"Not measured yet: `make bench PARTS={name}`." in text
    assert f"| `{name}` |" not in text


def test_bench_parts_and_repeats_are_checked_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [part.name for part in selected_parts(["reads", "cost"])] == ["cost", "reads"]  # the bench's order
    assert selected_parts([]) == list(PARTS)
    with pytest.raises(SystemExit, match="^error: unknown bench part 'costs'"):
        selected_parts(["cost", "costs"])
    monkeypatch.setenv("BENCH_REPEATS", "three")
    with pytest.raises(SystemExit, match="^error: BENCH_REPEATS must be a whole number"):
        repeats_from_env()
    monkeypatch.setenv("BENCH_REPEATS", "0")
    with pytest.raises(SystemExit, match="^error: BENCH_REPEATS must be at least 1"):
        repeats_from_env()


# A measured figure: a bill in dollars and cents, a machine's load, a latency percentile, a share
# with a decimal. Settings' defaults and the formulas a page explains are not measurements.
_MEASURED = re.compile(r"\$\d+\.\d|load average|\bp(?:50|95|99) (?:of |was |is )?\d|\b\d+\.\d+%")


@pytest.mark.parametrize("path", [p for p in doc_files() if not is_generated(p.read_text())],
                         ids=lambda p: p.name)
def test_hand_written_pages_point_to_the_generated_figures(path: Path) -> None:
    """Figures live where a make target writes them; a hand-written page that quotes one goes
    stale the next time the figure is measured."""
    found = [line for line in path.read_text().splitlines() if _MEASURED.search(line)]
    assert not found, f"{path.name} quotes measured figures; point to the generated page instead: {found[:3]}"
