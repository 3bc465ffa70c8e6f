"""Which of several rival claims holds when: every memory that asserts a value opens an interval.

The claims a plan marked as replacing one another (rival values of one attribute of one holder) form
a group. In a group, the memories behind its claims are laid out by when they happened: from each
moment, the value asserted then holds until another value is asserted. A claim can so hold more
than once: "lives in Denver" (2020), "lives in Boston" (2023), "lives in Denver" (2025) gives the
Denver claim two intervals, and it holds now. Values asserted at one moment (or with no date) have no
order between them: they are `disputed`. A claim in no group holds from its first memory on.

Order comes from when memories happened, never from when they were compiled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

Validity = Literal["current", "superseded", "disputed"]
Interval = tuple[datetime | None, datetime | None]  # [from, to): None is unbounded


@dataclass(frozen=True)
class DatedClaim:
    """A claim of one page: its id, its key (domain/claims.py claim_key), when it began to hold (its
    earliest memory's occurred_at) and when each of its memories happened."""

    id: str
    key: str
    valid_from: datetime | None
    asserted: tuple[datetime, ...] = ()

    @property
    def moments(self) -> tuple[datetime, ...]:
        return tuple(sorted(set(self.asserted))) or ((self.valid_from,) if self.valid_from is not None else ())


@dataclass(frozen=True)
class Standing:
    """A claim's standing: whether it holds now, the intervals in which it held, and, when it holds
    no more, when it stopped and which claim replaced it."""

    validity: Validity
    valid_to: datetime | None = None
    superseded_by: str | None = None
    intervals: tuple[Interval, ...] = field(default=((None, None),))

    @property
    def valid_from(self) -> datetime | None:
        """When its latest interval began."""
        return self.intervals[-1][0] if self.intervals else None


def _groups(claims: Sequence[DatedClaim], marks: Iterable[tuple[str, str]]) -> list[list[DatedClaim]]:
    keys = {claim.key for claim in claims}
    parent: dict[str, str] = {key: key for key in keys}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for first, second in marks:
        if first in keys and second in keys and first != second:
            a, b = root(first), root(second)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[str, list[DatedClaim]] = {}
    for claim in claims:
        groups.setdefault(root(claim.key), []).append(claim)
    return list(groups.values())


# The date a dated line carries before what it states ("- 2020-07-15: …" keys as "2020-07-15 …").
_DATE_LEAD = re.compile(r"^\d{4}-\d{2}(?:-\d{2})?\s+")


def statement_key(key: str) -> str:
    """What a claim key states, without the date a dated line puts before it."""
    return _DATE_LEAD.sub("", key)


def standings(claims: Sequence[DatedClaim], marks: Iterable[tuple[str, str]]) -> dict[str, Standing]:
    """Each claim's standing, from the marks (pairs of claim keys a plan said replace one another)
    and the moments its memories happened."""
    out: dict[str, Standing] = {}
    for members in _groups(claims, marks):
        if len({m.key for m in members}) < 2:
            out.update({m.id: Standing("current", intervals=((m.valid_from, None),)) for m in members})
            continue
        out.update(_group_standings(members))
    return out


def _group_standings(members: list[DatedClaim]) -> dict[str, Standing]:
    undated = any(not m.moments for m in members)
    asserted: dict[datetime, set[str]] = {}
    for member in members:
        for moment in member.moments:
            asserted.setdefault(moment, set()).add(member.key)
    first_claim: dict[str, str] = {}
    for member in sorted(members, key=lambda m: (m.moments[:1], m.id)):
        first_claim.setdefault(member.key, member.id)
    # Walk the moments in order: the keys asserted at a moment hold from it until a moment asserts
    # other keys (a key asserted again while it holds goes on holding).
    intervals: dict[str, list[list[datetime | None]]] = {}
    ended_by: dict[str, str] = {}
    holding: set[str] = set()
    for moment in sorted(asserted):
        now = asserted[moment]
        if now <= holding and len(holding) == 1:
            continue
        for key in holding - now:
            intervals[key][-1][1] = moment
            ended_by[key] = first_claim[sorted(now)[0]]
        for key in now - holding:
            intervals.setdefault(key, []).append([moment, None])
        holding = now
    out: dict[str, Standing] = {}
    for member in members:
        spans = tuple((start, end) for start, end in intervals.get(member.key, []))
        if not member.moments:
            out[member.id] = Standing("disputed", intervals=((None, None),))
        elif member.key in holding:
            # Lines holding together are a dispute only when they state different things: a page's
            # summary line and its dated note saying one value are one assertion.
            disputed = len({statement_key(key) for key in holding}) > 1 or undated
            out[member.id] = Standing("disputed" if disputed else "current", intervals=spans)
        else:
            out[member.id] = Standing("superseded", spans[-1][1], ended_by.get(member.key), spans)
    return out


def holds_at(intervals: Sequence[Interval], moment: datetime) -> bool:
    """Whether a claim held at `moment`: within one of its intervals (begun by then, not yet
    replaced)."""
    return any((start is None or start <= moment) and (end is None or moment < end) for start, end in intervals)
