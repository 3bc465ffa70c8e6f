"""The claim judge's request and reply as the simulator reads and writes them: the one module that
knows the judge prompt's layout (planners/claim_judge_prompt.py publishes it), so a change of that
prompt is adapted here and nowhere else.

The request lists each memory once ("m1: <text>", optionally "m1 [2026-03-05]: <text>" with the day it
happened) and then the claims ("c1. page: <page>" / "  claim: <line>" / "  cites: m1, m2"). The
reply fills the tool's schema: one entry per claim id. Its fields are read from the schema: scores
("accuracy", "relevance", "specificity") and, where the schema asks for them, a verdict
("supported" / "verdict") and what is wrong ("kind", "reason").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from claude_sim.judge import Finding
from claude_sim.reading import Confused

_MEMORY = re.compile(r"^(m\d+)(?: \[(\d{4}-\d{2}-\d{2})\])?: (.*)$", re.MULTILINE)
_CLAIM = re.compile(r"^(c\d+)\. page: (.*)\n\s+claim: (.*)\n\s+cites: (.*)$", re.MULTILINE)


def is_claim_judge(user: str, properties: dict[str, Any]) -> bool:
    """Whether a request is the claim judge's, by its layout or its reply tool."""
    return "Claims to score" in user or "scores" in properties


@dataclass(frozen=True)
class Question:
    id: str
    page: str
    claim: str
    memories: list[str]
    days: list[str | None]


def read_questions(user: str) -> list[Question]:
    head, marker, _ = user.partition("Claims to score:")
    if not marker:
        raise Confused("the judge request lists no claims to score")
    memories = {handle: (text, day) for handle, day, text in _MEMORY.findall(head)}
    questions = []
    for claim_id, page, claim, cites in _CLAIM.findall(user):
        handles = [h.strip() for h in cites.split(",") if h.strip() and h.strip() != "nothing"]
        unknown = [h for h in handles if h not in memories]
        if unknown:
            raise Confused(f"claim {claim_id} cites {unknown} that the request never lists")
        questions.append(Question(id=claim_id, page=page, claim=claim, memories=[memories[h][0] for h in handles],
                                  days=[memories[h][1] or None for h in handles]))
    if not questions:
        raise Confused("the judge request's claims are not in the published layout")
    return questions


def reply(questions: list[Question], findings: list[Finding], schema: dict[str, Any] | None) -> dict[str, Any]:
    """The tool input: under the schema's one array, an entry per claim with the fields it asks for."""
    properties = (schema or {}).get("properties") or {}
    key = next(iter(properties), "scores")
    items = (properties.get(key) or {}).get("items") or {}
    wanted = set((items.get("properties") or {}).keys()) or {"accuracy", "relevance", "specificity"}
    entries = []
    for question, finding in zip(questions, findings, strict=True):
        entry: dict[str, Any] = {"id": question.id}
        if "accuracy" in wanted or "relevance" in wanted or "specificity" in wanted:
            # What the claim states is said (or not) by its memories; it sits on the page it is about,
            # and it is concrete: a careful reader's scores, accuracy carrying the verdict.
            entry.update(accuracy=1.0 if finding.supported else 0.0, relevance=1.0, specificity=1.0)
        if "supported" in wanted:
            entry["supported"] = finding.supported
        if "verdict" in wanted:
            entry["verdict"] = "supported" if finding.supported else "unsupported"
        if "kind" in wanted and not finding.supported:
            entry["kind"] = finding.kind
        if "reason" in wanted:
            entry["reason"] = "said by its memory" if finding.supported else f"{finding.kind}: {finding.detail}"
        entries.append(entry)
    return {key: entries}
