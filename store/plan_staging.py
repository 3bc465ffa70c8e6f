"""The plan staging table: where plans, their resolution and section drafts wait between activities.

Workflow history carries only a plan's id; the planner stages the plan here, the resolver adds
its resolution, the section writer its drafts, and apply reads them all back and marks the plan
applied with its result — which is also how a retried apply knows it has nothing left to do.
Every read is scoped by (tenant, owner), so an id of another scope is simply not found.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.errors import ScopeViolation
from domain.merge_questions import MergeDecision
from domain.plan import Plan
from domain.resolved_plan import ProposedClaim, ResolvedPlan, SectionTask
from messages.compile import Scope

PlanStatus = Literal["planned", "resolved", "applied"]


async def stage_plan(conn: AsyncConnection, plan_id: UUID, scope: Scope, run_id: str, memory_ids: list[UUID],
                     plan: Plan) -> None:
    """Store (or, for a retried planner, replace) a plan that has not been applied yet."""
    await conn.execute(text("""
        INSERT INTO wiki_compile_plans (id, tenant_id, owner_id, run_id, memory_ids, plan)
        VALUES (:id, :tenant, :owner, :run_id, :memory_ids, CAST(:plan AS jsonb))
        ON CONFLICT (id) DO UPDATE SET plan = excluded.plan, resolved = NULL, status = 'planned', updated_at = now()
        WHERE wiki_compile_plans.status <> 'applied'
    """), {"id": plan_id, "tenant": scope.tenant, "owner": scope.owner, "run_id": run_id,
           "memory_ids": list(memory_ids), "plan": plan.model_dump_json()})


# Where a resolution keeps what its resolver returned, beside the resolved plan's own keys.
RESOLVE_RESULT_KEY = "resolve_result"
# Where the merge judge's decisions wait for the resolver (and stay, beside the resolution, after it).
MERGE_DECISIONS_KEY = "merge_decisions"


async def staged_plan(conn: AsyncConnection, plan_id: UUID, scope: Scope) -> Any:
    """The staged plan row (plan, memory_ids, status, resolved); a plan of another scope is not found."""
    row = (await conn.execute(text("""
        SELECT plan, memory_ids, status, resolved FROM wiki_compile_plans
        WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner
    """), {"id": plan_id, "tenant": scope.tenant, "owner": scope.owner})).one_or_none()
    if row is None:
        raise ScopeViolation(f"plan {plan_id} is not a plan of {scope.tenant}/{scope.owner}")
    return row


def earlier_resolution(row: Any) -> dict[str, Any] | None:
    """What resolving this staged plan returned before, if it was resolved (or even applied) already.

    A resolver runs again when its workflow task failed after it had run — possibly after the plan
    was applied in the same task. Resolving again against the changed wiki would give a different
    answer (its new pages now exist), so the first answer is returned instead.
    """
    if row.status in ("resolved", "applied") and isinstance(row.resolved, dict):
        return row.resolved.get(RESOLVE_RESULT_KEY)
    return None


async def store_merge_decisions(conn: AsyncConnection, plan_id: UUID, scope: Scope,
                                decisions: list[MergeDecision]) -> None:
    """The judge's decisions on the plan's ambiguous pairs, kept in the (still empty) resolution column
    until the resolver reads them; a plan resolved already keeps the decisions it was resolved with."""
    await conn.execute(text("""
        UPDATE wiki_compile_plans SET resolved = jsonb_build_object(CAST(:key AS text), CAST(:doc AS jsonb)),
                                      updated_at = now()
        WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner AND status = 'planned'
    """), {"id": plan_id, "tenant": scope.tenant, "owner": scope.owner, "key": MERGE_DECISIONS_KEY,
           "doc": json.dumps([d.model_dump(mode="json") for d in decisions])})


def merge_decisions(row: Any) -> dict[str, MergeDecision]:
    """The judge's decisions stored with a staged plan, by pair key (none when no judge ran)."""
    stored = row.resolved.get(MERGE_DECISIONS_KEY) if isinstance(row.resolved, dict) else None
    decisions = [MergeDecision.model_validate(d) for d in stored or [] if isinstance(d, dict)]
    return {d.key: d for d in decisions}


async def store_resolution(conn: AsyncConnection, plan_id: UUID, resolved: ResolvedPlan,
                           result: BaseModel, decisions: list[MergeDecision] | None = None) -> None:
    """The resolved plan (what the writers and apply read), the resolver's result, and the judge's
    decisions it was resolved with."""
    stored = {**resolved.model_dump(mode="json"), RESOLVE_RESULT_KEY: result.model_dump(mode="json"),
              MERGE_DECISIONS_KEY: [d.model_dump(mode="json") for d in decisions or []]}
    await conn.execute(text("""
        UPDATE wiki_compile_plans SET resolved = CAST(:doc AS jsonb), status = 'resolved', updated_at = now()
        WHERE id = :id AND status <> 'applied'
    """), {"id": plan_id, "doc": json.dumps(stored)})


