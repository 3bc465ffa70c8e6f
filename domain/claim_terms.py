"""The checkable terms of a line: its dates, its other numbers and the names it gives.

The grounding rule (domain/grounding.py) checks each term against the memories a line cites. What
counts as a name is asked in one place, `names_in`; the word rules below it (a capitalised word, a
sentence's first word, closed-class words) are the product's one name rule
(domain/name_words.py) and its closed-class words (domain/closed_class.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.aliases import normalize_alias
from domain.claim_text import plain_text
from domain.closed_class import FUNCTION_WORDS
from domain.evidence import DATE, NUMBER
from domain.line_formats import DERIVED_LABELS
from domain.name_words import capitalised_names
from domain.name_words import opening_words as name_opening_words


@dataclass(frozen=True)
class Terms:
    dates: tuple[str, ...]
    numbers: tuple[str, ...]
    names: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.dates or self.numbers or self.names)


# Closed-class words (FUNCTION_WORDS) are never names, wherever a sentence puts them: "A person.",
# "They stayed until sunset."; JOINING_WORDS only join a memory's words into a line (domain/closed_class.py).


def label_free(text: str) -> str:
    """The text without the label a derived line starts with ("Latest: …")."""
    lowered = text.lower()
    for label in DERIVED_LABELS:
        if lowered.startswith(label) and not lowered[len(label):len(label) + 1].isalpha():
            return text[len(label):]
    return text


@dataclass(frozen=True)
class NamesIn:
    """The names a line gives: `names`, the words that are names wherever they stand; `openings`, the
    one-word sentence openings that may be names (the caller asks whether the word is rare)."""

    names: tuple[str, ...]
    openings: tuple[str, ...]


def names_in(line: str) -> NamesIn:
    """The names of a line, normalised, a leading label of a derived line left out: the one question
    every claim rule asks about names."""
    plain = plain_text(line)
    text = label_free(plain)
    rest = DATE.sub(" ", text)
    names = tuple(dict.fromkeys(
        key for word in _capitalised_words(rest, opening=text == plain)  # after a label, names follow
        if (key := normalize_alias(word)) and key not in FUNCTION_WORDS
    ))
    return NamesIn(names=names, openings=tuple(opening_words(line)))


def terms_of(line: str) -> Terms:
    """The checkable terms of a line: its dates (YYYY-MM or YYYY-MM-DD), its other numbers, and its
    names (each normalised), a leading label of a derived line left out."""
    text = label_free(plain_text(line))
    dates = tuple(dict.fromkeys(DATE.findall(text)))
    rest = DATE.sub(" ", text)
    numbers = tuple(dict.fromkeys(n.replace(",", "") for n in NUMBER.findall(rest)))
    return Terms(dates=dates, numbers=numbers, names=names_in(line).names)


_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]", re.UNICODE)


def capitalised_token(text: str) -> bool:
    """Whether the text holds a capitalised word (a name, or a sentence's first word)."""
    return any(token[:1].isupper() for token in _TOKEN.findall(text))


def _capitalised_words(text: str, *, opening: bool = True) -> list[str]:
    """The capitalised words that are names, by the product's one rule (domain/name_words.py): a
    sentence's first word counts when a capitalised word follows it ("Chef Bartholomew cooked") or when
    it reads as a name alone ("Oriane cooked dinner.", "John went to the gym.")."""
    return capitalised_names(text, opening=opening)


def opening_words(line: str) -> list[str]:
    """The one-word openings `terms_of` leaves out, normalised: each sentence's first word when it is
    capitalised, the next word is not, and it does not read as a name alone ("Waited an hour.").
    Whether one must be found anyway is the grounding rule's question (domain/grounding.py)."""
    plain = plain_text(line)
    text = label_free(plain)
    return name_opening_words(DATE.sub(" ", text), opening=text == plain)  # after a label, no opening
