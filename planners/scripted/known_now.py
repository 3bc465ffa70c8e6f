"""What is known now about a page's subject: the lines a condensed section opens with and always keeps.

A page about someone should say first where they live, what they do, and the people and animals in
their life, whatever the date of the memory that said it; a section that keeps only what says the
most of its memories could leave a memory said once, long ago ("Caroline moved from Sweden"), out.
From a section's lines (one per memory, oldest first), the newest line of each of these facets:

- each single-valued attribute of the subject (domain/facts.py: where they live, who they work for,
  the role they hold, whom they are married to): the newest line stating a value of it, the value
  that holds now (an older value is replaced, not kept beside it);
- each relation the subject speaks of, a possessive before a word of the person or pet class of the
  vocabulary of kinds (domain/kinds.py: "her husband", "his kids", "their dog"): the newest line
  naming it, up to RELATIONS of them, the most recent relations first.

A line counts only when its sentence is about the page itself: it opens with the page's title, its
first word, or a pronoun standing for it, and so does the holder of a fact. Each chosen line is a memory's own line, cited by that memory like every other line.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.aliases import normalize_alias
from domain.closed_class import POSSESSIVE_DETERMINERS, PRONOUNS
from domain.facts import fact_of, statement
from domain.kinds import kind_of_word

RELATIONS = 4
# How many words may stand between a possessive and the relation ("her two kids", "my little sister").
_GAP = 2


def _own_holders(title: str) -> set[str]:
    key = normalize_alias(title)
    return {key, *key.split()[:1]} | PRONOUNS | {""} if key else set()


def _about_the_subject(text: str, holders: set[str]) -> bool:
    """Whether the line's sentence is about the page's subject: it opens with its name or a pronoun
    ("Jon thanked Gina for her help" is about Jon, not a relation of Gina's)."""
    words = normalize_alias(statement(text)).split()
    if not words:
        return False
    first = words[0][:-2] if words[0].endswith("'s") else words[0]
    return first in holders - {""}


def _relations(text: str) -> list[str]:
    """The person and pet words a line gives with a possessive before them ("her husband" -> husband)."""
    words = normalize_alias(text).split()
    found: list[str] = []
    for index, word in enumerate(words):
        singular = word[:-1] if word.endswith("s") and kind_of_word(word[:-1]) is not None else word
        kind = kind_of_word(singular)
        if kind is None or kind.cls not in ("person", "pet") or singular == "person":
            continue
        if any(w in POSSESSIVE_DETERMINERS or w.endswith("'s") for w in words[max(0, index - _GAP - 1):index]):
            found.append(singular)
    return found


def known_now(texts: Sequence[str], title: str) -> list[int]:
    """The positions in `texts` (a section's lines, oldest first; "" for a memory with none) of the
    lines that say what is known now of the page titled `title`: facts first, then relations."""
    holders = _own_holders(title)
    facts: dict[str, int] = {}
    relations: dict[str, int] = {}
    for position, text in enumerate(texts):
        if not text or not _about_the_subject(text, holders):
            continue
        fact = fact_of(text)
        if fact is not None and fact.attribute is not None and fact.holder in holders:
            facts[fact.attribute] = position  # a newer line states the value that holds now
        for relation in _relations(text):
            relations.pop(relation, None)
            relations[relation] = position
    newest_relations = sorted(relations.values(), reverse=True)[:RELATIONS]
    chosen: list[int] = []
    for position in [*facts.values(), *newest_relations]:
        if position not in chosen:
            chosen.append(position)
    return chosen
