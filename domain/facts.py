"""Facts that change over time: which claims state one value of a single-valued attribute, and which
of several such claims holds when.

Some things a person or an event has one of at a time: where someone lives, who they work for, the
role they hold, whom they are married to, when a meeting is, what state a project is in, a phone
number. A claim that states a new value of such an attribute replaces the older claim about the same
holder (the one with the attribute), it does not sit beside it. `fact_of` reads (holder, attribute,
value) from a line; `replaces` says whether two lines state different values of the same attribute of
the same holder. The table of attributes (`ATTRIBUTES`) is the family: each attribute lists the
phrasings that state it, and a value shape when the phrasing alone is ambiguous ("moved to 3pm" is a
meeting time, "moved to Denver" a place to live).

Which claim holds is decided by when its memories happened, never by when they were compiled
(`standings`): the claims a plan marked as replacing one another form a group; in it each claim is
valid from its earliest memory's occurred_at until the next later claim's, and the latest holds now.
Claims of a group with no clear order (the same moment, or no date) are `disputed`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from domain.aliases import normalize_alias
from domain.claim_text import plain_text
from domain.closed_class import ENGLISH_ARTICLES, POSSESSIVE_DETERMINERS, PRONOUNS

Validity = Literal["current", "superseded", "disputed"]

# A date the compiler puts before a memory's own line ("- 2026-06-01: …") and a lead naming a place
# ("**Uchi**: …") are not part of what the line states.
_DATE_LEAD = re.compile(r"^\s*\d{4}-\d{2}(?:-\d{2})?\s*:\s*")
_PLACE_LEAD = re.compile(r"^[^:]{1,60}:\s+(?=[A-Z])")
_CLAUSE_END = re.compile(r"[.;!?,()]|\s(?:because|since|after|before|when|while|but|and|with|for|so|as|"
                         r"from|until|starting|effective|last|this|next|on|in|at)\s", re.IGNORECASE)
_TIME = (r"(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|h)|\d{1,2}:\d{2}|noon|midnight|"
         r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?(?:\s+at\s+\d{1,2}(?::\d{2})?\s*(?:am|pm)?)?)")
_TIME_VALUE = re.compile(rf"^\s*{_TIME}\b", re.IGNORECASE)
_STATUS_WORDS = ("on hold", "in progress", "done", "complete", "completed", "finished", "cancelled", "canceled",
                 "postponed", "paused", "active", "inactive", "open", "closed", "approved", "rejected", "pending",
                 "shipped", "blocked", "resolved", "live", "launched", "abandoned")
_STATUS = "|".join(re.escape(word) for word in sorted(_STATUS_WORDS, key=len, reverse=True))
# Words that stand for the page's own subject in a memory's sentence (domain/closed_class.py).
_SUBJECT_WORDS = PRONOUNS | POSSESSIVE_DETERMINERS
_ARTICLES = ENGLISH_ARTICLES | POSSESSIVE_DETERMINERS
_ADVERBS = r"(?:(?:now|just|finally|recently|officially|already|since|then|has|have|had|is|are|was|were|been|" \
           r"got|will|be|also|still)\s+)*"


@dataclass(frozen=True)
class Attribute:
    """One single-valued attribute and the phrasings that state a value of it."""

    name: str
    phrasings: tuple[str, ...]  # regular expressions, the value follows each
    value: Literal["words", "time", "status"] = "words"


ATTRIBUTES: tuple[Attribute, ...] = (
    # A time is tried first: "moved to 3pm" is a schedule, "moved to Denver" a residence.
    Attribute("schedule", (r"(?:moved|moves|rescheduled|reschedules|changed|changes|pushed|pushes|shifted|"
                           r"shifts|bumped|set|switched)\s+(?:back\s+)?(?:from\s+\S+(?:\s+\S+)?\s+)?to",
                           r"(?:is|are|was|were|starts|start|started|begins|begin|happens|meets|meet|runs)\s+"
                           r"(?:now\s+)?(?:at|on|every)"), value="time"),
    Attribute("status", (r"(?:status\s+(?:is|was|changed\s+to|set\s+to|moved\s+to)|is|are|was|were|got|went|"
                         r"has\s+been|marked(?:\s+as)?|set\s+to)\s+(?:now\s+|officially\s+|again\s+)?",),
              value="status"),
    Attribute("residence", (r"(?:lives|lived|living|resides|resided|settled|stays|is\s+based|based)\s+(?:now\s+)?in",
                            r"(?:moved|moves|moving|relocated|relocates|relocating)\s+(?:back\s+)?"
                            r"(?:from\s+[^,.;]+?\s+)?to")),
    Attribute("employer", (r"(?:works|worked|working)\s+(?:at|for)", r"(?:joined|joins)",
                           r"(?:started|starts)\s+(?:working\s+)?at", r"(?:employed|hired)\s+(?:at|by)",
                           r"(?:took|accepted|got|started)\s+a\s+(?:new\s+)?job\s+(?:at|with)")),
    Attribute("role", (r"(?:works|worked|working)\s+as", r"(?:promoted|appointed|named)\s+(?:to|as)",
                       r"became", r"(?:new\s+)?(?:role|title|position)\s+(?:is|as)")),
    Attribute("partner", (r"(?:married|engaged)\s+to", r"(?:is\s+)?dating", r"(?:partner|spouse)\s+is")),
    Attribute("phone", (r"(?:phone(?:\s+number)?|mobile|cell)\s+(?:number\s+)?(?:is|changed\s+to)",)),
    Attribute("email", (r"e-?mail(?:\s+address)?\s+(?:is|changed\s+to)",)),
)

_COMPILED = tuple(
    (attribute, re.compile(rf"^(?P<holder>.{{0,80}}?)\s*\b{_ADVERBS}(?:{phrasing})\s+(?P<value>.+)$", re.IGNORECASE))
    for attribute in ATTRIBUTES for phrasing in attribute.phrasings
)


@dataclass(frozen=True)
class Fact:
    """What a line states: `holder`'s `attribute` is `value` (holder and value normalised)."""

    holder: str
    attribute: str
    value: str


