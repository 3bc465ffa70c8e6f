"""An ambiguous pair put to the merge judge, and its answer.

The resolution ladder (domain/resolution.py) merges confident pairs itself; a pair on an ambiguous
rung (qualifier, subset, near) becomes a `MergeQuestion`: both pages as the judge sees them, with a
few lines of evidence. Claude answers all of a batch's questions in one call; offline, the scripted
planner answers from the same evidence (planners/scripted/judgement.py).
"""

from __future__ import annotations

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
