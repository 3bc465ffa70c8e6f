"""Small renderings the page's sections share: verdicts against a target, money, load averages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


def met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def missed_by(value: float, target: float, unit: str = "", suffix: str = "") -> str:
    """"met", or "**missed** by <how much> (<percent> over)" for an upper bound."""
    if value <= target:
        return "met"
    over = value - target
    return f"**missed** by {unit}{over:,.3g}{suffix} ({100 * over / target:.0f}% over)"


def usd(value: float) -> str:
    return f"${value:,.3f}"


def seconds(value: float) -> str:
    return f"{value:,.1f} s"


def load(values: Sequence[float]) -> str:
    return " / ".join(f"{value:.2f}" for value in values)


def processes(workers: str | int) -> str:
    return f"{workers} worker process{'es' if str(workers) != '1' else ''}"


class SummaryRow(NamedTuple):
    """A row of the page's summary: what, its results.json key (if it has one), value, target, met
    (None: no target)."""

    figure: str
    key: str | None
    value: str
    target: str
    ok: bool | None
