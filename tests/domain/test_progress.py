"""The import's progress estimate (domain/progress.py): the chain's rate so far, the time left at it."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from domain.progress import estimate, progress_text, time_left_text

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_no_estimate_before_anything_is_compiled_or_time_has_passed() -> None:
    assert estimate(500, 10_000, 500, START, START + timedelta(minutes=5)).seconds_left is None
    assert estimate(900, 10_000, 500, START, START + timedelta(milliseconds=200)).seconds_left is None


@pytest.mark.parametrize("seed", range(20))
def test_the_time_left_is_what_remains_at_the_rate_since_the_chain_began(seed: int) -> None:
    rng = random.Random(seed)
    total = rng.randint(1, 50_000)
    at_start = rng.randint(0, total - 1)
    compiled = rng.randint(at_start + 1, total)
    elapsed = rng.uniform(1.0, 10_000.0)
    guess = estimate(compiled, total, at_start, START, START + timedelta(seconds=elapsed))
    assert guess.memories_per_second == pytest.approx((compiled - at_start) / elapsed)
    assert guess.seconds_left == pytest.approx((total - compiled) * elapsed / (compiled - at_start))
    assert guess.seconds_left >= 0


def test_a_scope_that_grew_past_its_total_leaves_nothing_to_wait_for() -> None:
    assert estimate(120, 100, 0, START, START + timedelta(seconds=60)).seconds_left == 0


@pytest.mark.parametrize("seconds, text", [(None, ""), (12, "less than a minute left"), (61, "about 1 min left"),
                                           (3599, "about 1 h left"), (3600 + 20 * 60, "about 1 h 20 min left")])
def test_time_left_in_words(seconds: float | None, text: str) -> None:
    assert time_left_text(seconds) == text


def test_the_progress_line() -> None:
    assert progress_text(3_200, 10_000, 360, 11.25) == (
        "3,200 of 10,000 memories compiled (32%), about 6 min left at 11.2 a second")
    assert progress_text(3_200, 10_000, None, None) == "3,200 of 10,000 memories compiled (32%)"
    assert progress_text(None, 10_000, 60, 1.0) == progress_text(0, 0, 60, 1.0) == ""
