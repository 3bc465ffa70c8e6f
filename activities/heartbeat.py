"""Background heartbeats for activities whose work is one long await (a transaction, an HTTP call).

Without heartbeats Temporal only notices a dead worker when an attempt's start-to-close timeout
expires; with them it notices within the heartbeat timeout and retries the activity elsewhere.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio import activity

T = TypeVar("T")
HEARTBEAT_EVERY_SECONDS = 1.0  # the SDK throttles sends to 0.8 x the heartbeat timeout anyway


async def _beat_forever(every: float) -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(every)


def heartbeating(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Wrap an async activity so it heartbeats while it runs (place it under @activity.defn)."""

    @functools.wraps(method)
    async def wrapper(*args, **kwargs) -> T:
        if activity.info().is_local:
            # A local activity has no heartbeat: the worker keeps its workflow task alive instead, and a
            # dead worker is noticed when that workflow task times out.
            return await method(*args, **kwargs)
        beat = asyncio.create_task(_beat_forever(HEARTBEAT_EVERY_SECONDS))
        try:
            return await method(*args, **kwargs)
        finally:
            beat.cancel()

    return wrapper
