"""Condensing a section in code, with headroom, when what has to go is dated lines.

A section past its budget is condensed (planners/section_edits.py). Most of what fills an aged
section is dated lines: a memory's own line ("- 2026-03-01: Lunch at Uchi."), a visit ("- Visited
on 2026-03-01."). Folding the oldest of them into one line that says how many they were and the
days they span is a recount, not a judgement, so the compiler writes it and no model call is made:

    - Earlier: 14 notes, 2026-01-03 to 2026-02-20.      (visits alone: "14 visits")

The lines it reads and the fold line it writes are formats of domain/line_formats.py. The fold takes the dated lines with the earliest days first, merges an earlier fold of its own into
the new one (its count and first day carry over), keeps every other line where it is, and stops
once the body is at most FOLD_TARGET_SHARE of the budget: that headroom lets the next additions be
appended without another condensation for a while. A body that cannot get there by folding dated
lines alone (its bulk is prose, a list, a summary a writer made), or that would keep fewer than
KEEP_LATEST dated lines, is left to the section writer. The section keeps citing every memory whose
line was folded (provenance is section-level), so nothing drops out of the wiki's evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.line_formats import fold_line, parse_dated, parse_fold, parse_visited_on

# The body a fold leaves is at most this share of the budget (what the writer is asked for too).
FOLD_TARGET_SHARE = 0.5
# The newest dated lines a fold always keeps as they are: a section still shows its latest news.
KEEP_LATEST = 3


@dataclass(frozen=True)
class _Dated:
    position: int
    day: str
    visit: bool


@dataclass(frozen=True)
class _Fold:
    position: int
    count: int
    first: str
    last: str
    visits: bool


def _parse_fold(position: int, line: str) -> _Fold | None:
    fold = parse_fold(line)
    return None if fold is None else _Fold(position, fold.count, fold.first, fold.last, fold.visits)


def _dated(position: int, line: str) -> _Dated | None:
    if (day := parse_visited_on(line)) is not None:
        return _Dated(position, day, True)
    if (dated := parse_dated(line)) is not None:
        return _Dated(position, dated.day, False)
    return None


def _size(lines: list[str]) -> int:
    return len("\n".join(lines))


def folded_body(body: str, budget: int) -> str | None:
    """`body` with its oldest dated lines folded into one "Earlier" line, down to FOLD_TARGET_SHARE of
    `budget`; None when folding dated lines cannot get it there."""
    lines = [line.rstrip() for line in body.strip().splitlines() if line.strip()]
    target = int(budget * FOLD_TARGET_SHARE)
    if _size(lines) <= target:
        return "\n".join(lines)
    folds = [fold for n, line in enumerate(lines) if (fold := _parse_fold(n, line.strip())) is not None]
    dated = sorted((d for n, line in enumerate(lines) if (d := _dated(n, line.strip())) is not None),
                   key=lambda d: (d.day, d.position))
    foldable = dated[:max(0, len(dated) - KEEP_LATEST)]
    gone: set[int] = {fold.position for fold in folds}
    count = sum(fold.count for fold in folds)
    days = [day for fold in folds for day in (fold.first, fold.last)]
    visits = all(fold.visits for fold in folds)
    taken = 0
    while True:
        at = min(gone) if gone else None
        kept = [line for n, line in enumerate(lines) if n not in gone]
        if at is not None and count:
            line = fold_line(count, min(days), max(days), visits)
            kept.insert(sum(1 for n in range(at) if n not in gone), line)
        if count and _size(kept) <= target:
            return "\n".join(kept)
        if taken == len(foldable):
            return None
        line_taken = foldable[taken]
        taken += 1
        gone.add(line_taken.position)
        count += 1
        days.append(line_taken.day)
        visits = visits and line_taken.visit
