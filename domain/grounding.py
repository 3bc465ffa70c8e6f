"""The grounding rule: every date, number and name of a line must be found in what vouches for it.

One rule, checked at three points: the verification gate on a plan's lines (activities/claim_gate.py),
the section writer's own lines (domain/writer_grounding.py), and apply when it attributes a written
body (domain/attribution.py). What differs between them is stated as a `GroundingRule`:

| caller          | page's names | recounts | a count of the lines a fold took |
|-----------------|--------------|----------|----------------------------------|
| the gate        | yes          | yes      | no                               |
| the writer      | yes          | yes      | up to the lines it was shown     |
| apply           | yes          | yes      | no                               |

Which words are names is the product's one rule (domain/name_words.py, through
`domain/claim_terms.py` `names_in`), the same at all three points: a word opening a sentence that
reads as a name alone ("Oriane cooked.", "John went.") is a name like any other.

A term is found when, after the alias normalisation the resolver uses (`normalize_alias`: case,
accents and punctuation folded), it is in a cited memory (content, metadata values or the day it
happened) or among the page's own names; a number may also be a count of the line's own memories,
recomputed (`counts_of`). A term that fails is named in the rejection's reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from domain.aliases import normalize_alias
from domain.claim_terms import label_free, terms_of
from domain.claim_text import plain_text
from domain.closed_class import JOINING_WORDS
from domain.evidence import DATE, Evidence
from domain.line_formats import emphasised_names, without_note
from domain.name_words import possessive_free


@dataclass(frozen=True)
class GroundingRule:
    """What may vouch for a line's terms besides its cited memories (see the table above)."""

    caller: str
    # The page's own names (title, aliases) ground a name: a line may name the page it is on.
    page_names: bool = True
    # A figure may be a count of the line's own memories, recomputed (`counts_of`).
    recounts: bool = True
    # A whole number from 1 up to this many may be a count of the lines a fold took ("Earlier: 6
    # notes"): which lines a model writer folded cannot be recomputed, so a small invented figure
    # passes. 0: no such allowance.
    lines_shown: int = 0


# The verification gate's rule for a plan's lines.
GATE_RULE = GroundingRule(caller="gate")


def writer_rule(lines_shown: int) -> GroundingRule:
    """The rule for a section writer's own lines: a figure may count the lines it was shown."""
    return GroundingRule(caller="writer", lines_shown=lines_shown)


APPLY_RULE = GroundingRule(caller="apply")


def _name_in(name: str, evidence: Evidence) -> bool:
    return (name in evidence.words or f" {name} " in evidence.text
            # "Melanie's kids" names Melanie, one of the turn's speakers.
            or possessive_free(name) in evidence.participants)


def _names_text(page_names: Iterable[str]) -> str:
    return " " + " ".join(normalize_alias(name) for name in page_names) + " "


def ungrounded(line: str, evidence: Sequence[Evidence], page_names: Iterable[str], rule: GroundingRule) -> list[str]:
    """The line's terms that nothing allowed to vouch for them holds, in order (empty: grounded)."""
    terms = terms_of(line)
    names_text = _names_text(page_names) if rule.page_names else "  "
    counts = counts_of(line, evidence) if terms.numbers and rule.recounts else set()
    missing: list[str] = []
    for day in terms.dates:
        if not any(day in e.dates for e in evidence):
            missing.append(day)
    for number in terms.numbers:
        if not any(number in e.numbers for e in evidence) and f" {number} " not in names_text \
                and number not in counts and not _counts_lines(number, rule.lines_shown):
            missing.append(number)
    for name in terms.names:
        if not any(_name_in(name, e) for e in evidence) and f" {name} " not in names_text:
            missing.append(name)
    return missing


def _counts_lines(term: str, lines_shown: int) -> bool:
    return lines_shown > 0 and term.isdigit() and 1 <= int(term) <= lines_shown


def counts_of(line: str, evidence: Sequence[Evidence]) -> set[str]:
    """The counts a line may state about its own memories, recomputed from them: how many it cites,
    how many vouch for it, how many happened on each day or month it names, within the span of days
    it names, or name a name it gives
    ("- Visited 3 times, 2026-03-01 to 2026-03-09.", "- By month: 2026-03 (2).")."""
    days = [e.happened.date().isoformat() for e in evidence if e.happened is not None]
    counts = {str(len(evidence)), str(len(supporting(line, evidence)))}
    # how many of its memories say the line's sentence itself ("- Closed on Sundays. (2 times, …)"),
    # with or without a leading "Name: "
    sentence = without_note(label_free(plain_text(line)))
    for said in {normalize_alias(sentence), normalize_alias(sentence.split(": ", 1)[-1])} - {""}:
        counts.add(str(sum(1 for e in evidence if f" {said} " in e.text)))
    named = DATE.findall(plain_text(line))
    for token in named:
        counts.add(str(sum(1 for day in days if day.startswith(token))))
    full = sorted(token for token in named if len(token) == 10)
    if len(full) >= 2:
        counts.add(str(sum(1 for day in days if full[0] <= day <= full[-1])))
    counts.add(str(sum(1 for day in days if day in full)))
    # how many of its memories name each name the line gives ("Most mentioned: **Lena** (3)")
    for name in emphasised_names(line):
        key = normalize_alias(name)
        if key:
            counts.add(str(sum(1 for e in evidence if f" {key} " in e.text)))
    counts.discard("0")
    return counts


def supporting(line: str, evidence: Sequence[Evidence]) -> list[str]:
    """The memories that hold the line's terms: those holding all its terms, if any does; else those
    holding one of its telling terms (a term some but not all of the memories hold; when no term tells
    them apart, any of its terms). All of them when the line has no term. This narrows what a line
    cites; it says nothing of whether the memories say what the line says (the quote rule and the
    judge do)."""
    terms = terms_of(line)
    if not terms:
        return [e.memory_id for e in evidence]
    holders: list[set[str]] = []
    for day in terms.dates:
        holders.append({e.memory_id for e in evidence if day in e.dates})
    for number in terms.numbers:
        holders.append({e.memory_id for e in evidence if number in e.numbers})
    for name in terms.names:
        holders.append({e.memory_id for e in evidence if _name_in(name, e)})
    every = set.intersection(*holders) if holders else set()
    telling = [h for h in holders if h and len(h) < len(evidence)] or holders
    chosen = every or (set().union(*telling) if telling else set())
    return [e.memory_id for e in evidence if e.memory_id in chosen]


def grounding_reason(missing: Sequence[str]) -> str:
    shown = ", ".join(repr(term) for term in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    return f"not in its cited memories: {shown}{more}"


def words_held(line: str, evidence: Sequence[Evidence], page_names: Iterable[str] = ()) -> bool:
    """Every word of the line (after a derived line's label and a trailing note) is in its memories,
    a joining word or a recount of them, and it is grounded: what an offline re-derivation may keep of
    a line after a forget. Words held in any order say nothing of who did what: this is no status (a
    line's status comes from domain/claim_checks.py)."""
    text = without_note(label_free(plain_text(line)))
    words = normalize_alias(text).split()
    held = set().union(*(e.words for e in evidence)) if evidence else set()
    counts = counts_of(line, evidence) if any(word.isdigit() for word in words) else set()
    return any(word in held for word in words) and all(
        word in held or word in JOINING_WORDS or (word.isdigit() and word in counts) for word in words) \
        and not ungrounded(line, evidence, page_names, APPLY_RULE)
