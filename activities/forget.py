"""The forget step's activities: prepare a pass, re-derive a section's lines, apply the pass.

The compile workflow runs them between batches when a forget or an edit is pending (workflows/
compile_forget.py). Each loads what it needs from Postgres by id and stores what it produces there:
history carries the pass id, section ids, counts and token counts, never memory text.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity

from activities.common import compile_step
from domain.guards import strip_wikilinks
from domain.process_caches import forget_scope
from messages.forget import ForgetApplied, ForgetPassInput, ForgetPrepared, RederiveInput, RederiveResult
from planners.rederive import Rederiver
from store.compile_runs import database_now
from store.forget import prepare_pass, store_rederived, writer_task
from store.forget_apply import apply_pass


class Forgetting:
    def __init__(self, engine: AsyncEngine, rederiver: Rederiver) -> None:
        self._engine = engine
        self._rederiver = rederiver

    @activity.defn(name="forget.prepare")
    @compile_step
    async def prepare(self, request: ForgetPassInput) -> ForgetPrepared:
        scope = request.scope
        async with self._engine.begin() as conn:
            requests, writer_sections = await prepare_pass(conn, scope.tenant, scope.owner, request.pass_id)
        return ForgetPrepared(pass_id=request.pass_id, requests=len(requests.request_ids),
                              memories=len(requests.forgotten | requests.edited),
                              rederive_section_ids=writer_sections)

    @activity.defn(name="llm.rederive_section")
    @compile_step
    async def rederive_section(self, request: RederiveInput) -> RederiveResult:
        scope = request.scope
        async with self._engine.connect() as conn:
            task = await writer_task(conn, scope.tenant, scope.owner, request.pass_id, request.section_id)
        reply = await self._rederiver.rederive(task, request.model_id)
        async with self._engine.begin() as conn:
            await store_rederived(conn, scope.tenant, scope.owner, request.pass_id, request.section_id,
                                  strip_wikilinks(reply.body))
        return RederiveResult(section_id=request.section_id, usage=reply.usage)

    @activity.defn(name="forget.apply")
    @compile_step
    async def apply(self, request: ForgetPassInput) -> ForgetApplied:
        scope = request.scope
        async with self._engine.begin() as conn:
            applied = await apply_pass(conn, scope.tenant, scope.owner, request.pass_id, scope.workflow_id,
                                       await database_now(conn), request.cost_usd)
        # Committed: this process's caches drop the scope now (the others on the pass's notification).
        forget_scope(scope.tenant, scope.owner)
        return applied
