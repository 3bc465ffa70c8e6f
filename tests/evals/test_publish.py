"""An eval's results go to --out alone, or to its results file with its docs page."""

from __future__ import annotations

import json

from evals.run import publish


def test_results_go_to_out_alone_or_to_the_results_file_and_the_page(tmp_path):
    results, stored, page = {"score": 0.5, "runs": [1, 2]}, tmp_path / "results.json", tmp_path / "PAGE.md"
    out = tmp_path / "out.json"
    assert publish(results, out, stored, page, lambda r: f"score {r['score']}") is None
    assert json.loads(out.read_text()) == results and not stored.exists() and not page.exists()

    assert publish(results, None, stored, page, lambda r: f"score {r['score']}", indent=1) == "score 0.5"
    assert stored.read_text() == json.dumps(results, indent=1) + "\n"
    assert page.read_text() == "score 0.5"
