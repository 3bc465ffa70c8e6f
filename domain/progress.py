"""How far a compile is, and how long the rest should take: the `progress` query's and `wiki status`'s
estimate.

The rate is the memories compiled since the chain of runs read its first batch, over the time since
then (a chain: the runs one compile continues as new through, until its scope is drained). It is
the average so far, so it already counts the aggregation passes and ledger steps between batches;
it is not a promise: a scope's later batches cost more than its first (more pages to compare with).
No estimate before the chain has compiled anything, or while it has run for less than
`MIN_SECONDS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

MIN_SECONDS = 1.0


@dataclass(frozen=True)
class Estimate:
    memories_per_second: float | None
    seconds_left: float | None


def estimate(compiled: int, total: int, compiled_at_start: int, started_at: datetime, now: datetime) -> Estimate:
    """The rate since `started_at` (when `compiled_at_start` memories were compiled) and the time left
    for `total - compiled` memories at that rate."""
    elapsed = (now - started_at).total_seconds()
    done = compiled - compiled_at_start
    if elapsed < MIN_SECONDS or done <= 0:
        return Estimate(memories_per_second=None, seconds_left=None)
    rate = done / elapsed
    return Estimate(memories_per_second=rate, seconds_left=max(0, total - compiled) / rate)


def time_left_text(seconds: float | None) -> str:
    """"about 3 min left", "about 1 h 20 min left", "less than a minute left"; "" when unknown."""
    if seconds is None:
        return ""
    if seconds < 60:
        return "less than a minute left"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min left"
    hours, minutes = divmod(minutes, 60)
    return f"about {hours} h {minutes} min left" if minutes else f"about {hours} h left"


def progress_text(compiled: int | None, total: int | None, seconds_left: float | None,
                  per_second: float | None) -> str:
    """"3,200 of 10,000 memories compiled (32%), about 6 min left at 11.3 a second"; "" when unknown."""
    if compiled is None or not total:
        return ""
    line = f"{compiled:,} of {total:,} memories compiled ({100 * compiled / total:.0f}%)"
    left = time_left_text(seconds_left)
    if left:
        line += f", {left}"
        if per_second:
            line += f" at {per_second:.1f} a second"
    return line
