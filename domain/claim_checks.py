"""The checks behind a claim's status, defined once for the gate, the writer's gate and apply.

- quoted (`quoted_in`): the line, a date prefix aside, is word for word a run of whole consecutive
  sentences of one memory it cites (case and punctuation aside). A span that starts or ends inside a
  sentence is no quote: what it drops (a negation before it, the subject of its clause, a "with X"
  that changes who acted, the rest of a noun phrase) can change who did what. A run that does not
  start the memory may not open with a word pointing back ("She went."). A date prefix must be a day
  that memory happened on or names; a name leading the line ("**Uchi**: …") is the compiler's or the
  model's association, not the memory's words, so a led line is no quote. Words rearranged, added
  or dropped: no quote.
- derived (`derived_holds`): the line has the shape of one the compiler computes
  (domain/line_formats.py) and recomputing it from its memories gives its figures: its counts, its
  days, its address (a count of some of them, a fold's or a repeated sentence's, is bounded by the
  recount). Lines that count or list pages cannot be recounted from memories and are taken by their
  shape.
- verified: the judge's word (domain/claim_judge.py), given in the gate.
- unverified: everything else.

`check_line` is the gate's decision for one plan line, in order: derived, quoted, grounded (else
rejected), then the judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from domain.aliases import normalize_alias
from domain.claim_text import plain_text
from domain.evidence import Evidence, words_of
from domain.grounding import GroundingRule, supporting, ungrounded
from domain.line_formats import mentioned_names, parse_dated, shape_of


def quote_key(line: str) -> tuple[str, str | None] | None:
    """What a quote of the line must match: its words (normalised) and the day its date prefix names
    (None without one); None for a line led by a name, which no memory says word for word."""
    dated = parse_dated(line)
    if dated is not None:
        if dated.lead:
            return None
        return words_of(plain_text(dated.text)), dated.day
    return words_of(plain_text(line)), None


def quoted_in(line: str, evidence: Iterable[Evidence]) -> list[str]:
    """The memories the line quotes word for word (see the module's rule), in order."""
    key = quote_key(line)
    if key is None or not key[0]:
        return []
    words, day = key
    return [e.memory_id for e in evidence if words in e.runs and (day is None or day in e.dates)]


def _days(evidence: Sequence[Evidence]) -> list[str]:
    return [e.happened.date().isoformat() for e in evidence if e.happened is not None]


def derived_holds(line: str, evidence: Sequence[Evidence]) -> bool:
    """Whether the line is one the compiler computes and its figures recount from `evidence`, the
    memories it was computed from."""
    shape = shape_of(line)
    if shape is None:
        return False
    if shape.pages:
        return True
    if not evidence:
        return False
    days = _days(evidence)
    if shape.kind == "address":
        return normalize_alias(shape.address) in set().union(*(e.values for e in evidence))
    if shape.kind in ("count", "span", "visits"):
        if shape.counts[0] != len(evidence):
            return False
        return not shape.days or (min(days, default="") == shape.days[0] and max(days, default="") == shape.days[-1])
    if shape.kind == "visited":
        return shape.days[0] in days
    if shape.kind == "by_month":
        return all(count == sum(1 for day in days if day.startswith(month))
                   for month, count in zip(shape.days, shape.counts, strict=True))
    if shape.kind == "latest":
        return all(day in days for day in shape.days)
    if shape.kind == "fold":
        first, last = shape.days
        within = sum(1 for day in days if first <= day <= last)
        return first in days and last in days and 1 <= shape.counts[0] <= within
    if shape.kind == "mentions":
        # A name's count is of the memories that mention it under any of its spellings, which the
        # line does not show: each name must be held, and no count may exceed the memories.
        names = [normalize_alias(name) for name in mentioned_names(line)]
        return all(any(f" {name} " in e.text for e in evidence) for name in names) \
            and all(1 <= count <= len(evidence) for count in shape.counts)
    if shape.kind == "recurring":
        # The count is of the memories whose own line the sentence is; others may say it further on.
        said = normalize_alias(shape.sentence)
        holders = [e for e in evidence if f" {said} " in e.text]
        held_days = _days(holders)
        return 2 <= shape.counts[0] <= len(holders) and all(day in held_days for day in shape.days)
    return False


Outcome = Literal["rejected", "derived", "quoted", "judge"]


@dataclass
class LineCheck:
    """The gate's decision on one plan line: its outcome and the memories it then cites."""

    outcome: Outcome
    refs: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def check_line(line: str, evidence: Sequence[Evidence], page_names: Iterable[str], rule: GroundingRule) -> LineCheck:
    """Derived (recounted: it cites what it counts), else quoted (it cites the memories it quotes),
    else rejected when a term of it is ungrounded, else for the judge (citing the memories that
    hold its terms)."""
    ids = [e.memory_id for e in evidence]
    if derived_holds(line, evidence):
        return LineCheck("derived", ids)
    quoted = quoted_in(line, evidence)
    if quoted:
        return LineCheck("quoted", quoted)
    missing = ungrounded(line, evidence, page_names, rule)
    if missing:
        return LineCheck("rejected", ids, missing)
    return LineCheck("judge", supporting(line, evidence) or ids)
