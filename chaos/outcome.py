"""One scenario's result: what ran, what was injected, and what came out (a row of the report)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Outcome:
    number: int
    title: str
    runs: int = 0
    injected: str = ""
    # "yes" / "no" / "n/a" with a short qualifier when the comparison is not with the reference scope
    identical: str = "n/a"
    rows_lost: int | None = None
    rows_duplicated: int | None = None
    llm_calls_wasted: int | None = None
    outcome: str = ""
    passed: bool = False
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None

    def note(self, line: str) -> None:
        self.details.append(line)

    def check(self, condition: bool, failure: str) -> bool:
        """Record a failed expectation (the scenario fails; the run goes on to gather the figures)."""
        if not condition:
            self.details.append(f"FAILED: {failure}")
        return condition

    def conclude(self, passed: list[bool], started: float, verdict: str) -> Outcome:
        """Passed when every check passed, `verdict` then saying what held (else the failures do), and
        the seconds since `started` (time.monotonic)."""
        self.passed = all(passed)
        self.outcome = verdict if self.passed else "; ".join(self.failures)
        self.seconds = time.monotonic() - started
        return self

    @property
    def failures(self) -> list[str]:
        return [line for line in self.details if line.startswith("FAILED:")]
