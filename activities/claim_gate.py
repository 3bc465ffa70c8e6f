"""The verification gate: every line a plan proposes is checked before the plan is staged.

It runs inside the planning activity (a regular activity on the model queue), so it needs no step
of its own in the workflow. Each line is settled by `domain/claim_checks.py` `check_line`: a line
the compiler computes and whose figures recount from its memories is derived; a line that is word
for word whole sentences of a cited memory is quoted; a line with a date, number or name none of
its memories (nor the page's names) holds is rejected, with no model call (the grounding rule,
domain/grounding.py, `GATE_RULE`). Every other line goes to the claim judge when the planner has a
model (`judges_claims`): several lines per call, each memory sent once. A line the judge says its
memories support is verified, with the memories it named; one it says they do not support is
rejected; one it is unsure of, or leaves out, stays unverified, as does every such line offline and
every line of a judge call that failed (counted). Rejected lines leave the plan (a section left
with no line leaves it too) and are recorded in `wiki_rejected_claims` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from activities.claim_judging import JudgedLine, ask_judge
from domain.claim_checks import check_line
from domain.claim_judge import ClaimVerdict, rejection_reason
from domain.claims import DERIVED, QUOTED, UNVERIFIED, VERIFIED
from domain.context import MemoryRecord
from domain.evidence import Evidence, evidence_of
from domain.grounding import GATE_RULE, grounding_reason
from domain.plan import LineSources, NewPage, NewSection, Plan, SectionUpdate
from domain.plan_claims import lines_with_refs
from domain.pricing import TokenCounts
from messages.compile import Scope
from planners.cpu_pool import off_loop
from planners.port import Planner
from store.claims import RejectedClaim
from store.memories import load_memories

# The most lines one plan sends to the judge (in calls of CLAIMS_PER_CALL); any beyond stay unverified.
MAX_JUDGED_CLAIMS = 600


@dataclass
class _Line:
    section: NewSection | SectionUpdate
    page: str  # the page's name as the judge sees it
    page_ref: str  # page id or type/slug, for the record
    names: list[str]
    line: LineSources
    evidence: list[Evidence]
    rejected: str = ""
    stage: str = ""
    verdict: dict[str, str] | None = None


@dataclass
class GateOutcome:
    plan: Plan
    rejected: list[RejectedClaim] = field(default_factory=list)
    judged: int = 0
    judge_failed: bool = False
    # References to no memory of the scope made by the lines of sections the gate removed whole: the
    # resolver never sees them, so they are counted here, one per reference as the resolver counts.
    dropped_refs: int = 0
    usage: TokenCounts = field(default_factory=TokenCounts)


def _body(section: NewSection | SectionUpdate) -> str:
    return section.proposed_body_md if isinstance(section, SectionUpdate) else section.body_md


def _set_body(section: NewSection | SectionUpdate, body: str) -> None:
    if isinstance(section, SectionUpdate):
        section.proposed_body_md = body
    else:
        section.body_md = body


async def _page_names(conn: AsyncConnection, scope: Scope, page_ids: list[str]) -> dict[str, list[str]]:
    valid = [p for p in page_ids if _is_uuid(p)]
    if not valid:
        return {}
    rows = await conn.execute(text("""
        SELECT p.id::text AS id, p.title, coalesce(array_agg(a.alias) FILTER (WHERE a.alias IS NOT NULL), '{}') AS aliases
        FROM wiki_pages p LEFT JOIN wiki_page_aliases a ON a.page_id = p.id
        WHERE p.id = ANY(CAST(:ids AS uuid[])) AND p.tenant_id = :tenant AND p.owner_id = :owner
        GROUP BY p.id
    """), {"ids": valid, "tenant": scope.tenant, "owner": scope.owner})
    return {row.id: [row.title, *row.aliases] for row in rows}


def _is_uuid(value: str) -> bool:
    try:
        UUID(value)
    except ValueError:
        return False
    return True


def _sections(plan: Plan, names: dict[str, list[str]]) -> list[tuple[NewSection | SectionUpdate, str, str, list[str]]]:
    out: list[tuple[NewSection | SectionUpdate, str, str, list[str]]] = []
    for update in plan.pageUpdates:
        page_names = [*names.get(update.pageId, []), *update.aliases]
        title = page_names[0] if page_names else update.pageId
        out += [(section, title, update.pageId, page_names) for section in update.sections]
    pages: list[NewPage] = [*plan.newPages, *(p.newPage for p in plan.sectionPromotions)]
    for page in pages:
        out += [(section, page.title, f"{page.type}/{page.slug}", [page.title, *page.aliases])
                for section in page.sections]
    for promotion in plan.promotions:
        out += [(section, promotion.title, f"{promotion.type}/{promotion.slug}", [promotion.title])
                for section in promotion.sections]
    return out


async def gate_plan(engine: AsyncEngine, judge: Planner | None, scope: Scope, plan: Plan, model_id: str) -> GateOutcome:
    """The plan with only the lines that passed, each with its narrowed citations and status."""
    plan = plan.model_copy(deep=True)
    async with engine.connect() as conn:
        names = await _page_names(conn, scope, [u.pageId for u in plan.pageUpdates])
        sections = _sections(plan, names)
        wanted = [ref for section, *_ in sections
                  for ref in [*section.source_refs, *(r for line in section.line_sources for r in line.refs)]]
        memories = await load_memories(conn, scope.tenant, scope.owner, [r for r in wanted if _is_uuid(r.strip())])
    by_id = {str(m.id): m for m in memories}
    lines, to_judge = await off_loop(_ground, sections, by_id)  # computed line by line: off the event loop
    outcome = GateOutcome(plan=plan)
    if judge is not None and judge.judges_claims and to_judge:
        await _judge(judge, to_judge[:MAX_JUDGED_CLAIMS], by_id, model_id, outcome)
    _rewrite_sections(lines, outcome, set(by_id))
    return outcome


def _ground(sections: list[tuple[NewSection | SectionUpdate, str, str, list[str]]],
            by_id: dict[str, MemoryRecord]) -> tuple[list[_Line], list[_Line]]:
    """The deterministic check of every line (a), each line's status and narrowed citations set; the
    plan's lines, and those left for the judge."""
    evidence = {key: evidence_of(key, m.content, m.metadata, m.created_at, m.participants) for key, m in by_id.items()}
    lines: list[_Line] = []
    for section, page, page_ref, page_names in sections:
        for line in lines_with_refs(_body(section), section.source_refs, section.line_sources):
            cited = [evidence[r.strip().lower()] for r in line.refs if r.strip().lower() in evidence]
            lines.append(_Line(section=section, page=page, page_ref=page_ref, names=page_names, line=line,
                               evidence=cited))
    rule = GATE_RULE
    to_judge: list[_Line] = []
    for item in lines:
        if not item.evidence:
            item.rejected, item.stage = "cites no memory of its scope", "grounding"
            continue
        check = check_line(item.line.text, item.evidence, item.names, rule)
        item.line.refs = check.refs
        if check.outcome == "rejected":
            item.rejected, item.stage = grounding_reason(check.missing), "grounding"
        elif check.outcome == "derived":
            item.line.status, item.line.kind = DERIVED, "derived"
        elif check.outcome == "quoted":
            item.line.status = QUOTED
        else:
            item.line.status = UNVERIFIED
            to_judge.append(item)
    return lines, to_judge


