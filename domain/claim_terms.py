"""The checkable terms of a line: its dates, its other numbers and the names it gives.

The grounding rule (domain/grounding.py) checks each term against the memories a line cites. What
counts as a name is asked in one place, `names_in`; the word rules below it (a capitalised word, a
sentence's first word, closed-class words) are the claim rules' own until the product's name
detector answers that question for every part of the product.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.aliases import normalize_alias
from domain.claim_text import plain_text
from domain.evidence import DATE, NUMBER
from domain.line_formats import DERIVED_LABELS


@dataclass(frozen=True)
class Terms:
    dates: tuple[str, ...]
    numbers: tuple[str, ...]
    names: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.dates or self.numbers or self.names)


# Closed-class words (articles, pronouns, prepositions, conjunctions) are never names, wherever a
# sentence puts them: "A person.", "They stayed until sunset."
FUNCTION_WORDS = frozenset(["a", "an", "the", "this", "that", "these", "those", "it", "its", "he", "she", "they", "them", "their", "his", "her", "we", "our", "you", "your", "i", "my", "me", "in", "on", "at", "by", "for", "from", "with", "to", "of", "and", "or", "but", "so", "as", "if", "when", "while", "after", "before", "during", "until", "since", "about", "into", "over", "under", "between", "there", "here", "then", "also", "all", "both", "each", "every", "some", "any", "no", "not", "one"])
# Words that only join a memory's words into a line ("Restaurant in Austin", "A person"): an article
# or a preposition of place states nothing of its own. Negations and verbs are never in it.
JOINING_WORDS = frozenset(["a", "an", "the", "in", "at", "on", "of"])


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
_SENTENCE_END = frozenset(".!?;")


def capitalised_token(text: str) -> bool:
    """Whether the text holds a capitalised word (a name, or a sentence's first word)."""
    return any(token[:1].isupper() for token in _TOKEN.findall(text))


def _capitalised_words(text: str, *, opening: bool = True) -> list[str]:
    """The capitalised words that may be names. A sentence's first word is capitalised by grammar, so
    it counts only when the next word is capitalised too (the start of a name of several words,
    "Chef Bartholomew cooked"): "Notes on Uchi" or "Waited an hour" name nothing. A one-word name
    opening a sentence is left to the judge."""
    tokens = _TOKEN.findall(text)
    out: list[str] = []
    for n, token in enumerate(tokens):
        if not (token[:1].isalnum() or token[:1] == "_"):
            opening = opening or token in _SENTENCE_END
            continue
        capitalised = token[:1].isupper()
        if capitalised and not token[:1].isdigit():
            following = tokens[n + 1] if n + 1 < len(tokens) else ""
            if not opening or following[:1].isupper():
                out.append(token)
        opening = False
    return out


def opening_words(line: str) -> list[str]:
    """The one-word openings `terms_of` leaves out, normalised: each sentence's first word when it is
    capitalised and the next word is not ("Oriane cooked dinner."), closed-class words left out.
    Whether one is a name is a question of the language (a rare word, or an ordinary one capitalised
    by grammar), which the caller answers (domain/grounding.py)."""
    plain = plain_text(line)
    text = label_free(plain)
    tokens = _TOKEN.findall(DATE.sub(" ", text))
    opening = text == plain  # after a label, the first word is no sentence's opening
    found: list[str] = []
    for n, token in enumerate(tokens):
        if not (token[:1].isalnum() or token[:1] == "_"):
            opening = opening or token in _SENTENCE_END
            continue
        following = tokens[n + 1] if n + 1 < len(tokens) else ""
        if opening and token[:1].isupper() and not following[:1].isupper():
            key = normalize_alias(token)
            if key and key not in FUNCTION_WORDS and not key.isdigit():
                found.append(key)
        opening = False
    return list(dict.fromkeys(found))
