"""Running a long-lived process until it is told to stop."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable


async def until_signalled(run: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """`run(stop)`, with `stop` set on SIGTERM or SIGINT, so the process ends cleanly on either."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await run(stop)
