"""What one memory can vouch for, read once: its words, numbers, dates, metadata labels and the runs
of whole sentences a line may quote.

Every claim rule reads memories through `Evidence` (the grounding rule, the quote rule, the
recounts, attribution), so a memory is tokenised one way for all of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from domain.aliases import normalize_alias
from domain.closed_class import ANAPHORA
from domain.guards import strip_wikilinks
from domain.sentences import split_sentences

DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

# The longest run of consecutive sentences a quoted line may be.
MAX_QUOTED_SENTENCES = 4


def words_of(text: str) -> str:
    """The text as the quote rule compares it: normalised (case, accents, punctuation folded), a
    typographic apostrophe read as a plain one ("didn’t" is "didn't")."""
    return normalize_alias(text.replace("’", "'"))


@dataclass(frozen=True)
class Evidence:
    """What one memory can vouch for: its normalised words, its numbers and its dates."""

    memory_id: str
    words: frozenset[str]
    text: str
    numbers: frozenset[str]
    dates: frozenset[str]
    happened: datetime | None = None
    # The memory's metadata keys, normalised: a line may label a value by its key ("Address: …").
    labels: frozenset[str] = frozenset()
    # Every run of whole consecutive sentences of its content, normalised (the quote rule).
    runs: frozenset[str] = frozenset()
    # Its metadata values, normalised (an address line states one of them).
    values: frozenset[str] = frozenset()
    # A turn's conversation's speakers, normalised, each whole and word by word: a line may name
    # whom a turn's "I", "you" and "we" stand for ("Caroline is proud of Melanie" from Caroline's
    # "I'm proud of you" to Melanie).
    participants: frozenset[str] = frozenset()


def flat_values(value: Any) -> Iterable[str]:
    """Every scalar value of a memory's metadata, in order (keys left out)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from flat_values(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from flat_values(item)
    elif value is not None:
        yield str(value)


def metadata_keys(value: Any) -> Iterable[str]:
    """Every key of a memory's metadata, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from metadata_keys(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from metadata_keys(item)


def sentence_runs(content: str) -> frozenset[str]:
    """The runs of whole consecutive sentences of a memory's text, each normalised: what a line may
    quote. A run that does not start the memory never opens with a word pointing back (ANAPHORA)."""
    sentences = [words_of(s) for s in split_sentences(strip_wikilinks(content))]
    sentences = [s for s in sentences if s]
    runs: set[str] = set()
    for start, first in enumerate(sentences):
        if start > 0 and first.split(" ", 1)[0] in ANAPHORA:
            continue
        for end in range(start + 1, min(len(sentences), start + MAX_QUOTED_SENTENCES) + 1):
            runs.add(" ".join(sentences[start:end]))
    return frozenset(runs)


def evidence_of(memory_id: str, content: str, metadata: dict[str, Any] | None,
                happened: datetime | date | None, participants: Iterable[str] = ()) -> Evidence:
    values = list(flat_values(metadata or {}))
    raw = " ".join([content, *values])
    dates = set(DATE.findall(raw))
    if happened is not None:
        day = happened.date() if isinstance(happened, datetime) else happened
        dates.update({day.isoformat(), day.isoformat()[:7]})
    normalised = normalize_alias(raw)
    numbers = {n.replace(",", "") for n in NUMBER.findall(DATE.sub(" ", raw))}
    return Evidence(memory_id=memory_id, words=frozenset(normalised.split()), text=f" {normalised} ",
                    numbers=frozenset(numbers), dates=frozenset(dates),
                    happened=happened if isinstance(happened, datetime) else None,
                    labels=frozenset(key for key in map(normalize_alias, metadata_keys(metadata or {})) if key),
                    runs=sentence_runs(content),
                    values=frozenset(v for v in map(normalize_alias, values) if v),
                    participants=_participant_names(participants))


def _participant_names(participants: Iterable[str]) -> frozenset[str]:
    names: set[str] = set()
    for name in map(normalize_alias, participants):
        if name:
            names.add(name)
            names.update(name.split())
    return frozenset(names)
