"""The section writer's draft passes the grounding rule and, for its own lines, the claim judge,
before it is stored.

A model writer's own lines (`domain/writer_grounding.py`) keep only the names, numbers and dates of
what it was shown; a line with any other is dropped from the draft and recorded among the scope's
rejected claims (stage `grounding`), as the plan's lines are. Each remaining line of its own that is
neither a quote of the task's memories nor a derived line goes to the claim judge, as a plan's line
does (when the planner has a model): a line the judge says the memories do not support is dropped
and recorded (stage `judge`); the memories it says support a line are stored with the draft, for
apply to give the line its status and confidence. A writer that rebuilds a section in code from all
its memories (the scripted planner's condenser) derives its lines by construction and is not
checked. A draft left empty falls back to the shown body with the proposal appended, as a writer
reply that is not usable does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from sqlalchemy.ext.asyncio import AsyncConnection

from activities.claim_judging import JudgedLine, ask_judge
from domain.claim_checks import derived_holds, quoted_in
from domain.claim_judge import rejection_reason
from domain.claim_text import body_lines, claim_key
from domain.context import MemoryRecord
from domain.evidence import evidence_of
from domain.pricing import TokenCounts
from domain.resolved_plan import ProposedClaim, SectionTask
from domain.writer_grounding import check_written_body
from messages.compile import Scope
from planners.port import Planner
from planners.section_edits import append_lines
from store.claims import RejectedClaim, record_rejected_claims
from store.plan_staging import plan_run_id


@dataclass
class CheckedDraft:
    body: str
    rejected: list[RejectedClaim] = field(default_factory=list)
    # The writer's own lines the judge said the memories support, by claim key.
    judged: dict[str, ProposedClaim] = field(default_factory=dict)
    usage: TokenCounts = field(default_factory=TokenCounts)


def checked_draft(task: SectionTask, body: str, cited: list[MemoryRecord]) -> tuple[str, list[RejectedClaim]]:
    """The draft without the writer's ungrounded lines, and those lines as rejected claims."""
    memories = [evidence_of(str(m.id), m.content, m.metadata, m.created_at, m.participants) for m in cited]
    checked = check_written_body(body, [task.existing_body, task.proposed_body], memories, [task.page_title])
    rejected = [RejectedClaim(page_ref=task.page_id, section_slug=task.slug, text=r.text,
                              cited=[str(m.id) for m in cited], stage="grounding", reason=r.reason)
                for r in checked.rejected]
    return (checked.body or append_lines(task.existing_body, task.proposed_body)), rejected


async def judged_draft(judge: Planner, task: SectionTask, body: str, cited: list[MemoryRecord],
                       model_id: str) -> CheckedDraft:
    """The grounded draft, its own lines through the claim judge (see the module's docstring)."""
    body, rejected = checked_draft(task, body, cited)
    out = CheckedDraft(body=body, rejected=rejected)
    if not judge.judges_claims:
        return out
    shown = {claim_key(line) for text in (task.existing_body, task.proposed_body) for line in body_lines(text)}
    evidence = [evidence_of(str(m.id), m.content, m.metadata, m.created_at, m.participants) for m in cited]
    own = [line for line in body_lines(body) if claim_key(line) not in shown
           and not quoted_in(line, evidence) and not derived_holds(line, evidence)]
    if not own:
        return out
    run = await ask_judge(judge, [JudgedLine(text=line, page=task.page_title, memories=cited) for line in own],
                          model_id)
    out.usage = run.usage
    dropped: set[str] = set()
    for index, verdict in run.verdicts.items():
        line = own[index]
        if verdict.verdict == "unsupported":
            dropped.add(line)
            out.rejected.append(RejectedClaim(
                page_ref=task.page_id, section_slug=task.slug, text=line, cited=[str(m.id) for m in cited],
                stage="judge", reason=rejection_reason(verdict),
                verdict={"verdict": "unsupported", "problem": verdict.problem}))
        elif verdict.supported:
            out.judged[claim_key(line)] = ProposedClaim(refs=[*verdict.by, *verdict.together], status="verified",
                                                        judged_by=verdict.by, judged_together=verdict.together)
    if dropped:
        kept = "\n".join(line for line in body.splitlines() if line.strip() not in dropped).strip("\n")
        out.body = kept or append_lines(task.existing_body, task.proposed_body)
    return out


async def record_writer_rejections(conn: AsyncConnection, scope: Scope, plan_id: UUID, rejected: list[RejectedClaim]) -> None:
    if rejected:
        await record_rejected_claims(conn, scope.tenant, scope.owner, await plan_run_id(conn, plan_id, scope),
                                     plan_id, rejected)
