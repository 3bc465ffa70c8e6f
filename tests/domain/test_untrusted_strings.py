"""Strings that become titles, names, aliases or terminal lines carry no control character, and
dates are kept as given or refused: never read as Unix times, never stored as infinities."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from domain.markup import safe_markdown, safe_title
from domain.memory import MemoryIn, parse_instant
from domain.tokens import allows, parse_expiry

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
LINE_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
ESCAPES = ["\x1b[2J", "\x1b]0;owned\x07", "\x9b31m", "\u202egnp.exe", "\r", "\x08\x08", "\x00"]
hostile_text = st.lists(st.one_of(st.text(max_size=8), st.sampled_from(ESCAPES)), max_size=8).map("".join)


@given(hostile_text)
def test_a_title_is_one_line_without_controls_whatever_it_was_given(text):
    title = safe_title(text)
    assert not LINE_CONTROL.search(title)
    assert safe_title(title) == title


@given(hostile_text)
def test_a_body_keeps_its_lines_and_loses_its_controls(text):
    body = safe_markdown(text)
    assert not CONTROL.search(body)
    assert safe_markdown(body) == body


@given(prefix=st.text(max_size=6), escape=st.sampled_from(ESCAPES), where=st.sampled_from(
    ["name", "alias", "key", "nested"]))
def test_metadata_with_a_control_character_is_refused(prefix, escape, where):
    if not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", escape):
        return  # direction marks are legitimate text in metadata; titles drop them
    value = f"{prefix}{escape}Corp"
    metadata = {"name": {"entities": [{"name": value}]}, "alias": {"entities": [{"aliases": [value]}]},
                "key": {value: 1}, "nested": {"a": [[{"b": value}]]}}[where]
    with pytest.raises(ValidationError, match="control character|NUL character"):
        MemoryIn(content="ok", metadata=metadata)


def test_line_breaks_and_tabs_in_metadata_stay():
    assert MemoryIn(content="ok", metadata={"note": "two\nlines\tand a tab"}).metadata["note"].count("\n") == 1


@pytest.mark.parametrize("value", ["12345", "1700000000", 1700000000, 1.5, "2026", "20261123", "", "now", True])
def test_a_time_is_iso_8601_text_never_a_unix_time(value):
    with pytest.raises(ValidationError, match="ISO 8601"):
        MemoryIn(content="ok", occurred_at=value)


@given(offset_minutes=st.integers(-23 * 60 - 59, 23 * 60 + 59), seconds=st.integers(-2 * 86400, 2 * 86400),
       end=st.sampled_from(["start", "end"]))
def test_times_near_the_ends_of_the_range_are_kept_as_given_or_refused(offset_minutes, seconds, end):
    zone = timezone(timedelta(minutes=offset_minutes))
    base = datetime(1, 1, 2, tzinfo=zone) if end == "start" else datetime(9999, 12, 30, tzinfo=zone)
    try:
        local = base + timedelta(seconds=seconds)
    except OverflowError:
        return
    try:
        kept = parse_instant("occurred_at", local.isoformat())
    except ValueError as error:
        assert "out of range" in str(error)
        return
    assert kept == local and kept.utcoffset() == local.utcoffset()  # as given
    instant = kept.astimezone(UTC)
    assert datetime.min.replace(tzinfo=UTC) < instant < datetime.max.replace(tzinfo=UTC)


def test_rights_include_the_ones_below():
    assert allows("operator", "write") and allows("write", "read") and allows("read", "read")
    assert not allows("read", "write") and not allows("write", "operator") and not allows("root", "read")


def test_an_expiry_is_a_duration_or_a_future_date():
    now = datetime(2026, 11, 27, 12, tzinfo=UTC)
    assert parse_expiry("90m", now) == now + timedelta(minutes=90)
    assert parse_expiry("2w", now) == now + timedelta(weeks=2)
    assert parse_expiry("2027-01-31", now) == datetime(2027, 1, 31, tzinfo=UTC)
    assert parse_expiry("2027-01-31T10:00:00+02:00", now) == datetime(2027, 1, 31, 8, tzinfo=UTC)
    for bad, message in [("0d", "positive"), ("2026-01-01", "already past"), ("12", "duration"), ("1y", "duration")]:
        with pytest.raises(ValueError, match=message):
            parse_expiry(bad, now)
