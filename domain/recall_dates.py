"""Dates as recall writes them: the way people write and ask them ("7 May 2023"), and the relative
phrases of a memory ("yesterday", "last week", "two years ago") read against the day it was said.

A memory says "I went to the support group yesterday" on 8 May 2023; asked "When did she go to the
support group?", the answer is 7 May 2023, which no text holds. For a question about when, recall
returns such a memory with each relative phrase followed by the date it stands for, in brackets:
"yesterday [7 May 2023]", "last week [the week before 8 May 2023]", "last year [2022]".
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta

from domain.time_window import NUMBERS

_WEEKDAYS = {name: index for index, name in enumerate(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
_NUMBER = r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple of|few)"
_RELATIVE = re.compile(
    r"\b(?:(?P<yesterday>yesterday|last night)"
    r"|(?P<today>today|tonight|this morning|this afternoon|this evening)"
    r"|(?P<tomorrow>tomorrow)"
    r"|(?P<ago>(?:a\s+)?" + _NUMBER + r"\s+(?P<unit>day|week|month|year)s?\s+ago)"
    r"|(?P<lastday>last\s+(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday))"
    r"|(?P<last>(?:last|this past|the past|past)\s+(?P<period>week|weekend|month|year))"
    r"|(?P<next>next\s+(?P<nperiod>week|weekend|month|year))"
    r")\b", re.IGNORECASE)


def day_text(when: datetime) -> str:
    """7 May 2023."""
    return f"{when.day} {calendar.month_name[when.month]} {when.year}"


def span_text(first: datetime | None, last: datetime | None) -> str | None:
    """One day, or "7 May 2023 to 2 June 2023"."""
    if first is None:
        return day_text(last) if last is not None else None
    if last is None or last.date() == first.date():
        return day_text(first)
    return f"{day_text(first)} to {day_text(last)}"


def _months_before(when: datetime, months: int) -> tuple[int, int]:
    index = when.year * 12 + when.month - 1 - months
    return index // 12, index % 12 + 1


def _resolved(match: re.Match[str], said: datetime) -> str | None:
    if match["yesterday"]:
        return day_text(said - timedelta(days=1))
    if match["today"]:
        return day_text(said)
    if match["tomorrow"]:
        return day_text(said + timedelta(days=1))
    if match["ago"]:
        words = match["ago"].lower().split()
        if words[0] == "a" and words[1] in ("couple", "few"):
            words = words[1:]
        count_word = "couple of" if words[0] == "couple" else words[0]
        count = int(count_word) if count_word.isdigit() else NUMBERS.get(count_word, 1)
        unit = match["unit"].lower()
        if unit == "day":
            return day_text(said - timedelta(days=count))
        if unit == "week":
            return f"the week of {day_text(said - timedelta(weeks=count))}"
        if unit == "month":
            year, month = _months_before(said, count)
            return f"{calendar.month_name[month]} {year}"
        return str(said.year - count)
    if match["lastday"]:
        target = _WEEKDAYS[match["weekday"].lower()]
        back = (said.weekday() - target) % 7 or 7
        return day_text(said - timedelta(days=back))
    if match["last"]:
        period = match["period"].lower()
        if period in ("week", "weekend"):
            return f"the {period} before {day_text(said)}"
        if period == "month":
            year, month = _months_before(said, 1)
            return f"{calendar.month_name[month]} {year}"
        return str(said.year - 1)
    if match["next"]:
        period = match["nperiod"].lower()
        if period in ("week", "weekend"):
            return f"the {period} after {day_text(said)}"
        if period == "month":
            year, month = _months_before(said, -1)
            return f"{calendar.month_name[month]} {year}"
        return str(said.year + 1)
    return None


def with_dates(text: str, said: datetime) -> str:
    """`text` with each relative phrase followed by the date it meant when said on `said`."""
    def replace(match: re.Match[str]) -> str:
        resolved = _resolved(match, said)
        return f"{match[0]} [{resolved}]" if resolved else match[0]

    return _RELATIVE.sub(replace, text)
