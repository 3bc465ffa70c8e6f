"""A fault scenario's verdict: passed only when every check passed, and then worded by the scenario."""

from __future__ import annotations

import time

from chaos.outcome import Outcome


def test_a_scenario_passes_with_its_verdict_only_when_every_check_passed():
    started = time.monotonic()
    good = Outcome(1, "all held")
    assert good.conclude([good.check(True, "never shown")], started, "it held") is good
    assert (good.passed, good.outcome, good.failures) == (True, "it held", [])
    assert good.seconds >= 0

    bad = Outcome(2, "one failed")
    bad.conclude([bad.check(True, "fine"), bad.check(False, "rows lost: 3")], started, "it held")
    assert (bad.passed, bad.outcome) == (False, "FAILED: rows lost: 3")
