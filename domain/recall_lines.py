"""What a claim line is to recall, read in one place: an answer, or the wiki's bookkeeping.

A page's sections carry lines that keep books on its memories rather than say what they say: how
many memories and the days they span ("- 147 memories, 2022-03-01 to 2023-05-07."), the folded
older lines ("- Earlier: 14 notes, …"), the names seen together ("- Often together with: …",
"- Most mentioned: …"), visit counts. They answer a question about counts or frequency ("how often",
"how many times"), and nothing else: recall spends budget on them only for such a question.

Every reading of a claim's kind and status by recall goes through here, so a change to how the
compiler labels its lines (a renamed status, derived lines without a confidence) changes one module.
"""

from __future__ import annotations

import re
from typing import Literal

Role = Literal["answer", "bookkeeping"]

# Lines the compiler writes about its memories rather than from them (planners/scripted/condense.py,
# planners/section_fold.py and the model's "=count"/"=span" lines), after an optional list dash.
_BOOKKEEPING = re.compile(
    r"^\s*(?:[-*]\s+)?(?:"
    r"(?:often together with|most mentioned)\s*:"  # co-occurrence
    r"|earlier\s*:\s*\d[\d,]*\s+notes?\b"  # a fold of older lines
    r"|\d[\d,]*\s+(?:new\s+)?(?:memories|notes|mentions|records)\b"  # a count, with or without its span
    r"|visited\s+(?:once|twice|\d[\d,]*\s+times)\b"  # visit counts
    r"|visits\s+by\s+month\s*:"
    r")", re.IGNORECASE)

# A question about counts or frequency: the one kind bookkeeping lines answer.
_ASKS_COUNTS = re.compile(
    r"\bhow\s+(?:many|much|often|frequently)\b|\bnumber\s+of\b|\bcount\b|\b(?:how\s+many\s+)?times\b"
    r"|\bfrequen|\bmost\s+(?:often|mentioned|common|frequent)\b|\busually\b|\btogether\s+with\b",
    re.IGNORECASE)

# A question about when something happened (or how long ago): its answer is a date.
_ASKS_WHEN = re.compile(
    r"\bwhen\b|\bwhat\s+(?:year|month|day|date|time)\b|\bwhich\s+(?:year|month|day|date)\b|\bhow\s+long\b"
    r"|\bsince\s+when\b|\bwhat\s+(?:weekend|week)\b", re.IGNORECASE)


def line_role(text: str, kind: str) -> Role:
    """Whether a claim line answers questions or keeps books. A derived line (one the compiler
    computed) keeps books unless it says something in words (a summary of what the memories say)."""
    if _BOOKKEEPING.match(text):
        return "bookkeeping"
    return "answer"


def asks_for_counts(question: str) -> bool:
    return _ASKS_COUNTS.search(question) is not None


def asks_when(question: str) -> bool:
    return _ASKS_WHEN.search(question) is not None


def condenses(kind: str, sources: int) -> bool:
    """Whether a claim stands for more than one memory's words: a line the compiler derived, or one
    several memories support. Such a claim is returned with the memory that best answers."""
    return kind == "derived" or sources >= 2


def is_derived(kind: str) -> bool:
    return kind == "derived"
