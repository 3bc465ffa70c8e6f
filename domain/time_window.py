"""The time a question is about: its dates and relative phrases as a window of instants.

"in May 2023", "on 7 May 2023", "2023-05-07", "in 2022", "last year", "last month", "this week",
"three weeks ago", "yesterday", "recently"; "before …" and "after …" open the window on one side.
A relative phrase is read against a reference instant (the caller's `as_of`, else now). "before the
move" names no date: the phrase after "before"/"after" is returned as an anchor, which recall dates
by the memory that best matches it.

Hand-written on purpose: the phrases are a closed family, and the general date finders on PyPI
parse one text in tens of milliseconds, a good part of recall's whole latency budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = {name: index for index, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
     ("november", "nov"), ("december", "dec")], 1) for name in names}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "few": 3}
RECENT_DAYS = 30

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.I)
_IN_MONTH = re.compile(rf"\b(?:in|during|since|by|until|last|this)\s+({_MONTH})\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|since|by|until|of|year)\s+((?:19|20)\d{2})\b|\b((?:19|20)\d{2})\b")
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple of|few)"
                  r"\s+(day|week|month|year)s?\s+ago\b", re.I)
_LAST = re.compile(r"\b(last|this|past|previous)\s+(week|month|year|weekend)\b", re.I)
_SIDE = re.compile(r"\b(before|after|since|until|prior to)\s+(.+?)(?:[?.!,;]|$)", re.I)


@dataclass(frozen=True)
class TimeWindow:
    start: datetime | None  # None: open towards the past
    end: datetime | None  # None: open towards the future (exclusive end otherwise)
    phrase: str  # the words of the question the window was read from


@dataclass(frozen=True)
class Anchor:
    """A "before X" / "after X" whose X is no date: recall dates X by the memory that matches it."""

    side: str  # "before" or "after"
    phrase: str


def _utc(year: int, month: int = 1, day: int = 1) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None


def _add_months(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 + months
    return moment.replace(year=index // 12, month=index % 12 + 1, day=1)


def _month_window(year: int, month: int) -> tuple[datetime, datetime] | None:
    start = _utc(year, month)
    return (start, _add_months(start, 1)) if start else None


def _absolute(question: str, now: datetime) -> tuple[datetime, datetime, str] | None:
    """The first dated span the question names: a day, a month, a year (most precise first)."""
    if match := _ISO.search(question):
        start = _utc(int(match[1]), int(match[2]), int(match[3]))
        if start:
            return start, start + timedelta(days=1), match[0]
    for pattern, order in ((_DAY_MONTH_YEAR, (1, 2, 3)), (_MONTH_DAY_YEAR, (2, 1, 3))):
        if match := pattern.search(question):
            day, month, year = (match[i] for i in order)
            start = _utc(int(year), MONTHS[month.lower()], int(day))
            if start:
                return start, start + timedelta(days=1), match[0]
    if match := _MONTH_YEAR.search(question):
        window = _month_window(int(match[2]), MONTHS[match[1].lower()])
        if window:
            return window[0], window[1], match[0]
    if match := _IN_MONTH.search(question):
        month = MONTHS[match[1].lower()]
        # "in May" with no year: the latest May that has begun by the reference time.
        year = now.year if month <= now.month else now.year - 1
        window = _month_window(year, month)
        if window:
            return window[0], window[1], match[0]
    if match := _YEAR.search(question):
        year = int(match[1] or match[2])
        start, end = _utc(year), _utc(year + 1)
        if start and end:
            return start, end, match[0]
    return None


def _calendar_span(today: datetime, unit: str, back: int) -> tuple[datetime, datetime]:
    """The day, week (Monday first), month or year `back` units before the one `today` is in."""
    if unit == "day":
        start = today - timedelta(days=back)
        return start, start + timedelta(days=1)
    if unit in ("week", "weekend"):
        start = today - timedelta(days=today.weekday(), weeks=back)
        return start, start + timedelta(weeks=1)
    if unit == "month":
        start = _add_months(today, -back)
        return start, _add_months(start, 1)
    return datetime(today.year - back, 1, 1, tzinfo=UTC), datetime(today.year - back + 1, 1, 1, tzinfo=UTC)


def _relative(question: str, now: datetime) -> tuple[datetime, datetime, str] | None:
    lowered = question.lower()
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if match := _AGO.search(question):
        amount = int(match[1]) if match[1].isdigit() else NUMBERS[match[1].lower()]
        return (*_calendar_span(today, match[2].lower(), amount), match[0])
    if match := _LAST.search(question):
        back = 0 if match[1].lower() == "this" else 1
        return (*_calendar_span(today, match[2].lower(), back), match[0])
    if "yesterday" in lowered:
        return today - timedelta(days=1), today, "yesterday"
    if "today" in lowered:
        return today, today + timedelta(days=1), "today"
    for word in ("recently", "lately"):
        if word in lowered:
            return now - timedelta(days=RECENT_DAYS), now + timedelta(seconds=1), word
    return None


def time_window(question: str, now: datetime) -> TimeWindow | Anchor | None:
    """The window of time the question asks about, an anchor to date, or None when it names no time."""
    side = _SIDE.search(question)
    span = _absolute(question, now) or _relative(question, now)
    if side is not None:
        word = side[1].lower()
        opening = "before" if word in ("before", "until", "prior to") else "after"
        if span is not None and span[2].lower() in side[2].lower():
            start, end, phrase = span
            return (TimeWindow(None, start, side[0].strip()) if opening == "before"
                    else TimeWindow(end if word == "after" else start, None, side[0].strip()))
        if span is None and len(side[2].split()) <= 8:
            return Anchor(side=opening, phrase=side[2].strip())
    if span is None:
        return None
    return TimeWindow(span[0], span[1], span[2])