def statement(line: str) -> str:
    """The sentence a claim line states: its plain text without bullet, date and place leads."""
    text = _DATE_LEAD.sub("", plain_text(line))
    return _PLACE_LEAD.sub("", text).strip()


def _holder(raw: str) -> str:
    raw = re.split(r"[;:,]", raw)[-1]  # the clause the phrasing is in: "Sam called; he is moving to …"
    words = [w for w in normalize_alias(raw).split() if w not in _ARTICLES or len(raw.split()) == 1]
    if words and words[-1] in ("s",):  # "Alice's phone" folds to "alice s"
        words = words[:-1]
    return " ".join(words)


def _value(attribute: Attribute, raw: str) -> str:
    if attribute.value == "time":
        match = _TIME_VALUE.match(raw)
        return normalize_alias(match.group(0)).replace(" ", "") if match else ""
    if attribute.value == "status":
        match = re.match(rf"^\s*(?:{_STATUS})\b", raw, re.IGNORECASE)
        return normalize_alias(match.group(0)) if match else ""
    cut = _CLAUSE_END.search(" " + raw)
    value = (" " + raw)[: cut.start()] if cut else " " + raw
    words = [w for w in normalize_alias(value).split() if w not in _ARTICLES][:4]
    return " ".join(words)


def fact_of(line: str) -> Fact | None:
    """The single-valued fact a line states, or None. The holder is what the sentence is about (a
    name, a pronoun, "the standup"); at most six words stand before the phrasing."""
    text = statement(line)
    if not text:
        return None
    for attribute, pattern in _COMPILED:
        match = pattern.match(text)
        if match is None:
            continue
        holder = _holder(match.group("holder"))
        if len(holder.split()) > 6:
            continue
        value = _value(attribute, match.group("value"))
        if value:
            return Fact(holder=holder, attribute=attribute.name, value=value)
    return None


def _holders_agree(first: str, second: str, page_names: Iterable[str]) -> bool:
    """Both name the same holder: the same words, or each is the page itself (one of its names, a
    name's first word, or a pronoun standing for it)."""
    if first == second:
        return True
    names = {normalize_alias(n) for n in page_names} - {""}
    own = names | {n.split()[0] for n in names} | _SUBJECT_WORDS | {""}
    return first in own and second in own


def replaces(line: str, other: str, page_names: Iterable[str] = ()) -> bool:
    """Whether two lines state different values of one single-valued attribute of one holder."""
    mine, theirs = fact_of(line), fact_of(other)
    if mine is None or theirs is None or mine.attribute != theirs.attribute or mine.value == theirs.value:
        return False
    return _holders_agree(mine.holder, theirs.holder, list(page_names))


# ------------------------------------------------------------------ which claim holds when


@dataclass(frozen=True)
class DatedClaim:
    """A claim of one page: its id, its key (domain/claims.py claim_key) and when it began to hold
    (its earliest memory's occurred_at)."""

    id: str
    key: str
    valid_from: datetime | None


@dataclass(frozen=True)
class Standing:
    validity: Validity
    valid_to: datetime | None = None
    superseded_by: str | None = None


CURRENT = Standing("current")


def standings(claims: Sequence[DatedClaim], marks: Iterable[tuple[str, str]]) -> dict[str, Standing]:
    """Each claim's standing, from the marks (pairs of claim keys a plan said replace one another) and
    the claims' dates. A claim in no group is current. In a group, a claim holds until the earliest
    later claim of another key begins (that claim supersedes it); the claims of the latest moment
    hold now, disputed when they are several keys; a claim with no date in a group of several is
    disputed (nothing orders it)."""
    keys = {claim.key for claim in claims}
    parent: dict[str, str] = {key: key for key in keys}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for first, second in marks:
        if first in keys and second in keys and first != second:
            a, b = root(first), root(second)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[str, list[DatedClaim]] = {}
    for claim in claims:
        groups.setdefault(root(claim.key), []).append(claim)
    out: dict[str, Standing] = {}
    for members in groups.values():
        if len({m.key for m in members}) < 2:
            out.update({m.id: CURRENT for m in members})
            continue
        dated = sorted(((m.valid_from, m) for m in members if m.valid_from is not None),
                       key=lambda pair: (pair[0], pair[1].key, pair[1].id))
        for member in members:
            start = member.valid_from
            if start is None:
                out[member.id] = Standing("disputed")
                continue
            later = next(((at, m) for at, m in dated if at > start and m.key != member.key), None)
            if later is not None:
                out[member.id] = Standing("superseded", later[0], later[1].id)
                continue
            rivals = {m.key for at, m in dated if at == start}
            undated = any(m.valid_from is None for m in members)
            out[member.id] = Standing("disputed") if len(rivals) > 1 or undated else CURRENT
    return out


def holds_at(valid_from: datetime | None, valid_to: datetime | None, moment: datetime) -> bool:
    """Whether a claim held at `moment`: it had begun (its first memory had happened) and had not
    been superseded yet."""
    return (valid_from is None or valid_from <= moment) and (valid_to is None or moment < valid_to)
