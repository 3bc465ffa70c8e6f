"""Which lines a condensed section keeps: the fewest characters that say the most of its memories.

A section that cites more memories than its bound can hold says only some of their lines. Keeping the
newest lines loses every memory said once and followed by a few newer ones; keeping the lines the
memories repeat loses everything said once. Instead the section keeps the lines that together *say*
the most of its memories (a memory is said when the kept lines hold at least half of its content
words, domain/content_words.py) for the fewest characters:

1. lines that say the same thing are one candidate: two lines with nearly the same content words and
   the same numbers (a memory repeated, barely reworded) merge into one line that counts them all
   ("… (3 times, …)"); the section cites every one of them;
2. the lines that must stay are taken first, whatever they cost (`must_stay`: what is known now of
   the subject), then those to take first while they fit (`first`: the newest news);
3. then, greedily, the candidate that says the most memories not yet said per character it costs
   (the budgeted maximum-coverage greedy, which is within a constant of the best choice), a line that
   only adds new words breaking ties, until the budget is spent or no candidate says anything more.

Chosen over a centrality ranking (TextRank, LexRank, as in `sumy`) because centrality favours what
the memories repeat, which is what this must not lose the rest to, and over maximal marginal relevance
because a section has no query to be relevant to; the objective here is exactly what the page-coverage
eval measures. Deterministic: candidates are taken in the memories' order, ties broken by position.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from domain.content_words import SAID_SHARE, content_words


@dataclass(frozen=True)
class Line:
    """A candidate line: the memories (by position) it stands for and its words."""

    members: tuple[int, ...]  # positions of the memories whose line this is, oldest first
    text: str  # the line's text (of its newest member)
    words: frozenset[str]


def merged_lines(texts: Sequence[str], apart: Callable[[str], bool] | None = None) -> list[Line]:
    """The distinct lines of `texts` (one per memory, in the memories' order; "" for none), lines that
    say the same thing merged: each new line joins the first earlier group whose text and its own say
    each other, else opens a group. A group's text is its newest member's. A line `apart` says so of
    is never merged (nor merged into)."""
    groups: list[list[int]] = []
    words: list[frozenset[str]] = []
    # word -> the groups (open to merging) whose words hold it, oldest first: a group that can say the
    # same as a line shares with it at least SAME_SHARE of the line's words, so it holds one of any
    # `len(own) - needed + 1` of them, and the line's rarest words find every such group.
    groups_with: dict[str, list[int]] = {}
    for position, text in enumerate(texts):
        if not text:
            continue
        own = content_words(text)
        if apart is not None and apart(text):
            groups.append([position])
            words.append(own)
            continue
        match = _first_same(own, numbers_of(text), groups_with, words, groups, texts) if own else None
        if match is not None:
            groups[match].append(position)
            continue
        for word in own:
            groups_with.setdefault(word, []).append(len(groups))
        groups.append([position])
        words.append(own)
    return [Line(members=tuple(group), text=texts[group[-1]], words=words[index])
            for index, group in enumerate(groups)]


def _first_same(own: frozenset[str], numbers: list[str], groups_with: dict[str, list[int]],
                words: list[frozenset[str]], groups: list[list[int]], texts: Sequence[str]) -> int | None:
    """The first group whose words say the same as `own` with the same numbers, or None."""
    needed = math.ceil(SAME_SHARE * len(own) - 1e-9)
    rarest = sorted(own, key=lambda word: (len(groups_with.get(word, ())), word))[: len(own) - needed + 1]
    candidates = sorted({index for word in rarest for index in groups_with.get(word, ())})
    for index in candidates:
        if says_the_same(own, words[index]) and numbers == numbers_of(texts[groups[index][0]]):
            return index
    return None


# Two lines say the same thing when at least this share of the content words of both is common to
# both (one word apart in ten) and they give the same numbers: "Ribs with Lena" is not "Brisket with
# Lena", nor "Course 2" "Course 28".
SAME_SHARE = 0.8
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


def says_the_same(a: frozenset[str], b: frozenset[str]) -> bool:
    return len(a & b) >= SAME_SHARE * len(a | b)


def numbers_of(text: str) -> list[str]:
    return sorted(_NUMBER.findall(text))


def choose(lines: Sequence[Line], memory_words: Sequence[frozenset[str]], budget: int, *,
           must_stay: Sequence[int] = (), first: Sequence[int] = (), cost_of: Sequence[int] | None = None) -> list[int]:
    """The indices of `lines` to keep, in the order chosen: those in `must_stay` first, whatever they
    cost, then those of `first` that fit within `budget`, then greedily
    the line that says the most memories not yet said (`memory_words`, each memory's content words)
    per character (`cost_of`, by default the text's length plus a line's dressing) within `budget`
    characters. Stops when no line left says a memory more or adds a word of a memory not yet said."""
    costs = list(cost_of) if cost_of is not None else [len(line.text) + 16 for line in lines]
    need = [SAID_SHARE * len(words) for words in memory_words]
    have = [0] * len(memory_words)
    said = [not words for words in memory_words]  # a memory with no content word counts as said
    known: set[str] = set()
    # Which memories each word is in, so a line's gain is counted over the memories it touches only.
    holders: dict[str, list[int]] = {}
    for index, words in enumerate(memory_words):
        for word in words:
            holders.setdefault(word, []).append(index)
    chosen: list[int] = []
    spent = 0

    def take(index: int) -> None:
        nonlocal spent
        chosen.append(index)
        spent += costs[index]
        for word in sorted(lines[index].words - known):
            known.add(word)
            for holder in holders.get(word, ()):
                have[holder] += 1
                if not said[holder] and have[holder] >= need[holder]:
                    said[holder] = True

    def gain(index: int) -> tuple[int, int]:
        fresh = lines[index].words - known
        touched: dict[int, int] = {}
        for word in fresh:
            for holder in holders.get(word, ()):
                if not said[holder]:
                    touched[holder] = touched.get(holder, 0) + 1
        newly = sum(1 for holder, count in touched.items() if have[holder] + count >= need[holder])
        return newly, len(touched)

    for index in must_stay:
        if index not in chosen:
            take(index)
    for index in first:
        if index not in chosen and spent + costs[index] <= budget:
            take(index)
    left = [index for index in range(len(lines)) if index not in chosen]
    while left:
        scored = []
        for index in left:
            if spent + costs[index] > budget:
                continue
            newly, touched = gain(index)
            if newly or touched:
                scored.append(((newly + 0.01 * touched) / costs[index], -index, index))
        if not scored:
            break
        best = max(scored)[2]
        take(best)
        left.remove(best)
    return chosen
