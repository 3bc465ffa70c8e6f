"""How much of the Claude simulator's rate limits a run used, from the calls the simulator recorded.

The simulator (claude_sim/accounting.py) keeps one bucket per limit — requests, input tokens and
output tokens per minute — holding at most a minute's allowance, full at the start and refilled
continuously. A call it admits is charged its request, its prompt tokens (input + cache write +
cache read) and, right after, its output tokens, all at the moment it arrived (`Call.at`); a call it
refuses (429 with retry-after) is charged nothing. So over a run of T seconds it can admit at most
a full bucket plus T seconds of refill: `limit + limit / 60 * T`. A limit's utilisation is what the
admitted calls were charged over that allowance; the binding limit is the one used the most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from claude_sim import Call, Limits

LIMIT_NAMES = ("requests", "input_tokens", "output_tokens")


@dataclass(frozen=True)
class Charge:
    at: float
    requests: int
    input_tokens: int
    output_tokens: int

    def of(self, name: str) -> int:
        return getattr(self, name)


def charges(calls: Sequence[Call]) -> list[Charge]:
    """What each admitted call was charged, in arrival order."""
    out = []
    for call in calls:
        if call.status != 200 or call.usage is None:
            continue
        usage = call.usage
        prompt = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
        out.append(Charge(call.at, 1, prompt, usage.output_tokens))
    return sorted(out, key=lambda charge: charge.at)


def per_minute(limits: Limits) -> dict[str, int]:
    values = {"requests": limits.requests_per_minute, "input_tokens": limits.input_tokens_per_minute,
              "output_tokens": limits.output_tokens_per_minute}
    return {name: value for name, value in values.items() if value}


def utilisation(admitted: list[Charge], limits: Limits, seconds: float) -> dict[str, dict[str, float]]:
    """Per limit: charged over the run, the most the simulator could have admitted, and their ratio."""
    out = {}
    for name, limit in per_minute(limits).items():
        used = sum(charge.of(name) for charge in admitted)
        allowance = limit + limit / 60.0 * seconds
        out[name] = {"per_minute": limit, "used": used, "allowance": round(allowance),
                     "utilisation": round(used / allowance, 3)}
    return out


def steady_utilisation(admitted: list[Charge], limits: Limits, share: float = 0.8) -> dict[str, float]:
    """Per limit: the rate charged over the middle `share` of the admitted calls (the ramp and the tail
    left out) over the limit's refill rate. Above 100% only while a bucket still spends its first
    minute's allowance."""
    if len(admitted) < 10:
        return {}
    edge = int(len(admitted) * (1 - share) / 2)
    window = admitted[edge:len(admitted) - edge]
    seconds = window[-1].at - window[0].at
    if seconds <= 0:
        return {}
    # The last call of the window closes it: what it was charged falls after the measured span.
    return {name: round(sum(c.of(name) for c in window[:-1]) / (limit / 60.0 * seconds), 3)
            for name, limit in per_minute(limits).items()}


def busiest_minute(admitted: list[Charge], name: str) -> int:
    """The most of one limit charged within any 60-second window."""
    most, start, running = 0, 0, 0
    for charge in admitted:
        running += charge.of(name)
        while charge.at - admitted[start].at >= 60.0:
            running -= admitted[start].of(name)
            start += 1
        most = max(most, running)
    return most