async def _judge(judge: Planner, items: list[_Line], memories: dict[str, MemoryRecord], model_id: str,
                 outcome: GateOutcome) -> None:
    """The judge's word on `items`, each shown the memories it cites (narrowed to those holding its
    terms); a line left without a verdict stays unverified."""
    run = await ask_judge(judge, [JudgedLine(text=item.line.text, page=item.page,
                                             memories=[memories[r] for r in item.line.refs if r in memories])
                                  for item in items], model_id)
    outcome.judged, outcome.judge_failed, outcome.usage = run.judged, run.failed, run.usage
    for index, verdict in run.verdicts.items():
        _settle(items[index], verdict)


def _settle(item: _Line, verdict: ClaimVerdict) -> None:
    if verdict.verdict == "unsupported":
        item.rejected, item.stage = rejection_reason(verdict), "judge"
        item.verdict = {"verdict": "unsupported", "problem": verdict.problem}
    elif verdict.supported:
        item.line.status = VERIFIED
        item.line.judged_by, item.line.judged_together = list(verdict.by), list(verdict.together)
        item.line.refs = list(dict.fromkeys([*verdict.by, *verdict.together])) or item.line.refs


def _rewrite_sections(lines: list[_Line], outcome: GateOutcome, memories: set[str]) -> None:
    by_section: dict[int, list[_Line]] = {}
    for item in lines:
        by_section.setdefault(id(item.section), []).append(item)
        if item.rejected:
            outcome.rejected.append(RejectedClaim(
                page_ref=item.page_ref, section_slug=item.section.slug, text=item.line.text,
                cited=list(item.line.refs), stage=item.stage, reason=item.rejected, verdict=item.verdict))
    emptied: set[int] = set()
    for items in by_section.values():
        if not any(item.rejected for item in items):
            items[0].section.line_sources = [item.line for item in items]
            continue
        section = items[0].section
        kept = [item for item in items if not item.rejected]
        _set_body(section, "\n".join(item.line.text for item in kept))
        section.line_sources = [item.line for item in kept]
        # The section cites what its kept lines cite, and what none of its proposed lines cited (a
        # reference to no memory of the scope stays, for the resolver to drop and count).
        rejected_refs = {e.memory_id for item in items if item.rejected for e in item.evidence}
        kept_refs = {e.memory_id for item in kept for e in item.evidence if e.memory_id in item.line.refs}
        section.source_refs = [r for r in section.source_refs
                               if r.strip().lower() in kept_refs or r.strip().lower() not in rejected_refs]
        if not kept:
            emptied.add(id(section))
            outcome.dropped_refs += sum(1 for item in items for r in item.line.refs if r.strip().lower() not in memories)
    if emptied:
        _drop_sections(outcome.plan, emptied)


def _drop_sections(plan: Plan, emptied: set[int]) -> None:
    """A section none of whose lines passed is not written (a page proposal keeps its other sections)."""
    for update in plan.pageUpdates:
        update.sections = [s for s in update.sections if id(s) not in emptied]
    for page in [*plan.newPages, *(p.newPage for p in plan.sectionPromotions)]:
        page.sections = [s for s in page.sections if id(s) not in emptied]
    for promotion in plan.promotions:
        promotion.sections = [s for s in promotion.sections if id(s) not in emptied]
