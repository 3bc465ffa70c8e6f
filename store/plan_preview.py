"""The wiki as a resolved plan will leave it, for planning the next batch before that plan is applied.

Batch n + 1 is planned while batch n's sections are written (workflows/compile_overlap.py). What
its planner is shown must not depend on when the writers finish, so it is defined as: the wiki as
it stands (every earlier batch applied) with batch n's resolved plan applied on top, every section
that batch n's section writer rewrites still at the body it had before batch n (a section new in
batch n that goes to the writer: the planner's proposal). Everything else batch n writes — its new
pages, their sections written directly, aliases, renames and merges, mentions and promotions,
links, touch times — is decided by the resolver, so it is exactly what applying batch n writes.

The preview applies the plan with `apply_resolved_plan` itself, in the caller's transaction, which
the caller rolls back: nothing of it is ever committed.
"""

from __future__ import annotations

from uuid import UUID

from sqlalchemy.ext.asyncio import AsyncConnection

from domain.resolved_plan import ResolvedPlan
from messages.compile import Scope
from store.plan_apply import apply_resolved_plan
from store.plan_staging import staged_plan


def standing_drafts(plan: ResolvedPlan) -> dict[str, str]:
    """For each writer task, the body its section has until the writer's draft is applied."""
    return {key: task.existing_body if task.existing_body is not None else task.proposed_body
            for key, task in plan.tasks.items()}


async def preview_resolved_plan(conn: AsyncConnection, scope: Scope, plan_id: UUID, *,
                                deterministic_linking: bool) -> bool:
    """Apply the resolved, unapplied plan `plan_id` in `conn`'s transaction (to be rolled back) with
    its writer sections at their standing bodies. False, with nothing done, when the plan is applied
    already (then the wiki as it stands is the one to read) or was never resolved."""
    row = await staged_plan(conn, plan_id, scope)
    if row.status != "resolved" or not isinstance(row.resolved, dict):
        return False
    plan = ResolvedPlan.model_validate(row.resolved)
    await apply_resolved_plan(conn, scope.tenant, scope.owner, plan, standing_drafts(plan),
                              deterministic_linking=deterministic_linking)
    return True
