"""The claim judge's questions and answers: what the gate asks a model about a plan's lines.

A line that is neither quoted nor derived goes to the judge with the memories it cites. The judge
answers, per line: `supported` (with the cited memories that each say all of it on their own, or,
for a line that takes several of them together, those several as `together`), `unsupported` (with
the kind of problem it found), or `unsure`. Supported lines are `verified`; unsupported ones are
rejected; unsure ones, and lines the judge left out, stay `unverified`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# What the judge must catch; a rejection names one.
PROBLEMS: dict[str, str] = {
    "negation": "the memories say the opposite (a not or never added or dropped, loved for hated)",
    "actor": "who did what to whom is changed (another person acted, the roles are swapped)",
    "date": "a date or time the memories do not give",
    "number": "a number or count the memories do not give",
    "invented": "a person, place or thing none of the memories names",
    "merged": "two memories merged into one claim that neither says",
    "generalisation": "a generalisation the memories do not make (always, every time, loves, never)",
    "unsaid": "anything else the memories do not say",
}

Verdict = Literal["supported", "unsupported", "unsure"]


class JudgedMemory(BaseModel):
    """A cited memory as the judge reads it: its id, the day it happened and its text (with the values
    of its metadata)."""

    id: str
    day: str = ""
    text: str


class ClaimQuestion(BaseModel):
    """One line for the judge: its text, the page it is on and the memories it cites."""

    key: str
    text: str
    page: str
    memories: list[JudgedMemory]


class ClaimVerdict(BaseModel):
    key: str
    verdict: Verdict
    # The cited memories that each support the line on their own (memory ids).
    by: list[str] = Field(default_factory=list)
    # For a line only several cited memories support together: those memories.
    together: list[str] = Field(default_factory=list)
    problem: str = ""  # for `unsupported`: a key of PROBLEMS

    @property
    def supported(self) -> bool:
        return self.verdict == "supported" and bool(self.by or self.together)


def rejection_reason(verdict: ClaimVerdict) -> str:
    problem = verdict.problem if verdict.problem in PROBLEMS else "unsaid"
    return f"the judge found it unsupported by its memories: {problem} ({PROBLEMS[problem]})"
