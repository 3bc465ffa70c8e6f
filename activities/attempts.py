"""Every compile activity attempt that does not complete is written down (store/compile_attempts.py).

A worker interceptor, so every compile activity (regular and local) is covered without each one
knowing: an attempt that raises is recorded as failed (with its error's type), one Temporal cancels
as timed out (the server timed it out: its heartbeat or start-to-close timeout passed, or it no
longer knows the attempt) or cancelled (the workflow asked, or the worker is shutting down); and an
attempt that starts after earlier ones that left no record records them as timed out. The ledger
counts them per run, and the lint names a scope whose compile keeps retrying one step.

Waiting for a Message Batch is not a failure: `llm.poll_message_batch` fails with `BatchNotEnded`
until the batch ends, by design, and those attempts are not recorded.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from activities.common import doing
from domain.errors import BATCH_NOT_ENDED
from messages.compile import Scope, scope_of_workflow_id
from store.compile_attempts import AttemptRecord, record_attempt, record_unreported_attempts

log = logging.getLogger(__name__)
COMPILE_WORKFLOW = "CompileWorkflow"
# A record is written after the attempt's end; it must never hold the worker up for long.
RECORD_TIMEOUT_SECONDS = 10.0


class AttemptLedger(Interceptor):
    """Pass to the worker's `interceptors`: records the compile's incomplete activity attempts."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _RecordedActivity(next, self._engine)


def cancellation_outcome(details: activity.ActivityCancellationDetails | None) -> str:
    """cancelled when the workflow asked (or the worker is shutting down); timed_out when the attempt
    timed out, or the server no longer knows it (its heartbeat or start-to-close timeout passed and
    the worker heard of it at its next heartbeat)."""
    if details is not None and not details.cancel_requested and (details.timed_out or details.not_found):
        return "timed_out"
    return "cancelled"


def error_type(error: BaseException) -> str:
    return (error.type or "ApplicationError") if isinstance(error, ApplicationError) else type(error).__name__


class _RecordedActivity(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, engine: AsyncEngine) -> None:
        super().__init__(next)
        self._engine = engine

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        if info.workflow_type != COMPILE_WORKFLOW or not info.workflow_run_id or not info.workflow_id:
            return await self.next.execute_activity(input)
        scope = getattr(input.args[0], "scope", None) if input.args else None
        record = AttemptRecord(
            scope=scope if isinstance(scope, Scope) else scope_of_workflow_id(info.workflow_id),
            workflow_id=info.workflow_id, run_id=info.workflow_run_id, activity_id=info.activity_id,
            activity_type=info.activity_type, attempt=info.attempt, step=doing(info.activity_type, tuple(input.args)))
        if info.attempt > 1:
            await self._write(record_unreported_attempts, record)
        try:
            return await self.next.execute_activity(input)
        except asyncio.CancelledError:
            await self._write(record_attempt, record, cancellation_outcome(activity.cancellation_details()))
            raise
        except Exception as error:
            if not (isinstance(error, ApplicationError) and error.type == BATCH_NOT_ENDED):
                await self._write(record_attempt, record, "failed", error_type(error))
            raise

    async def _write(self, write: Any, *args: Any) -> None:
        """One short transaction, shielded from the attempt's own cancellation; a failure is logged only:
        counting an attempt never fails one."""
        async def go() -> None:
            async with self._engine.begin() as conn:
                await write(conn, *args)

        try:
            await asyncio.wait_for(asyncio.shield(go()), RECORD_TIMEOUT_SECONDS)
        except Exception as error:  # noqa: BLE001 - see the docstring
            log.warning("could not record a compile activity attempt: %s", error)
