"""The time a question names, for generated dates written in every phrase the reader knows: the
window always holds the date, and never more than the phrase's span."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from domain.time_window import MONTHS, Anchor, TimeWindow, time_window

MONTH_NAMES = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
               "october", "november", "december"]
assert all(MONTHS[name] == index for index, name in enumerate(MONTH_NAMES, 1))
NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)


def _phrases(moment: datetime, rng: random.Random) -> list[tuple[str, timedelta]]:
    month = MONTH_NAMES[moment.month - 1].capitalize()
    return [
        (f"What happened on {moment:%Y-%m-%d}?", timedelta(days=1)),
        (f"What did we do on {moment.day} {month} {moment.year}?", timedelta(days=1)),
        (f"What did we do on {month} {moment.day}, {moment.year}?", timedelta(days=1)),
        (f"Where was she in {month} {moment.year}?", timedelta(days=31)),
        (f"Who did he meet in {moment.year}?", timedelta(days=366)),
    ]


def test_generated_dates_fall_inside_their_window():
    rng = random.Random(2026)
    for _ in range(300):
        moment = datetime(2000, 1, 1, tzinfo=UTC) + timedelta(days=rng.randrange(9_000), hours=rng.randrange(24))
        for question, longest in _phrases(moment, rng):
            window = time_window(question, NOW)
            assert isinstance(window, TimeWindow), question
            assert window.start <= moment < window.end, (question, window)
            assert window.end - window.start <= longest, question


def test_relative_phrases_read_against_the_reference_time():
    rng = random.Random(7)
    for _ in range(100):
        now = datetime(2010, 1, 1, tzinfo=UTC) + timedelta(days=rng.randrange(5_000), hours=12)
        days = rng.randrange(1, 28)
        window = time_window(f"What did I cook {days} days ago?", now)
        assert window.start <= now - timedelta(days=days) < window.end
        weeks = rng.randrange(1, 12)
        window = time_window(f"Who called {weeks} weeks ago?", now)
        assert window.start <= now - timedelta(weeks=weeks) < window.end and window.start.weekday() == 0
        months = rng.randrange(1, 24)
        window = time_window(f"What did we plant {months} months ago?", now)
        assert window.start.day == 1 and (window.start.year * 12 + window.start.month
                                          == now.year * 12 + now.month - months)
        last_year = time_window("Where did we travel last year?", now)
        assert last_year.start == datetime(now.year - 1, 1, 1, tzinfo=UTC)
        yesterday = time_window("What did I buy yesterday?", now)
        assert yesterday.start <= now - timedelta(days=1) < yesterday.end
        in_month = time_window(f"What happened in {MONTH_NAMES[now.month - 1]}?", now)
        assert in_month.start <= now < in_month.end  # the latest such month that has begun


def test_before_and_after_open_the_window():
    before = time_window("What did she do before March 2023?", NOW)
    assert before.start is None and before.end == datetime(2023, 3, 1, tzinfo=UTC)
    after = time_window("What happened after 2021?", NOW)
    assert after.end is None and after.start == datetime(2022, 1, 1, tzinfo=UTC)


def test_an_event_is_an_anchor_and_no_time_is_none():
    assert time_window("What did he start before the move to Lisbon?", NOW) == Anchor("before", "the move to Lisbon")
    assert time_window("What does Melanie like to paint?", NOW) is None
