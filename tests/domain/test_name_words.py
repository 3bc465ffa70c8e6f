"""The one name rule (domain/name_words.py) on families of names, not examples: sentences are composed
at random (seeded) from the first-name dictionary itself, from the interjection family and from
generated words, in every place a name stands: a sentence's start, a possessive, lower case after a word
that introduces someone, a sentence in capitals, two-word names, names of other countries, names that
are also common words."""

from __future__ import annotations

import random

import pytest

from domain.closed_class import EXCLAMATIONS, GREETINGS, THANKS, is_interjection
from domain.name_key import name_key
from domain.name_words import (
    RARE_ZIPF,
    KnownNames,
    are_nicknames,
    first_names,
    name_prior,
    nickname_forms,
    question_names,
    zipf,
)
from domain.names import parse_name
from domain.resolution import Rung, compare_names
from planners.text_entities import extract_entities, read_names

_ONSETS = ["b", "d", "k", "l", "m", "n", "r", "s", "t", "v", "z", "br", "dr", "tr", "zh"]
_VOWELS = ["a", "e", "i", "o", "u", "ae", "io"]


def _invented(rng: random.Random) -> str:
    word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(3)) + rng.choice(["n", "r", "th", ""])
    return word.capitalize()


def _names(predicate) -> list[str]:
    names = sorted(name for name, f in first_names().items() if name.isalpha() and len(name) > 2 and predicate(
        name, f))
    return [name.capitalize() for name in names]


ENGLISH = _names(lambda n, f: f.english >= 5 and name_prior(n) == "first_name")
ELSEWHERE = _names(lambda n, f: f.english == 0 and f.anywhere >= 4 and zipf(n) < RARE_ZIPF
                   and name_prior(n) == "first_name")
WORD_NAMES = _names(lambda n, f: f.english >= 2 and name_prior(n) == "word_name")


def _read(text: str, known: KnownNames | None = None) -> dict[str, str]:
    return {e["name"]: e["kind"] for e in extract_entities(text, known or KnownNames())}


def test_the_families_are_large_enough_to_sample() -> None:
    assert len(ENGLISH) > 400 and len(ELSEWHERE) > 1000 and len(WORD_NAMES) >= 5
    assert {"Will", "Hope", "May"} <= set(WORD_NAMES)


@pytest.mark.parametrize("seed", range(6))
def test_a_first_name_is_read_wherever_it_stands(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        name, other = rng.choice(ENGLISH), rng.choice(ELSEWHERE)
        surname = _invented(rng)
        place = f"{_invented(rng)} Park"
        cases = {
            f"{name} went to the gym.": {name},
            f"{name} is planning a trip to {place}.": {name, place},
            f"{name}'s bike is new.": {name},
            f"I borrowed {name}'s car yesterday.": {name},
            f"Lunch with {name.lower()} at the diner.": {name},
            f"{name.upper()} WENT TO THE GYM WITH {other.upper()}": {name, other},
            f"{name} {surname} called about the flat.": {f"{name} {surname}"},
            f"{other} adopted a second cat.": {other},
            f"Yesterday {other} and {name} met at {place}.": {other, name, place},
        }
        for text, expected in cases.items():
            # Compared by name key, as the resolver compares names: "YILMAZ" shouted is Yılmaz.
            found = {name_key(name): kind for name, kind in _read(text).items()}
            assert set(found) == {name_key(name) for name in expected}, text
            for person in expected - {place}:
                assert found[name_key(person)] == "person", (text, found)


@pytest.mark.parametrize("seed", range(4))
def test_interjections_greetings_and_thanks_are_never_names(seed: int) -> None:
    rng = random.Random(seed)
    family = sorted(EXCLAMATIONS | GREETINGS | THANKS)
    for _ in range(80):
        word = rng.choice(family)
        drawn = word + word[-1] * rng.randint(2, 5) if word[-1].isalpha() else word
        laugh = rng.choice(["ha", "he", "hi"]) * rng.randint(2, 5)
        name = rng.choice(ENGLISH)
        for text in (f"{word.capitalize()}! {name} went home.", f"{drawn.capitalize()}, that is so sweet.",
                     f"{laugh.capitalize()} {name} said that.", f"{word.capitalize()} {name}!"):
            names = {read.name for read in read_names(text)}
            assert names <= {name}, text
        assert is_interjection(drawn) and is_interjection(laugh)


@pytest.mark.parametrize("seed", range(3))
def test_a_name_a_greeting_leads_or_a_comma_sets_off_is_spoken_to(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        name = rng.choice(ENGLISH)
        for text in (f"Hey {name}! Good to see you.", f"Thanks, {name}!", f"Wow, that's cool, {name}!",
                     f"{name}, did you go?", f"Woah, {name}, that sounds great!"):
            [read] = read_names(text)
            assert (read.name, read.addressee) == (name, True), text
        assert extract_entities(f"Thanks, {name}!") == []


def test_a_name_that_is_a_word_needs_what_stands_around_it() -> None:
    rng = random.Random(7)
    for _ in range(40):
        word = rng.choice(WORD_NAMES)
        assert _read(f"{word} you come?") == {} or word.lower() in {"june", "april", "august"}
        assert word in _read(f"I went out with {word} yesterday.")
        assert word in _read(f"{word}'s dog barked.")
        assert word in _read(f"{word} went to the gym.", KnownNames.of([word]))  # a speaker the scope knows
    assert _read("Will you come?") == {} and _read("May I join?") == {} and _read("Mark the date.") == {}
    assert _read("Mark is here.") == {"Mark": "person"}


def test_the_question_names_are_read_by_the_same_rule() -> None:
    assert question_names("Caroline went where?") == ["caroline"]
    assert question_names("Where did Caroline go in May?") == ["caroline", "may"]
    assert question_names("Hey, what did Jon say?") == ["jon"]


@pytest.mark.parametrize("seed", range(3))
def test_a_nickname_is_a_candidate_for_the_judge_never_a_merge(seed: int) -> None:
    rng = random.Random(seed)
    table = sorted(name for name in (n.lower() for n in ENGLISH) if nickname_forms(name))
    for _ in range(50):
        full = rng.choice(table)
        short = rng.choice(sorted(nickname_forms(full)))
        assert are_nicknames(short, full) and are_nicknames(full, short)
        surname = _invented(rng)
        verdict = compare_names(parse_name(f"{short.capitalize()} {surname}"), parse_name(f"{full.capitalize()} {surname}"))
        assert verdict.rung in (Rung.NICKNAME, Rung.NEAR, Rung.ABBREVIATION, Rung.SUBSET, Rung.TYPO, Rung.SIMILAR,
                                Rung.REORDER, Rung.CORE), (short, full, verdict)
        assert not verdict.confident or verdict.rung is not Rung.NICKNAME
    assert compare_names(parse_name("Mel"), parse_name("Melanie")).rung is Rung.NICKNAME
    assert compare_names(parse_name("Bob Okafor"), parse_name("Robert Okafor")).rung is Rung.NICKNAME
    assert compare_names(parse_name("Bob Okafor"), parse_name("Robert Adeyemi")).rung is Rung.DISTINCT
