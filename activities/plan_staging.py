"""The plan staging table: where plans, their resolution and section drafts wait between activities.

Workflow history carries only a plan's id; the planner stages the plan here, the resolver adds
its resolution, the section writer its drafts, and apply reads them all back and marks the plan
applied with its result — which is also how a retried apply knows it has nothing left to do.
Every read is scoped by (tenant, owner), so an id of another scope is simply not found.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection
from temporalio.exceptions import ApplicationError

from activities import error_types
from domain.compile_messages import Scope
from domain.plan import Plan


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


async def staged_plan(conn: AsyncConnection, plan_id: UUID, scope: Scope) -> Any:
    """The staged plan row (plan, memory_ids, status); a plan of another scope is not found."""
    row = (await conn.execute(text("""
        SELECT plan, memory_ids, status FROM wiki_compile_plans
        WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner
    """), {"id": plan_id, "tenant": scope.tenant, "owner": scope.owner})).one_or_none()
    if row is None:
        raise ApplicationError(f"plan {plan_id} is not a plan of {scope.tenant}/{scope.owner}",
                               type=error_types.SCOPE_VIOLATION, non_retryable=True)
    return row


async def store_resolution(conn: AsyncConnection, plan_id: UUID, document: dict[str, Any]) -> None:
    await conn.execute(text("""
        UPDATE wiki_compile_plans SET resolved = CAST(:doc AS jsonb), status = 'resolved', updated_at = now()
        WHERE id = :id AND status <> 'applied'
    """), {"id": plan_id, "doc": json.dumps(document)})


async def lock_resolved_plan(conn: AsyncConnection, plan_id: UUID, scope: Scope) -> Any:
    """The resolved plan row (resolved, status, result), locked until the apply's transaction ends."""
    row = (await conn.execute(text("""
        SELECT resolved, status, result FROM wiki_compile_plans
        WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner FOR UPDATE
    """), {"id": plan_id, "tenant": scope.tenant, "owner": scope.owner})).one_or_none()
    if row is None or row.resolved is None:
        raise ApplicationError(f"plan {plan_id} was not resolved for {scope.tenant}/{scope.owner}",
                               type=error_types.SCOPE_VIOLATION, non_retryable=True)
    return row


async def section_drafts(conn: AsyncConnection, plan_id: UUID) -> dict[str, str]:
    rows = await conn.execute(text("SELECT task_key, body_md FROM wiki_compile_section_drafts WHERE plan_id = :id"),
                              {"id": plan_id})
    return {row.task_key: row.body_md for row in rows}


async def mark_applied(conn: AsyncConnection, plan_id: UUID, result_json: str) -> None:
    await conn.execute(text("""
        UPDATE wiki_compile_plans SET status = 'applied', result = CAST(:result AS jsonb), updated_at = now()
        WHERE id = :id
    """), {"id": plan_id, "result": result_json})
