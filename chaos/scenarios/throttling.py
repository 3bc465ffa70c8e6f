"""Scenario 4: a throttling storm — 30 % of model calls answer 429 with Retry-After, some 529.

A fault worker (`python -m chaos.worker`, CHAOS_FAULT=throttle) serves the model task queue: each
attempt of a model activity is refused, with a probability of 0.3, by the product's ModelClient
talking to a fake provider (429 with Retry-After 1-3 s, or 529 without one), before any model
work. The compile must complete with the reference's wiki; every retry must wait at least the
Retry-After of the refusal before it (checked against the next attempt's scheduled time, which
Temporal sets), and the workflow histories must show exactly one extra attempt per refusal.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from chaos.faults import Journal
from chaos.measure import HistoryStats
from chaos.outcome import Outcome
from chaos.suite import Suite

# The server stamps the next attempt; the journal stamps the refusal slightly before the server
# hears of it, so a wait measured from the journal is, if anything, too short.
CLOCK_TOLERANCE_SECONDS = 0.01


@dataclass
class RetryAfterCheck:
    refusals: int = 0
    with_retry_after: int = 0
    honoured: int = 0
    never_retried: int = 0
    shortest_margin: float | None = None  # seconds waited beyond the Retry-After, at worst
    waits: list[float] = field(default_factory=list)

    def describe(self) -> str:
        margin = f"{self.shortest_margin:+.3f} s" if self.shortest_margin is not None else "n/a"
        return (f"{self.honoured} of {self.with_retry_after} Retry-Afters honoured (smallest margin {margin}); "
                f"{self.never_retried} refusals never retried")


def check_retry_after(events: list[dict[str, Any]]) -> RetryAfterCheck:
    """Each refusal against the attempt after it (same workflow run and activity)."""
    attempts = {(e["run_id"], e["activity_id"], e["attempt"]): e for e in events
                if e["kind"] in ("model_call", "refused")}
    check = RetryAfterCheck()
    for refusal in (e for e in events if e["kind"] == "refused"):
        check.refusals += 1
        following = attempts.get((refusal["run_id"], refusal["activity_id"], refusal["attempt"] + 1))
        if following is None:
            check.never_retried += 1
            continue
        waited = following["scheduled_at"] - refusal["at"]
        check.waits.append(waited)
        if refusal["retry_after"] is None:
            continue
        check.with_retry_after += 1
        margin = waited - refusal["retry_after"]
        check.shortest_margin = margin if check.shortest_margin is None else min(check.shortest_margin, margin)
        if margin >= -CLOCK_TOLERANCE_SECONDS:
            check.honoured += 1
    return check


def attempts_match_history(events: list[dict[str, Any]], history: HistoryStats) -> int:
    """Model activities whose final attempt number in history is not 1 + their refusals."""
    refusals = Counter((e["run_id"], e["activity_id"]) for e in events if e["kind"] == "refused")
    called = {(e["run_id"], e["activity_id"]) for e in events if e["kind"] == "model_call"}
    return sum(1 for key in called if history.final_attempts.get(key, 0) != 1 + refusals[key])


async def run(suite: Suite) -> Outcome:
    """Scenario 4: a throttling storm (429 with Retry-After, some 529)."""
    outcome = Outcome(4, "Throttling storm: 30 % of model calls refused (429 + Retry-After, some 529)")
    started = time.monotonic()
    journal = Journal(suite.root / "journals" / "throttle.jsonl")
    journal.path.parent.mkdir(parents=True, exist_ok=True)
    async with suite.database("throttle") as (url, engine):
        settings = suite.settings(WIKI_LLM_TASK_QUEUE=f"chaos-llm-{suite.rng.getrandbits(32):08x}")
        with suite.fleet("throttle", settings, url, CHAOS_FAULT="throttle", CHAOS_JOURNAL=str(journal.path),
                         CHAOS_SEED=str(suite.rng.getrandbits(31))) as fleet:
            fleet.fault_worker()
            await suite.compile(settings)
        judged = await suite.judge(engine)
    events = journal.events()
    statuses = Counter(e["status"] for e in events if e["kind"] == "refused")
    calls = sum(1 for e in events if e["kind"] == "model_call")
    check = check_retry_after(events)
    mismatched = attempts_match_history(events, judged.history)
    outcome.runs = 1
    outcome.injected = (f"{check.refusals} refusals in {check.refusals + calls} model-call attempts "
                        f"({statuses[429]} × 429 with Retry-After 1-3 s, {statuses[529]} × 529 without)")
    outcome.identical = "yes" if judged.diff.identical else "no"
    outcome.rows_lost, outcome.rows_duplicated = judged.diff.lost, judged.diff.duplicated
    outcome.llm_calls_wasted = judged.wasted_of_journal(calls)
    outcome.note(f"Retry-After: {check.describe()}; waits before a retry ranged "
                 f"{min(check.waits, default=0):.2f}-{max(check.waits, default=0):.2f} s")
    outcome.note(f"history: {judged.history.describe_retries()}; {mismatched} model activities whose attempt "
                 "count differs from 1 + their refusals")
    outcome.note(f"wiki vs reference: {judged.diff.describe()}; model calls made {calls}, used "
                 f"{judged.history.model_calls_used}; ledger: {', '.join(judged.statuses)}")
    passed = [
        outcome.check(judged.succeeded, f"the compile did not succeed: {judged.statuses}"),
        outcome.check(check.refusals > 0.15 * (check.refusals + calls), "fewer refusals than the storm should cause"),
        outcome.check(check.honoured == check.with_retry_after, "a retry came before its Retry-After"),
        outcome.check(check.never_retried == 0, "a refused call was never retried"),
        outcome.check(mismatched == 0, "history attempt counts do not match the refusals"),
        outcome.check(judged.diff.identical, "the wiki differs from the reference"),
        outcome.check(outcome.llm_calls_wasted == 0, "model calls were made whose answer was not used"),
        outcome.check(judged.isolated, f"rows cross scopes: {judged.breaches}"),
    ]
    return outcome.conclude(passed, started,
                            "compile completed; every Retry-After honoured; nothing written twice; wiki identical")
