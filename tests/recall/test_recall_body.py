"""The pure rules of recall's answers: the body packer (whatever the texts and the budget, the body is
at most max_tokens × 4 characters and says its own size), the wiki's bookkeeping lines, questions
about counts and about when, and relative days read against the day they were said."""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from domain.recall_body import Candidate, pack_json, pack_lines
from domain.recall_dates import day_text, span_text, with_dates
from domain.recall_lines import asks_for_counts, asks_when, line_role

ALPHABET = "abcdefghij \"\\\n\t€é🙂'<>/{}"


def _text(rng: random.Random, most: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, most)))


@pytest.mark.parametrize("seed", range(20))
def test_a_json_body_never_exceeds_its_budget_and_says_its_size(seed):
    rng = random.Random(seed)
    candidates = [Candidate(item={"kind": "memory", "id": f"{rng.getrandbits(128):032x}", "text": text,
                                  "date": day_text(datetime(2023, 5, rng.randint(1, 31), tzinfo=UTC))}, text=text)
                  for text in (_text(rng, rng.choice([20, 200, 3000])) for _ in range(rng.randint(0, 60)))]
    for budget in (50, rng.randint(50, 400), rng.randint(400, 8000)):
        for verbose, reserve in ((False, 0), (True, 0), (False, 1), (True, 1)):
            extras = [{"retrievers": ["memories"], "took_ms": 12.5}] if verbose else []
            body = pack_json({"max_tokens": budget}, candidates, budget, extras, verbose, reserve)
            parsed = json.loads(body.text)
            assert len(body.text) + reserve <= budget * 4
            assert parsed["tokens_used"] == math.ceil(len(body.text) / 4)
            assert parsed["results"] == [candidates[i].item for i in body.chosen]
            assert parsed["left_out"]["answers"] == len(candidates) - len(body.chosen) == body.left_out
            # best first: an answer left out did not fit where it stood
            assert body.chosen == sorted(body.chosen)


@pytest.mark.parametrize("seed", range(10))
def test_a_text_body_never_exceeds_its_budget(seed):
    rng = random.Random(seed)
    candidates = [Candidate(item=f" {i}. {_text(rng, 300)}", text=_text(rng, 50)) for i in range(rng.randint(0, 40))]
    budget = rng.randint(50, 600)
    body = pack_lines(lambda tokens, most: f"Recall: {tokens} of {most} tokens", candidates, budget,
                      lambda left, best: f"left out: {left}; the best: {best}" if left else "", reserve=1)
    assert len(body.text) + 1 <= budget * 4


@pytest.mark.parametrize("line, role", [
    ("- Often together with: **Melanie** (3), **Jon** (2).", "bookkeeping"),
    ("- Most mentioned: **Austin** (12).", "bookkeeping"),
    ("- 147 memories, 2022-03-01 to 2023-05-07.", "bookkeeping"),
    ("- 3 new memories.", "bookkeeping"),
    ("- Earlier: 14 notes, 2026-01-03 to 2026-02-20.", "bookkeeping"),
    ("- Visited 4 times, 2024-01-02 to 2024-03-01.", "bookkeeping"),
    ("- 2023-05-08: Caroline went to the support group.", "answer"),
    ("Moved to Denver in May.", "answer"),
    ("- 3 cats live with her.", "answer"),
])
def test_bookkeeping_lines_are_told_from_answers(line, role):
    assert line_role(line, "derived" if role == "bookkeeping" else "fact") == role


@pytest.mark.parametrize("question, counts, when", [
    ("How often does John see sunsets?", True, False),
    ("How many times did they meet?", True, False),
    ("Who is she most often together with?", True, False),
    ("When did Caroline go to the support group?", False, True),
    ("What year did Melanie paint a sunrise?", False, True),
    ("How long has Caroline had her friends?", False, True),
    ("What did Melanie realize after the race?", False, False),
])
def test_questions_about_counts_and_about_when(question, counts, when):
    assert asks_for_counts(question) is counts and asks_when(question) is when


def test_relative_days_are_dated_from_the_day_they_were_said():
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert with_dates("I went yesterday.", said) == "I went yesterday [7 May 2023]."
    assert with_dates("last week we ran", said) == "last week [the week before 8 May 2023] we ran"
    assert with_dates("two years ago", said) == "two years ago [2021]"
    assert with_dates("a few days ago", said) == "a few days ago [5 May 2023]"
    assert with_dates("last Friday", said) == "last Friday [5 May 2023]"
    assert with_dates("last month", said) == "last month [April 2023]"
    assert with_dates("nothing relative here", said) == "nothing relative here"


@pytest.mark.parametrize("seed", range(5))
def test_a_weekday_is_the_last_one_before_the_day_said(seed):
    rng = random.Random(seed)
    said = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(days=rng.randint(0, 2000))
    for name in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"):
        text = with_dates(f"last {name}", said)
        day = datetime.strptime(text.split("[")[1].rstrip("]"), "%d %B %Y").replace(tzinfo=UTC)
        assert day.strftime("%A").lower() == name and timedelta(days=1) <= said - day <= timedelta(days=7)


def test_a_span_reads_as_days():
    first, last = datetime(2023, 5, 7, tzinfo=UTC), datetime(2023, 6, 2, tzinfo=UTC)
    assert span_text(first, last) == "7 May 2023 to 2 June 2023" and span_text(first, first) == "7 May 2023"
    assert span_text(None, None) is None