@dataclass(frozen=True)
class LockedPlan:
    """A resolved plan's row, locked until the apply's transaction ends."""

    status: PlanStatus
    result: dict[str, Any] | None  # what applying it returned, once it is applied
    resolved: ResolvedPlan
    run_id: str | None = None


async def lock_resolved_plan(conn: AsyncConnection, plan_id: UUID, scope: Scope) -> LockedPlan:
    """The resolved plan, validated, with its status and apply result; its row stays locked until the
    apply's transaction ends."""
    row = (await conn.execute(text("""
        SELECT resolved, status, result, run_id FROM wiki_compile_plans
        WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner FOR UPDATE
    """), {"id": plan_id, "tenant": scope.tenant, "owner": scope.owner})).one_or_none()
    if row is None or row.resolved is None:
        raise ScopeViolation(f"plan {plan_id} was not resolved for {scope.tenant}/{scope.owner}")
    return LockedPlan(status=row.status, result=row.result, resolved=ResolvedPlan.model_validate(row.resolved),
                      run_id=row.run_id)


async def section_drafts(conn: AsyncConnection, plan_id: UUID) -> dict[str, str]:
    rows = await conn.execute(text("SELECT task_key, body_md FROM wiki_compile_section_drafts WHERE plan_id = :id"),
                              {"id": plan_id})
    return {row.task_key: row.body_md for row in rows}


async def draft_line_claims(conn: AsyncConnection, plan_id: UUID) -> dict[str, ProposedClaim]:
    """The section writers' own lines the claim judge passed, by claim key (activities/writer_gate.py)."""
    rows = await conn.execute(text("SELECT line_claims FROM wiki_compile_section_drafts WHERE plan_id = :id"),
                              {"id": plan_id})
    out: dict[str, ProposedClaim] = {}
    for row in rows:
        for key, claim in (row.line_claims or {}).items():
            found = ProposedClaim.model_validate(claim)
            known = out.setdefault(key, found)
            if known is not found:
                known.judged_by = list(dict.fromkeys([*known.judged_by, *found.judged_by]))
                known.judged_together = list(dict.fromkeys([*known.judged_together, *found.judged_together]))
                known.refs = list(dict.fromkeys([*known.refs, *found.refs]))
    return out


async def mark_applied(conn: AsyncConnection, plan_id: UUID, result_json: str) -> None:
    await conn.execute(text("""
        UPDATE wiki_compile_plans SET status = 'applied', result = CAST(:result AS jsonb), updated_at = now()
        WHERE id = :id
    """), {"id": plan_id, "result": result_json})


async def section_task(conn: AsyncConnection, plan_id: UUID, scope: Scope, task_key: str) -> SectionTask:
    """One section task of a resolved plan; only that entry is read, since a batch runs a dozen or
    more writers at once and each parsing the whole resolved plan cost more than its database round trip."""
    task = (await conn.execute(text("""
        SELECT resolved -> 'tasks' -> CAST(:key AS text) FROM wiki_compile_plans
        WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner
    """), {"id": plan_id, "tenant": scope.tenant, "owner": scope.owner, "key": task_key})).scalar_one_or_none()
    if not isinstance(task, dict):
        raise ScopeViolation(f"section task {task_key} of plan {plan_id} not found")
    return SectionTask.model_validate(task)


async def store_section_draft(conn: AsyncConnection, plan_id: UUID, task_key: str, body_md: str,
                              line_claims: dict[str, ProposedClaim] | None = None) -> None:
    """A writer's draft, with the claim judge's verdicts on its own lines (by claim key)."""
    claims = {key: claim.model_dump(mode="json") for key, claim in (line_claims or {}).items()}
    await conn.execute(text("""
        INSERT INTO wiki_compile_section_drafts (plan_id, task_key, body_md, line_claims)
        VALUES (:plan, :key, :body, CAST(:claims AS jsonb))
        ON CONFLICT (plan_id, task_key) DO UPDATE SET body_md = excluded.body_md, line_claims = excluded.line_claims
    """), {"plan": plan_id, "key": task_key, "body": body_md, "claims": json.dumps(claims)})


async def plan_run_id(conn: AsyncConnection, plan_id: UUID, scope: Scope) -> str | None:
    """The compile run that staged the plan (None for a plan of no run, or none of this scope)."""
    return (await conn.execute(text("""
        SELECT run_id FROM wiki_compile_plans WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner
    """), {"id": plan_id, "tenant": scope.tenant, "owner": scope.owner})).scalar_one_or_none()
