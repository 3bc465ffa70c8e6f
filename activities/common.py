"""What every compile and lint activity shares: heartbeats while it runs, and failures by name.

Without heartbeats Temporal only notices a dead worker when an attempt's start-to-close timeout
expires; with them it notices within the heartbeat timeout and retries the activity elsewhere.
Store and planner code raise `domain.errors.StepFailed`; here it becomes the Temporal application
error of the same name that the workflows' retry policies match.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel
from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from domain.errors import StepFailed

T = TypeVar("T")
HEARTBEAT_EVERY_SECONDS = 1.0  # the SDK throttles sends to 0.8 x the heartbeat timeout anyway


def as_application_error(error: StepFailed) -> ApplicationError:
    spent = error.spent.model_dump() if isinstance(error.spent, BaseModel) else None
    return ApplicationError(
        error.message, *([spent] if spent is not None else []),
        type=error.kind, non_retryable=not error.retryable, next_retry_delay=error.retry_after,
        category=ApplicationErrorCategory.BENIGN if error.benign else ApplicationErrorCategory.UNSPECIFIED,
    )


async def _beat_forever(every: float) -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(every)


def compile_step(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Wrap an async activity (place it under @activity.defn): heartbeats, and StepFailed by name."""

    @functools.wraps(method)
    async def wrapper(*args, **kwargs) -> T:
        # A local activity has no heartbeat: the worker keeps its workflow task alive instead, and a
        # dead worker is noticed when that workflow task times out.
        beat = None if activity.info().is_local else asyncio.create_task(_beat_forever(HEARTBEAT_EVERY_SECONDS))
        try:
            return await method(*args, **kwargs)
        except StepFailed as error:
            raise as_application_error(error) from None
        finally:
            if beat is not None:
                beat.cancel()

    return wrapper
