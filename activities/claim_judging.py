"""Asking the claim judge about lines: several lines per call, each cited memory sent once.

Used by the verification gate for a plan's lines (activities/claim_gate.py) and for the section
writer's own lines (activities/writer_gate.py), so both ask the same question the same way.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from domain.claim_judge import ClaimQuestion, ClaimVerdict, JudgedMemory
from domain.context import MemoryRecord
from domain.errors import StepFailed
from domain.evidence import flat_values
from domain.pricing import TokenCounts
from planners.claim_judge_prompt import CLAIMS_PER_CALL
from planners.port import Planner

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JudgedLine:
    """A line for the judge: its text, the page it is on, and the memories it cites."""

    text: str
    page: str
    memories: list[MemoryRecord]


@dataclass
class JudgeRun:
    verdicts: dict[int, ClaimVerdict] = field(default_factory=dict)  # by the line's index
    judged: int = 0  # lines in calls that were answered
    failed: bool = False  # a call failed: its lines stay unverified
    usage: TokenCounts = field(default_factory=TokenCounts)


async def ask_judge(judge: Planner, lines: list[JudgedLine], model_id: str) -> JudgeRun:
    """The judge's verdict on each line, CLAIMS_PER_CALL lines a call; a call that fails leaves its lines
    without a verdict and is counted (its tokens still count when it was paid for)."""
    run = JudgeRun()
    spent: list[TokenCounts] = []
    for start in range(0, len(lines), CLAIMS_PER_CALL):
        chunk = lines[start:start + CLAIMS_PER_CALL]
        questions = [ClaimQuestion(key=str(start + n), text=line.text, page=line.page,
                                   memories=[judged_memory(m) for m in line.memories])
                     for n, line in enumerate(chunk)]
        try:
            reply = await judge.judge_claims(questions, model_id)
        except StepFailed as error:
            log.warning("claim judge failed (%s); %d lines stay unverified", error, len(chunk))
            run.failed = True
            if isinstance(error.spent, TokenCounts):
                spent.append(error.spent)  # a paid-for reply that could not be read still costs its tokens
            continue
        spent.append(reply.usage)
        run.judged += len(chunk)
        for verdict in reply.verdicts:
            if verdict.key.isdigit() and start <= int(verdict.key) < start + len(chunk):
                run.verdicts[int(verdict.key)] = verdict
    if spent:
        run.usage = TokenCounts.model_validate(
            {key: sum(getattr(usage, key) for usage in spent) for key in TokenCounts.model_fields})
    return run


def judged_memory(memory: MemoryRecord) -> JudgedMemory:
    day = memory.created_at.date().isoformat() if memory.created_at is not None else ""
    return JudgedMemory(id=str(memory.id), day=day, text=memory_text(memory))


def memory_text(memory: MemoryRecord) -> str:
    """What the judge reads of a memory: its text, and the values of its metadata (kind, place, city)
    it does not already say, the same evidence the grounding rule reads."""
    values = list(dict.fromkeys(v for v in flat_values(memory.metadata) if v and v not in memory.content))
    return f"{memory.content} [{'; '.join(values)[:200]}]" if values else memory.content
