"""The claim judge's request and reply as the simulator reads and writes them: the one module that
knows the judge prompt's layout (planners/claim_judge_prompt.py publishes it), so a change of that
prompt is adapted here and nowhere else.

The request lists each memory once ("m1 (2026-03-05): <text>", or "m2 (undated): <text>"), then the
claims, one a line ("c1. page: <page> | cites: m1, m2 | claim: <line>"). The reply puts every claim
id in one place: under "supported" with the cited memories that each say all of it on their own,
under "unsupported" with the problem's name, or under "unsure". The simulated reader never answers
"together": a line no one memory says whole is, to it, two memories merged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from claude_sim.judge import Finding
from claude_sim.reading import Confused

_MEMORY = re.compile(r"^(m\d+) \((\d{4}-\d{2}-\d{2}|undated)\): (.*)$", re.MULTILINE)
_CLAIM = re.compile(r"^(c\d+)\. page: (.*?) \| cites: (.*?) \| claim: (.*)$", re.MULTILINE)
# The reader's names for what is wrong, in the prompt's vocabulary of problems.
_PROBLEM = {"roles": "actor", "unsupported": "unsaid"}
_DAY = re.compile(r"^\d{4}-\d{2}(?:-\d{2})?$")


def is_claim_judge(user: str, properties: dict[str, Any]) -> bool:
    """Whether a request is the claim judge's, by its reply tool or its layout."""
    return "unsupported" in properties or ("\nClaims:\n" in user and user.startswith("Memories:"))


@dataclass(frozen=True)
class Question:
    id: str
    page: str
    claim: str
    memories: list[str]
    days: list[str | None]
    handles: list[str]


def read_questions(user: str) -> list[Question]:
    head, marker, _ = user.partition("\nClaims:\n")
    if not marker or not head.startswith("Memories:"):
        raise Confused("the judge request is not 'Memories:' then 'Claims:'")
    memories = {handle: (text, None if day == "undated" else day) for handle, day, text in _MEMORY.findall(head)}
    questions = []
    for claim_id, page, cites, claim in _CLAIM.findall(user):
        handles = [h.strip() for h in cites.split(",") if h.strip()]
        unknown = [h for h in handles if h not in memories]
        if unknown or not handles:
            raise Confused(f"claim {claim_id} cites {unknown or 'nothing'}, which the request does not list")
        questions.append(Question(id=claim_id, page=page, claim=claim, memories=[memories[h][0] for h in handles],
                                  days=[memories[h][1] for h in handles], handles=handles))
    if not questions:
        raise Confused("the judge request's claims are not in the published layout")
    return questions


def problem(finding: Finding) -> str:
    """The prompt's name for what the reader found wrong."""
    if finding.kind == "number" and _DAY.match(finding.detail.strip()):
        return "date"
    return _PROBLEM.get(finding.kind, finding.kind or "unsaid")


def reply(questions: list[Question], supporters: list[list[str]], findings: list[Finding]) -> dict[str, Any]:
    """The tool input: each claim under "supported" (the memories that each say it whole) or under
    "unsupported" with its problem."""
    supported: dict[str, list[str]] = {}
    unsupported: dict[str, str] = {}
    for question, handles, finding in zip(questions, supporters, findings, strict=True):
        if handles:
            supported[question.id] = handles
        else:
            unsupported[question.id] = problem(finding)
    return {"supported": supported, "together": {}, "unsupported": unsupported, "unsure": []}
