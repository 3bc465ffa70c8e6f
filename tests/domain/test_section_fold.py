"""Condensing in code (planners/section_fold.py): generated bodies of dated lines, visits, an earlier
fold and lines a fold must keep, each folded body checked against the rule."""

from __future__ import annotations

import random
import re
from datetime import date, timedelta

import pytest

from domain.line_formats import fold_line
from planners.section_fold import FOLD_TARGET_SHARE, KEEP_LATEST, folded_body

BUDGET = 2_400
TARGET = int(BUDGET * FOLD_TARGET_SHARE)
WORDS = ["lunch", "dinner", "coffee", "walk", "with", "Lena", "at", "Uchi", "the", "market", "ramen", "brisket", "chat", "long", "queue", "rain"]
DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
FOLD = re.compile(r"^- Earlier: (\d+) (notes?|visits?), (?:on (\S+)|(\S+) to (\S+))\.$")


def dated_line(rng: random.Random, day: date) -> str:
    if rng.random() < 0.3:
        return f"- Visited on {day.isoformat()}."
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 18)))
    return f"- {day.isoformat()}: {text[:1].upper()}{text[1:]}."


def generated_body(seed: int) -> tuple[str, list[str], int]:
    """A body past the budget: a few lines no fold may take (a count line, a list), perhaps an earlier
    fold, then dated lines in shuffled day order. Returns it, its kept-as-is lines and the notes it holds."""
    rng = random.Random(seed)
    start = date(2025, 1, 1) + timedelta(days=rng.randint(0, 300))
    fixed = ["- 5 memories, 2025-01-01 to 2025-01-09.", "Often together with: **Lena** (3), **Uchi** (2)."]
    fixed = rng.sample(fixed, rng.randint(0, 2))
    lines = list(fixed)
    notes = 0
    if rng.random() < 0.5:
        earlier = rng.randint(2, 40)
        lines.append(fold_line(earlier, (start - timedelta(days=90)).isoformat(),
                               (start - timedelta(days=1)).isoformat(), False))
        notes += earlier
    # A body never holds a line twice (planners/section_edits.py append_lines drops repeats).
    dated: list[str] = []
    while len("\n".join(lines + dated)) <= BUDGET + rng.randint(0, 400):
        line = dated_line(rng, start + timedelta(days=rng.randint(0, 60)))
        dated += [line] if line not in dated else []
    lines += dated
    return "\n".join(lines), fixed, notes + len(dated)


@pytest.mark.parametrize("seed", range(40))
def test_a_fold_recounts_the_oldest_dated_lines_and_keeps_everything_else(seed: int) -> None:
    body, fixed, notes = generated_body(seed)
    folded = folded_body(body, BUDGET)
    assert folded is not None and len(folded) <= TARGET
    lines, before = folded.splitlines(), body.splitlines()
    folds = [line for line in lines if line.startswith("- Earlier:")]
    assert len(folds) == 1  # an earlier fold is merged into the new one
    count, _, on, first, last = FOLD.match(folds[0]).groups()  # type: ignore[union-attr]
    kept_dated = [line for line in lines if DAY.match(line[2:]) or line.startswith("- Visited on")]
    # Every note is either kept as it was or counted by the fold; at least the latest few are kept.
    assert int(count) + len(kept_dated) == notes and len(kept_dated) >= KEEP_LATEST
    assert all(line in before for line in kept_dated)
    assert [line for line in lines if line in fixed] == fixed  # lines a fold cannot recount stay, in order
    # The fold spans the days it took, all before (or on) the days kept.
    taken_days = sorted(DAY.findall("\n".join(line for line in before if line not in lines)))
    kept_days = sorted(DAY.findall("\n".join(kept_dated)))
    assert (on or last) >= taken_days[-1] and (on or first) <= taken_days[0]
    assert taken_days[-1] <= kept_days[0]


def test_visits_alone_fold_into_visits_and_a_body_within_the_target_is_left_as_it_is() -> None:
    visits = "\n".join(f"- Visited on 2026-0{1 + n // 28}-{1 + n % 28:02d}." for n in range(90))
    folded = folded_body(visits, BUDGET)
    assert folded is not None and folded.startswith("- Earlier: ") and " visits, 2026-01-01 to " in folded
    short = "- 2026-01-01: Lunch at Uchi.\n- 2026-01-02: Dinner."
    assert folded_body(short, BUDGET) == short


def test_a_body_whose_bulk_no_fold_can_recount_is_left_to_the_writer() -> None:
    prose = "\n".join(f"Lena prefers the window table on rainy days, note {n}, and asks for the brisket first."
                      for n in range(30))
    assert folded_body(prose + "\n- 2026-01-01: Lunch at Uchi.\n- 2026-01-02: Dinner at Uchi.", BUDGET) is None
    # Dated lines are there, but folding all but the latest few still leaves the body too long.
    dated = "\n".join(f"- 2026-01-{n:02d}: Lunch at Uchi." for n in range(1, 5))
    assert folded_body(prose[:1500] + "\n" + dated, BUDGET) is None
