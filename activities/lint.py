"""Activities of the nightly lint: the checks over every scope, ledger pruning, the lint's ledger row,
and waking the compiles of scopes with promotion candidates.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from uuid import UUID

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.client import Client

from activities.common import compile_step
from domain.lint import (
    LintChecks,
    LintChecksInput,
    PruneLedgerInput,
    RecordLintInput,
    WakeCompilesInput,
    WakeCompilesResult,
)
from messages.compile import compile_workflow_id
from store import lint_checks

# Signal-with-start one scope's compile with trigger `lint` and its promotion candidates:
# (client, tenant, owner, mention ids). The worker's composition root supplies it, with the options
# (caps, model, task queue) of the worker's settings.
CompileWaker = Callable[[Client, str, str, list[UUID]], Awaitable[object]]


class Lint:
    def __init__(self, engine: AsyncEngine, wake_compile: CompileWaker) -> None:
        self._engine = engine
        self._wake_compile = wake_compile

    @activity.defn(name="lint.run_checks")
    @compile_step
    async def run_checks(self, page: LintChecksInput) -> LintChecks:
        return await lint_checks.check_scopes(self._engine, page)

    @activity.defn(name="lint.prune_ledger")
    @compile_step
    async def prune_ledger(self, request: PruneLedgerInput) -> int:
        """Ledger rows older than the retention; a run still open keeps its row."""
        return await lint_checks.prune_ledger(self._engine, request.retention_days)

    @activity.defn(name="lint.record")
    @compile_step
    async def record(self, request: RecordLintInput) -> None:
        await lint_checks.record_lint_run(self._engine, request)

    @activity.defn(name="lint.wake_compiles")
    async def wake_compiles(self, request: WakeCompilesInput) -> WakeCompilesResult:
        """Signal-with-start each scope's compile with trigger `lint` and its promotion candidates.

        Workflow code cannot call the Temporal client, and a child workflow would need the compile's
        own id, which a running compile already holds. Signal-with-start from an activity does what
        retain does: it wakes the running compile (the candidates join its next batch) or starts one.
        The heartbeat records how many scopes are done, so a retried attempt continues after them;
        waking one scope twice is harmless anyway (the compile ignores mention ids it already holds,
        and a promoted mention is no longer open).
        """
        info = activity.info()
        done = int(info.heartbeat_details[0]) if info.heartbeat_details else 0
        client = activity.client()
        result = WakeCompilesResult()
        for index, wake in enumerate(request.wakes):
            if index >= done:
                await self._wake_compile(client, wake.tenant, wake.owner, list(wake.mention_ids))
            activity.heartbeat(index + 1)
            result.workflow_ids.append(compile_workflow_id(wake.tenant, wake.owner))
        return result
