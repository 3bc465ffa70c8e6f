"""What a claim is: a line of a section with its own memories, a status that names the check it
passed, and a confidence that rests on the memories that each support it on their own.

A section is an ordered list of claims, one per body line; the rows live in `store/claims.py`. The
checks that give each status are in `domain/claim_checks.py` (the quote rule, the recount of a
derived line) and the judge's contract in `domain/claim_judge.py`; the grounding rule every line
passes first is `domain/grounding.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

ClaimKind = Literal["fact", "derived"]
ClaimStatus = Literal["quoted", "verified", "derived", "unverified"]

# A claim's status, each naming the one check it passed. `rejected` lines never enter a section: they
# are recorded in wiki_rejected_claims.
QUOTED: ClaimStatus = "quoted"
VERIFIED: ClaimStatus = "verified"
DERIVED: ClaimStatus = "derived"
UNVERIFIED: ClaimStatus = "unverified"
REJECTED = "rejected"
STATUSES: tuple[ClaimStatus, ...] = (QUOTED, VERIFIED, DERIVED, UNVERIFIED)

# What each status means, in one line: every surface (wiki page show, the web view, MCP, HTTP) shows
# these sentences, and the docs quote them.
STATUS_MEANINGS: dict[str, str] = {
    QUOTED: "word for word whole sentences of a memory it cites (case, punctuation and a date prefix aside)",
    VERIFIED: "a judge model read it with the memories it cites and said they support it",
    DERIVED: "computed by the compiler from its memories or pages (a count, a span, a list), "
             "recomputed whenever they change; never judged, no confidence",
    UNVERIFIED: "no check showed that its memories say it: it is no quote, and no judge said they support it "
                "(offline there is no judge)",
    REJECTED: "kept out of the wiki: a name, number or date none of its memories holds, "
              "or a judge said its memories do not support it",
}


def status_meanings(statuses: Iterable[str]) -> dict[str, str]:
    """The meaning of each status among `statuses`, in the order of STATUSES: what a read that shows
    claims says beside them."""
    present = set(statuses)
    return {status: STATUS_MEANINGS[status] for status in (*STATUSES, REJECTED) if status in present}


def status_legend(statuses: Iterable[str]) -> list[str]:
    """One line per status among `statuses`, in the order of STATUSES: `status: meaning`."""
    return [f"{status}: {meaning}" for status, meaning in status_meanings(statuses).items()]


def claim_mark(status: str, confidence: float | None) -> str:
    """How a line is marked beside its text: its confidence when it has one, then its status
    ("0.80 quoted", "unverified", "derived")."""
    return status if confidence is None else f"{confidence:.2f} {status}"


# Seed 003's schedule, counted over the memories that each support the line on their own (a quote of
# it, or the judge's word): 0.7 on one, +0.1 per further one, capped at 1.0; durable from 0.8 (two
# independent memories). A line no memory was shown to support (unverified) and a line the compiler
# computed (derived) have no confidence.
INITIAL_CONFIDENCE = 0.7
CORROBORATION_STEP = 0.1
DURABLE_CONFIDENCE = 0.8


def confidence(supporters: int, status: str = QUOTED) -> float | None:
    """The confidence of a claim `supporters` memories each support on their own; None for a derived
    or unverified line, or one with no supporter."""
    if status not in (QUOTED, VERIFIED) or supporters <= 0:
        return None
    return round(min(1.0, INITIAL_CONFIDENCE + CORROBORATION_STEP * (supporters - 1)), 2)


@dataclass(frozen=True)
class Support:
    """The memories a line rests on: those it quotes word for word, those a judge said support it each
    on its own, and those a judge said support it only together (a line that needs several)."""

    quoted: frozenset[str] = frozenset()
    judged: frozenset[str] = frozenset()
    joint: frozenset[str] = frozenset()

    @property
    def alone(self) -> frozenset[str]:
        return self.quoted | self.judged

    @property
    def count(self) -> int:
        """How many independent memories support it: each that does on its own; a set that only does
        together counts as one."""
        return len(self.alone) or (1 if self.joint else 0)

    def within(self, memories: set[str]) -> Support:
        return Support(self.quoted & memories, self.judged & memories, self.joint & memories)


def status_of(derived: bool, support: Support) -> ClaimStatus:
    """The status a line earns: derived (recomputed by code), else quoted when a memory holds it word
    for word, else verified when a judge said its memories support it, else unverified."""
    if derived:
        return DERIVED
    if support.quoted:
        return QUOTED
    if support.judged or support.joint:
        return VERIFIED
    return UNVERIFIED
