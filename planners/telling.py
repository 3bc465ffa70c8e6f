"""The sentences of a memory that say something: what a line quotes, offline.

A memory's first sentence is often no fact at all: a turn of a conversation opens with a greeting
("Hey Mel! Good to see you!"), thanks or a reaction ("Wow, that's cool!"), and a plain memory may put its
fact second ("We moved. Our new flat is on Elm Road."). A line quotes the sentences that carry facts:

- a greeting, thanks, an interjection and the name they address are stripped from a sentence's start
  ("Hey Mel! …", "Thanks, Jon!", "Aww, …"), and a sentence left with nothing is no fact;
- a question asks, it does not state ("How have you been?");
- a sentence about the one spoken to ("You've got guts.") is the speaker's reaction, not a fact of theirs;
- an exclamation with no first-person word ("Love that painting!") is a reaction;
- what is left counts by its telling words: names, numbers, and words that are not among the most
  common of English (domain/name_words.py's `VERY_COMMON_ZIPF`), closed-class and reaction words left out;
  a first-person statement with a word of its own counts too ("We moved.").

The sentences that count are kept in order, within `SENTENCE_MAX_CHARS`, the most telling first when
they do not all fit. A turn with none gives no line (a greeting is never a line); a plain memory with
none is quoted by its first sentence, as before.
"""

from __future__ import annotations

import functools

import regex

from domain.closed_class import (
    AFFIRMATIONS,
    FIRST_PERSON,
    GREETINGS,
    REACTION_WORDS,
    SECOND_PERSON,
    THANKS,
    is_closed_class,
    is_interjection,
)
from domain.conversation import turn_speaker
from domain.name_words import VERY_COMMON_ZIPF, name_prior, zipf
from planners.memory_text import SENTENCE_MAX_CHARS, clean, sentence, sentences, truncate

_WORD = regex.compile(r"[\p{L}\p{N}][\p{L}\p{M}\p{N}'’\-]*")
_OPENER_PUNCTUATION = " ,!.;:—–-…"
# What follows thanks besides a name ("Thanks so much", "Thank you guys").
_THANKS_TAIL = frozenset({"so", "much", "guys"})


def _opening_stripped(text: str) -> str:
    """The sentence without the greetings, thanks, interjections and addressed names it opens with
    ("Hey Mel! Good to see you" -> "Good to see you"; "Wow, Caroline, that's cool" -> "that's cool")."""
    rest = text.strip()
    while rest:
        match = _WORD.match(rest)
        if match is None:
            break
        word = match.group(0)
        lower = word.lower().strip("'’")
        addressed = (lower in GREETINGS | THANKS or is_interjection(lower) or lower in AFFIRMATIONS
                     or lower in REACTION_WORDS)
        if not addressed:
            break
        rest = rest[match.end():].lstrip(_OPENER_PUNCTUATION)
        # The name a greeting addresses ("Hey Mel!", "Thanks, Jon!"), and "you" after thanks.
        follow = _WORD.match(rest)
        tail = follow.group(0).lower() if follow is not None else ""
        if follow is not None and (follow.group(0)[:1].isupper() and name_prior(tail) != "closed"
                                   or tail in SECOND_PERSON or tail in _THANKS_TAIL):
            after = rest[follow.end():]
            if not after or after[:1] in ",!.?;" or tail in SECOND_PERSON or tail in _THANKS_TAIL:
                rest = after.lstrip(_OPENER_PUNCTUATION)
    return rest


def telling_score(text: str) -> int:
    """How many telling words a sentence has once its greeting is stripped (0: it states nothing)."""
    body = _opening_stripped(text)
    if not body or body.rstrip().endswith("?"):
        return 0
    words = _WORD.findall(body)
    if not words or words[0].lower() in SECOND_PERSON:
        return 0
    lowered = [w.lower() for w in words]
    if body.rstrip().endswith("!") and not any(w in FIRST_PERSON for w in lowered):
        return 0
    # A first-person statement says something of its speaker as soon as it has a word of its own ("We moved.").
    score = 1 if lowered[0] in FIRST_PERSON and any(
        not is_closed_class(w) and w not in REACTION_WORDS and w not in FIRST_PERSON for w in lowered[1:]) else 0
    for index, (word, lower) in enumerate(zip(words, lowered, strict=True)):
        if lower[:1].isdigit():
            score += 1
        elif is_closed_class(lower) or lower in REACTION_WORDS or lower in FIRST_PERSON or lower in SECOND_PERSON:
            continue
        elif index > 0 and word[:1].isupper():
            score += 1  # a name
        elif len(lower) >= 3 and zipf(lower) < VERY_COMMON_ZIPF:
            score += 1
    return score


@functools.lru_cache(maxsize=16_384)
def telling_quote(content: str) -> str:
    """What a line quotes of a memory: its telling sentences, in order, cleaned and capped; a turn keeps
    its speaker ("Caroline: I went to a support group yesterday."). "" for a turn that states nothing."""
    turn = turn_speaker(clean(content))
    speaker, text = turn if turn is not None else ("", content)
    parts = sentences(text)
    scored = [(index, part, telling_score(part)) for index, part in enumerate(parts)]
    kept = [item for item in scored if item[2] > 0]
    if not kept:
        return "" if turn is not None else (sentence(truncate(parts[0])) if parts else "")
    prefix = f"{speaker}: " if turn is not None else ""
    budget = SENTENCE_MAX_CHARS - len(prefix)
    # The most telling first, earlier before later, until the budget is spent; then in their order.
    chosen: list[tuple[int, str, int]] = []
    used = 0
    for item in sorted(kept, key=lambda i: (-i[2], i[0])):
        if chosen and used + len(item[1]) + 1 > budget:
            continue
        chosen.append(item)
        used += len(item[1]) + 1
    quoted = " ".join(part for _, part, _ in sorted(chosen))
    return sentence(truncate(prefix + quoted))
