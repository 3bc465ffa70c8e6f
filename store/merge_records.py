"""Resolution decisions on record: what the resolver merged, what the judge answered, and why.

The resolver (store/plan_resolution.py) collects a `MergeRecord` for every merge a confident rung
made and every ambiguous pair it met (with the judge's answer and the evidence it was shown, or
"unjudged"); the apply step keeps them in `wiki_merge_decisions` (`record_merge_decisions`), in the
same transaction as the batch, so they outlive the run's staging rows. `decisions_for_page` reads a
page's record back: `wiki page merges TYPE/SLUG` and the page's JSON show it.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.merge_questions import MergeDecision, MergeRecord, MergeSide
from domain.resolution import NameSet, Verdict
from domain.resolved_plan import ResolvedPlan

NameKey = tuple[str, ...]  # a proposal's names as written, title first
# Evidence the judge sees of a proposal: its section bodies, each cut to this many characters.
PROPOSAL_EVIDENCE_CHARS = 400
_RECORD_NAMESPACE = uuid.UUID("0b6f3c52-3f0e-4c55-9d7e-6a2f1c9e4d07")


@dataclass(frozen=True)
class Proposal:
    """A proposed page (a new page or a promotion) as the ladder and the judge see it."""

    type: str
    slug: str
    title: str
    aliases: tuple[str, ...]  # as written
    summary: str | None
    bodies: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()  # the batch (or held) memories it cites

    @property
    def names(self) -> NameKey:
        return (self.title, *self.aliases)

    def name_set(self) -> NameSet:
        return NameSet(type=self.type, names=list(self.names), summary=self.summary)

    def side(self) -> MergeSide:
        return MergeSide(title=self.title, type=self.type, aliases=list(self.aliases), summary=self.summary,
                         evidence=[body[:PROPOSAL_EVIDENCE_CHARS] for body in self.bodies if body.strip()])


def merge_record(proposal_type: str, proposal_slug: str, names: NameKey, candidate_id: str, verdict: Verdict,
                 decision: MergeDecision | None) -> MergeRecord:
    """The record of one pair: a confident rung's merge (`verdict.confident`), else the judge's answer
    with its evidence, else "unjudged" (which never merges)."""
    if verdict.confident:
        return MergeRecord(proposal_type=proposal_type, proposal_slug=proposal_slug, proposal_names=list(names),
                           candidate_page_id=candidate_id, rung=verdict.rung.value, detail=verdict.detail,
                           decided_by="ladder", same=True, reason=f"the names meet on the {verdict.rung.value} rung")
    return MergeRecord(proposal_type=proposal_type, proposal_slug=proposal_slug, proposal_names=list(names),
                       candidate_page_id=candidate_id, rung=verdict.rung.value, detail=verdict.detail,
                       decided_by="judge" if decision is not None else "unjudged",
                       same=bool(decision and decision.same),
                       reason=decision.reason if decision is not None else "nobody judged the pair: it does not merge",
                       evidence=decision.evidence if decision is not None else {})


def planner_record(page_type: str, page_id: str, names: list[str]) -> MergeRecord:
    """The planner's own decision that names it read in the batch are an existing page's (an update
    adding aliases): kept like the resolver's."""
    return MergeRecord(proposal_type=page_type, proposal_slug="update", proposal_names=list(names),
                       candidate_page_id=page_id, rung="planner", decided_by="planner", same=True,
                       reason="the planner put these names on the page")


async def record_merge_decisions(conn: AsyncConnection, tenant: str, owner: str, plan_id: uuid.UUID,
                                 run_id: str | None, resolved: ResolvedPlan) -> int:
    """Keep the plan's resolution decisions; an apply run again writes the same rows once."""
    records = resolved.merge_records
    if not records:
        return 0
    await conn.execute(text("""
        INSERT INTO wiki_merge_decisions (id, tenant_id, owner_id, run_id, plan_id, proposal_type, proposal_slug,
                                          proposal_names, candidate_page_id, rung, detail, decided_by, same,
                                          reason, evidence)
        SELECT r.id, :tenant, :owner, :run, :plan, r.ptype, r.pslug, ARRAY(SELECT jsonb_array_elements_text(r.names)),
               r.candidate, r.rung, r.detail, r.by, r.same, r.reason, r.evidence
        FROM unnest(CAST(:ids AS uuid[]), CAST(:ptypes AS text[]), CAST(:pslugs AS text[]), CAST(:names AS jsonb[]),
                    CAST(:candidates AS uuid[]), CAST(:rungs AS text[]), CAST(:details AS text[]),
                    CAST(:bys AS text[]), CAST(:sames AS boolean[]), CAST(:reasons AS text[]),
                    CAST(:evidence AS jsonb[]))
             AS r(id, ptype, pslug, names, candidate, rung, detail, by, same, reason, evidence)
        ON CONFLICT (id) DO NOTHING
    """), {"tenant": tenant, "owner": owner, "run": run_id, "plan": plan_id,
           "ids": [uuid.uuid5(_RECORD_NAMESPACE, f"{plan_id}\x1f{index}") for index in range(len(records))],
           "ptypes": [r.proposal_type for r in records], "pslugs": [r.proposal_slug for r in records],
           "names": [json.dumps(r.proposal_names) for r in records],
           "candidates": [r.candidate_page_id for r in records], "rungs": [r.rung for r in records],
           "details": [r.detail for r in records], "bys": [r.decided_by for r in records],
           "sames": [r.same for r in records], "reasons": [r.reason for r in records],
           "evidence": [json.dumps(r.evidence) for r in records]})
    return len(records)


class DecisionView(BaseModel):
    """One decision about a page, as `wiki page merges` and the page's JSON show it."""

    proposal: str  # type/slug the plan proposed
    names: list[str]
    rung: str
    detail: str = ""
    decided_by: str
    same: bool
    reason: str = ""
    evidence: dict[str, Any] = Field(default_factory=dict)
    run_id: str | None = None
    decided_at: datetime


async def decisions_for_page(conn: AsyncConnection, tenant: str, owner: str, page_id: str,
                             limit: int = 200) -> list[DecisionView]:
    """The decisions made about a page (as the candidate a proposal was compared with), newest first."""
    rows = await conn.execute(text("""
        SELECT proposal_type, proposal_slug, proposal_names, rung, detail, decided_by, same, reason,
               evidence, run_id, decided_at
        FROM wiki_merge_decisions
        WHERE tenant_id = :tenant AND owner_id = :owner AND candidate_page_id = :page
        ORDER BY decided_at DESC, id LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "page": page_id, "limit": limit})
    return [DecisionView(proposal=f"{row.proposal_type}/{row.proposal_slug}", names=list(row.proposal_names),
                         rung=row.rung, detail=row.detail, decided_by=row.decided_by, same=row.same,
                         reason=row.reason, evidence=row.evidence or {}, run_id=row.run_id,
                         decided_at=row.decided_at) for row in rows]
