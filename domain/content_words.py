"""The content words of a text: what it says, without the grammar that carries it.

A memory's content words are the words it would take to say it again: every word of three letters or
more that is not closed-class (domain/closed_class.py: articles, pronouns, auxiliaries, prepositions,
interjections, weekdays) and has a letter in it. Words are compared as `normalize_alias` leaves them
(lower case, accents folded), split at hyphens and apostrophes ("mother-in-law" -> "mother", "law";
"Caroline's" -> "caroline"), and a plural or third-person "s" is read as the same word ("dogs" ->
"dog", "paints" -> "paint"), so a line and the memory it condenses match however the line inflects
a noun.

One measure of "a line says a memory" is built on them (`says`): the line holds at least half of the
memory's content words. The offline condenser chooses lines by it and the page-coverage eval scores
pages by it, so what is optimised is what is measured.
"""

from __future__ import annotations

import functools
import re

from domain.aliases import normalize_alias
from domain.closed_class import is_closed_class

MIN_LETTERS = 3
# A memory is said by a text that holds at least this share of its content words.
SAID_SHARE = 0.5
_SPLIT = re.compile(r"[-'’\s]+")


@functools.lru_cache(maxsize=65_536)
def _word_key(word: str) -> str:
    """The word with one plural or third-person "s" taken off ("dogs", "classes" stay apart from "das")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@functools.lru_cache(maxsize=65_536)
def content_words(text: str) -> frozenset[str]:
    """The content words of `text`, as keys (see the module's docstring)."""
    words = set()
    for word in _SPLIT.split(normalize_alias(text)):
        if len(word) < MIN_LETTERS or not any(ch.isalpha() for ch in word) or is_closed_class(word):
            continue
        words.add(_word_key(word))
    return frozenset(words)


def says(memory_words: frozenset[str], text_words: frozenset[str] | set[str]) -> bool:
    """Whether a text whose content words are `text_words` says a memory whose content words are
    `memory_words`: it holds at least SAID_SHARE of them. A memory with no content word is said by
    nothing (there is nothing of it to say)."""
    if not memory_words:
        return False
    return len(memory_words & text_words) >= SAID_SHARE * len(memory_words)
