"""An ambiguous pair put to the merge judge, and its answer.

The resolution ladder (domain/resolution.py) merges confident pairs itself; a pair on an ambiguous
rung (qualifier, subset, near) becomes a `MergeQuestion`: both pages as the judge sees them, with a
few lines of evidence. Claude answers all of a batch's questions in one call; offline, the scripted
planner answers from the same evidence (planners/scripted/judgement.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from domain.aliases import normalize_alias
from domain.resolution import NameSet, Rung


class MergeSide(BaseModel):
    """A page as the judge sees it: its names and a few lines of evidence (summary, section text,
    the memories behind it)."""

    title: str
    type: str
    aliases: list[str] = Field(default_factory=list)
    summary: str | None = None
    evidence: list[str] = Field(default_factory=list)
    places: list[str] = Field(default_factory=list)  # addresses or cities of the memories behind it

    def names(self) -> NameSet:
        return NameSet(type=self.type, names=[self.title, *self.aliases], summary=self.summary)

    def text(self) -> str:
        return normalize_alias(" ".join([self.title, *self.aliases, self.summary or "", *self.evidence, *self.places]))


class MergeQuestion(BaseModel):
    """One ambiguous pair: is the proposal the same thing as the candidate?"""

    key: str
    rung: Rung
    detail: str = ""
    proposal: MergeSide
    candidate: MergeSide
    shared_sources: int = 0  # memories both already cite


class MergeDecision(BaseModel):
    key: str
    same: bool
    reason: str = ""
    # What the judge was shown, kept with the decision on record (filled by the judge activity).
    evidence: dict[str, Any] = Field(default_factory=dict)


def question_evidence(question: MergeQuestion) -> dict[str, Any]:
    """The evidence a decision is kept with: both sides' places, and the memories they share."""
    return {"proposal_places": question.proposal.places, "candidate_places": question.candidate.places,
            "shared_sources": question.shared_sources}


DecidedBy = Literal["ladder", "judge", "unjudged", "operator", "planner"]


class MergeRecord(BaseModel):
    """One resolution decision on a (proposal, page) pair, as it is kept on record: a merge a
    confident rung made, or an ambiguous pair and what the judge answered (or that nobody did)."""

    proposal_type: str
    proposal_slug: str
    proposal_names: list[str]
    candidate_page_id: str
    rung: str
    detail: str = ""
    decided_by: DecidedBy
    same: bool
    reason: str = ""
    evidence: dict[str, Any] = Field(default_factory=dict)
