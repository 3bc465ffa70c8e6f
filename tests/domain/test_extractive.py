"""The extractive choice of a condensed section's lines (planners/scripted/extractive.py), on sections
generated at random: made-up words composed into memories that repeat, reword and say things once."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from domain.content_words import content_words, says
from domain.context import MemoryRecord
from planners.scripted.condense import LATEST_OBSERVATIONS, linked_size, log_body
from planners.scripted.extractive import choose, merged_lines, numbers_of, says_the_same
from planners.section_edits import SECTION_BUDGET_CHARS
from planners.telling import telling_quote

BASE = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
_SYLLABLES = ("ka", "lo", "mir", "ten", "vu", "shar", "pel", "dor", "ni", "gas", "tro", "bel", "zan", "qui")


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))


def _section(seed: int) -> tuple[str, list[MemoryRecord]]:
    """A subject and 40-160 memories about it: a few themes (each a pool of words), memories drawn from
    one theme each, some repeated word for word, some reworded by one word, most said once."""
    rng = random.Random(seed)
    subject = _word(rng).title()
    themes = [[_word(rng) for _ in range(rng.randint(5, 12))] for _ in range(rng.randint(3, 7))]
    texts: list[str] = []
    for _ in range(rng.randint(40, 160)):
        roll = rng.random()
        if texts and roll < 0.15:
            texts.append(rng.choice(texts))  # said again
            continue
        theme = rng.choice(themes)
        words = rng.sample(theme, k=min(len(theme), rng.randint(3, 6)))
        texts.append(f"{subject} {' and '.join(words)} with {_word(rng)}.")
    memories = [MemoryRecord(id=uuid.UUID(int=seed * 1000 + n), content=text, metadata={},
                             created_at=BASE + timedelta(days=n // 2, minutes=n), updated_at=BASE)
                for n, text in enumerate(texts)]
    return subject, memories


def _said(memories: list[MemoryRecord], body: str, title: str) -> int:
    words = content_words(body + "\n" + title)
    return sum(1 for memory in memories if says(content_words(memory.content), words))


@pytest.mark.parametrize("seed", range(8))
def test_a_condensed_section_stays_within_its_bound_keeps_the_newest_and_quotes_only_its_memories(seed: int) -> None:
    subject, memories = _section(seed)

    body = log_body(memories, subject)
    lines = body.splitlines()

    assert sum(linked_size(line) + 1 for line in lines) <= SECTION_BUDGET_CHARS
    assert len(lines) == len(set(lines))
    quotes = {telling_quote(memory.content) for memory in memories}
    for line in lines[1:]:  # after the count and names, every line is a memory's own words (dated, or counted)
        if line.startswith("- Often together with:"):
            continue
        text = line.split(": ", 1)[1] if line.startswith("- 20") else line[2:].rsplit(" (", 1)[0]
        assert text in quotes, line
    newest = sorted(memories, key=lambda m: (m.created_at, str(m.id)))[-LATEST_OBSERVATIONS:]
    for memory in newest:
        assert telling_quote(memory.content) in body
    shuffled = memories[:]
    random.Random(seed).shuffle(shuffled)
    assert log_body(shuffled, subject) == body


@pytest.mark.parametrize("seed", range(8))
def test_the_chosen_lines_say_more_than_the_newest_lines_of_the_same_size(seed: int) -> None:
    subject, memories = _section(seed)

    body = log_body(memories, subject)
    # The newest lines, as many characters as the chosen ones take.
    newest: list[str] = []
    for memory in sorted(memories, key=lambda m: m.created_at, reverse=True):
        if sum(len(line) + 1 for line in newest) + len(memory.content) > len(body):
            break
        newest.append(memory.content)

    assert _said(memories, body, subject) >= _said(memories, "\n".join(newest), subject)


def test_lines_that_say_the_same_merge_and_lines_that_differ_in_a_thing_or_number_do_not() -> None:
    lines = merged_lines(["Lena walked the dog by the river.", "Lena walked the dog by the river!",
                          "Lena walked the cat by the river.", "Room 12 was booked.", "Room 14 was booked.", ""])

    assert [line.members for line in lines] == [(0, 1), (2,), (3,), (4,)]


def test_the_greedy_takes_the_line_that_says_most_per_character_and_stops_when_nothing_more_is_said() -> None:
    texts = ["alpha beta gamma delta", "alpha beta", "gamma delta", "epsilon zeta"]
    lines = merged_lines(texts)
    memories = [content_words(t) for t in ["alpha beta", "gamma delta", "alpha gamma", "epsilon zeta"]]

    chosen = choose(lines, memories, budget=1000)

    # The first line says three memories at once; the last says the fourth; nothing else adds anything.
    assert chosen == [0, 3]
    # With the third kept, the shorter second line says as much as the first.
    assert choose(lines, memories, budget=1000, must_stay=[2]) == [2, 1, 3]
    assert choose(lines, memories, budget=10) == []


def _merged_by_definition(texts: list[str]) -> list[tuple[int, ...]]:
    """merged_lines' rule read literally: each line joins the first earlier group (open to merging)
    whose words say the same and whose numbers are the same, else opens one."""
    groups: list[list[int]] = []
    for position, text in enumerate(texts):
        if not text:
            continue
        own = content_words(text)
        for group in groups:
            first = texts[group[0]]
            if own and says_the_same(own, content_words(first)) and numbers_of(text) == numbers_of(first):
                group.append(position)
                break
        else:
            groups.append([position])
    return [tuple(group) for group in groups]


@pytest.mark.parametrize("seed", range(12))
def test_merging_finds_the_first_group_that_says_the_same_as_a_scan_of_every_group_does(seed: int) -> None:
    """The index of rare words merged_lines looks groups up by finds what comparing a line with every
    earlier group finds, on sections where lines repeat, lose or gain a word, and differ in a number."""
    rng = random.Random(seed)
    _, memories = _section(seed)
    texts = [memory.content for memory in memories]
    for _ in range(len(texts) // 3):
        words = rng.choice(texts).rstrip(".").split()
        roll = rng.random()
        if roll < 0.3 and len(words) > 3:
            del words[rng.randrange(1, len(words))]  # a word dropped
        elif roll < 0.6:
            words.insert(rng.randrange(1, len(words) + 1), _word(rng))  # a word added
        elif roll < 0.8:
            words.append(str(rng.randint(1, 30)))  # a number said
        texts.insert(rng.randrange(len(texts) + 1), " ".join(words) + ".")
    texts += ["", "12 34."]

    assert [line.members for line in merged_lines(texts)] == _merged_by_definition(texts)
