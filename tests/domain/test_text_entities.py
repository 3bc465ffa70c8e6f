"""The offline reader of plain memories: names and kinds from sentences people write.

Most cases are generated: seeded, random compositions of sentence templates with generated names
(people, venues, organisations, events, places), so the rules are checked on a family, not on a few
fixed sentences. Every generated memory must give exactly the names it was built from, each with a
kind of the right class.
"""

from __future__ import annotations

import random

import pytest

from domain.sentences import split_sentences
from planners.text_entities import extract_entities, names_entities

_ONSETS = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kr", "tr", "zh"]
_VOWELS = ["a", "e", "i", "o", "u", "ae", "io", "ei"]
_CODAS = ["", "", "n", "r", "l", "s", "th", "x"]

PERSON = {"person"}
VENUE_KINDS = {"restaurant": ("Barbecue", "Grill", "Kitchen"), "cafe": ("Café", "Coffee"), "park": ("Park",),
               "pool": ("Pool",), "museum": ("Museum",), "bakery": ("Bakery",), "hotel": ("Hotel", "Inn")}


def _word(rng: random.Random, syllables: int) -> str:
    text = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)) + rng.choice(_CODAS)
    return text[:1].upper() + text[1:]


class _Names:
    """Generated names, distinct within one memory."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def fresh(self, syllables: int = 2) -> str:
        while True:
            word = _word(self.rng, syllables)
            if word.lower() not in self.used and len(word) > 3:
                self.used.add(word.lower())
                return word

    def person(self) -> str:
        return self.fresh()

    def venue(self) -> tuple[str, str]:
        kind = self.rng.choice(sorted(VENUE_KINDS))
        return f"{self.fresh()} {self.rng.choice(VENUE_KINDS[kind])}", kind

    def place(self) -> str:
        return self.fresh(self.rng.choice((2, 3)))


# Each template fills its slots and says what it named: (text, {name: expected kinds}).
def _lunch(n: _Names) -> tuple[str, dict[str, set[str]]]:
    venue, kind = n.venue()
    person = n.person()
    return f"Lunch at {venue} with {person}: brisket again.", {venue: {kind}, person: PERSON}


def _list_of_people(n: _Names) -> tuple[str, dict[str, set[str]]]:
    a, b, c = n.person(), n.person(), n.person()
    city = n.place()
    return f"Dinner with {a}, {b} and {c} in {city}.", {a: PERSON, b: PERSON, c: PERSON, city: {"place"}}


def _doctor(n: _Names) -> tuple[str, dict[str, set[str]]]:
    surname, street = n.fresh(), n.fresh()
    return (f"Met the new dentist on {street} St with Dr. {surname}. It went fine.",
            {f"{street} St": {"street"}, f"Dr. {surname}": PERSON})


def _bank(n: _Names) -> tuple[str, dict[str, set[str]]]:
    place, city = n.place(), n.place()
    return (f"Opened a savings account at Bank of {place} in {city}.",
            {f"Bank of {place}": {"organisation"}, city: {"place"}})


def _possessive(n: _Names) -> tuple[str, dict[str, set[str]]]:
    person = n.person()
    venue, kind = n.venue()
    return f"{person}'s birthday party is at {venue} this year.", {person: PERSON, venue: {kind}}


def _said(n: _Names) -> tuple[str, dict[str, set[str]]]:
    person, city = n.person(), n.place()
    return f"Yesterday {person} said the {city} trip was finally booked.", {person: PERSON, city: {"place"}}


def _event(n: _Names) -> tuple[str, dict[str, set[str]]]:
    event, city, person = n.fresh(), n.place(), n.person()
    return (f"Flew to {city} for the {event} Festival with {person}.",
            {city: {"place"}, f"{event} Festival": {"event"}, person: PERSON})


def _appositive(n: _Names) -> tuple[str, dict[str, set[str]]]:
    person, cafe = n.person(), n.fresh()
    return (f"Walked over to the café {cafe} with {person}, my sister.", {cafe: {"cafe"}, person: PERSON})


def _two_sentences(n: _Names) -> tuple[str, dict[str, set[str]]]:
    first, last, city = n.person(), n.fresh(), n.place()
    return (f"Booked flights to {city}. Called {first} {last} about the hotel.",
            {city: {"place"}, f"{first} {last}": PERSON})


def _initial_rare_name(n: _Names) -> tuple[str, dict[str, set[str]]]:
    person = n.fresh(3)
    venue, kind = n.venue()
    return f"{person} recommended {venue} for brunch.", {person: PERSON, venue: {kind}}


TEMPLATES = [_lunch, _list_of_people, _doctor, _bank, _possessive, _said, _event, _appositive,
             _two_sentences, _initial_rare_name]


def generated_memories(seed: int, count: int) -> list[tuple[str, dict[str, set[str]]]]:
    rng = random.Random(seed)
    return [rng.choice(TEMPLATES)(_Names(rng)) for _ in range(count)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_memories_give_exactly_their_names_with_their_kinds(seed: int) -> None:
    for text, expected in generated_memories(seed, 150):
        found = {e["name"]: e["kind"] for e in extract_entities(text)}
        assert set(found) == set(expected), text
        for name, kinds in expected.items():
            assert found[name] in kinds, f"{text}: {name} read as {found[name]!r}"


def test_every_template_is_exercised_by_the_generated_cases() -> None:
    rng = random.Random(1)
    used = {rng.choice(TEMPLATES).__name__ for _ in range(150)}
    assert used == {t.__name__ for t in TEMPLATES}


def test_clause_initial_words_are_not_names_unless_they_act_like_one() -> None:
    assert extract_entities("Walked to the market. Finally some rest.") == []
    assert extract_entities("Lunch was late: Dinner was worse.") == []
    names = [e["name"] for e in extract_entities("Sam said Lena's bike is fixed. Sam and I rode to Zilker Park.")]
    assert names == ["Sam", "Lena", "Zilker Park"]


def test_a_name_written_mid_sentence_elsewhere_counts_at_a_sentence_start() -> None:
    names = [e["name"] for e in extract_entities("Grace is moving. We will miss Grace.")]
    assert names == ["Grace"]


def test_calendar_words_pronouns_and_articles_are_left_out() -> None:
    found = extract_entities("On Monday in March I went to the Driskill with Ana.")
    assert [(e["name"], e["kind"]) for e in found] == [("Driskill", "place"), ("Ana", "person")]


def test_unicode_names_keep_their_letters() -> None:
    found = {e["name"]: e["kind"] for e in extract_entities("Had coffee with Zoë and Łukasz in São Paulo.")}
    assert found == {"Zoë": "person", "Łukasz": "person", "São Paulo": "place"}


def test_bad_input_gives_no_names() -> None:
    assert extract_entities("") == []
    assert extract_entities("   ") == []
    assert extract_entities(None) == []  # type: ignore[arg-type]
    assert extract_entities("!!! ??? ...") == []


def test_only_memories_without_listed_entities_are_read() -> None:
    assert names_entities({"entities": [{"name": "Lena"}]})
    assert not names_entities({"entities": []})
    assert not names_entities({"tags": ["x"]})
    assert not names_entities(None)


def test_sentences_do_not_end_at_abbreviations() -> None:
    assert split_sentences("Met Sam on Webster St with Dr. Patel. Then lunch.") == (
        "Met Sam on Webster St with Dr. Patel.", "Then lunch.")
    assert split_sentences("First line\nSecond line.") == ("First line", "Second line.")
