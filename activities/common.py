"""What every compile and lint activity shares: heartbeats while it runs, and failures by name.

Without heartbeats Temporal only notices a dead worker when an attempt's start-to-close timeout
expires; with them it notices within the heartbeat timeout and retries the activity elsewhere. Each
heartbeat carries one line saying what the activity does: a pending activity's summary is not part
of what Temporal reports about it, its last heartbeat details are, so the UI's pending-activity card
shows that line.
Store and planner code raise `domain.errors.StepFailed`; here it becomes the Temporal application
error of the same name that the workflows' retry policies match. Any other validation error leaves
as one that quotes none of the values it rejected.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from domain.errors import StepFailed
from domain.reply_errors import reply_problem

T = TypeVar("T")
HEARTBEAT_EVERY_SECONDS = 1.0  # the SDK throttles sends to 0.8 x the heartbeat timeout anyway


def as_application_error(error: StepFailed) -> ApplicationError:
    spent = error.spent.model_dump() if isinstance(error.spent, BaseModel) else None
    return ApplicationError(
        error.message, *([spent] if spent is not None else []),
        type=error.kind, non_retryable=not error.retryable, next_retry_delay=error.retry_after,
        category=ApplicationErrorCategory.BENIGN if error.benign else ApplicationErrorCategory.UNSPECIFIED,
    )


_DOING = {
    "compile.start_run": "opening the run's ledger row",
    "compile.finish_run": "closing the run's ledger row",
    "compile.worker_capacity": "reporting what this worker runs at once",
    "llm.plan_batch": "planning a batch",
    "llm.write_section": "writing a section",
    "llm.submit_plan_batch": "submitting a plan to a Message Batch",
    "llm.poll_message_batch": "polling a Message Batch",
    "llm.collect_plan_batch": "collecting a batched plan",
    "aggregation.plan": "planning the aggregation pass",
    "lint.run_checks": "counting lint findings",
    "lint.prune_ledger": "pruning old ledger rows",
    "lint.record": "recording the lint report",
    "forget.prepare": "preparing a forget pass",
    "llm.rederive_section": "re-deriving a section's lines after a forget",
    "forget.apply": "applying a forget pass",
    "llm.erase_message_batches": "deleting the scope's Message Batches at the provider",
}


def doing(activity_type: str, args: tuple) -> str:
    """One line on what this activity does, for its heartbeat details."""
    request = args[0] if args else None
    line = _DOING.get(activity_type, activity_type)
    scope = getattr(request, "scope", None)
    if scope is not None:
        line += f" of {scope.tenant}/{scope.owner}"
    memory_ids = getattr(request, "memory_ids", None)
    if memory_ids:
        line += f" ({len(memory_ids)} memories)"
    task_key = getattr(request, "task_key", None)
    if task_key:
        line += f" ({task_key})"
    return line


async def _beat_forever(every: float, details: str) -> None:
    while True:
        activity.heartbeat(details)
        await asyncio.sleep(every)


def compile_step(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Wrap an async activity (place it under @activity.defn): heartbeats, and StepFailed by name."""

    @functools.wraps(method)
    async def wrapper(*args, **kwargs) -> T:
        # A local activity has no heartbeat: the worker keeps its workflow task alive instead, and a
        # dead worker is noticed when that workflow task times out.
        info = activity.info()
        beat = None if info.is_local else asyncio.create_task(
            _beat_forever(HEARTBEAT_EVERY_SECONDS, doing(info.activity_type, args[1:])))
        try:
            return await method(*args, **kwargs)
        except StepFailed as error:
            raise as_application_error(error) from None
        except ValidationError as error:
            # Pydantic's message quotes the values it rejected, which may be memory or reply text: the
            # failure (logged, kept in history) says where and what kind, never the value.
            raise ApplicationError(f"invalid {error.title}: {reply_problem(error)}", type="ValidationError") from None
        finally:
            if beat is not None:
                beat.cancel()

    return wrapper
