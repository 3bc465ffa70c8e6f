"""A forget's word to every process: drop this scope from your caches.

The pass sends `NOTIFY wiki_forgotten` with the scope in its own transaction: Postgres delivers it at
commit to every session listening, and never for a transaction rolled back. Each long-lived process
(a worker, `wiki serve`, `wiki mcp`) listens on a connection of its own (`listening`) and drops the
scope from its caches (domain/process_caches.py). A process whose listening connection is lost may
miss a notification while it is down, so it empties all its caches each time it (re)connects.
The payload is the scope's two ids, never text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

CHANNEL = "wiki_forgotten"
SEPARATOR = "\x1f"  # a scope part never holds it (domain/memory.py SCOPE_PATTERN)
PING_SECONDS = 30.0  # an idle listening connection is checked this often
RETRY_SECONDS = 1.0
log = logging.getLogger(__name__)


async def notify_forgotten(conn: AsyncConnection, tenant: str, owner: str) -> None:
    """Tell every listening process, at this transaction's commit, that the scope forgot memories."""
    await conn.execute(text("SELECT pg_notify(:channel, :payload)"),
                       {"channel": CHANNEL, "payload": f"{tenant}{SEPARATOR}{owner}"})


@dataclass
class Listener:
    connected: asyncio.Event = field(default_factory=asyncio.Event)  # set while listening
    received: int = 0  # notifications handled
    connections: int = 0  # times it (re)connected


@contextlib.asynccontextmanager
async def listening(engine: AsyncEngine, on_scope: Callable[[str, str], None],
                    on_missed: Callable[[], None]) -> AsyncIterator[Listener]:
    """Run `on_scope(tenant, owner)` for every forget committed anywhere while the block runs, and
    `on_missed()` each time listening (re)starts."""
    state = Listener()
    task = asyncio.create_task(_listen(engine, on_scope, on_missed, state), name="wiki-forget-listener")
    try:
        yield state
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _listen(engine: AsyncEngine, on_scope: Callable[[str, str], None], on_missed: Callable[[], None],
                  state: Listener) -> None:
    while True:
        try:
            await _listen_once(engine, on_scope, on_missed, state)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the database is away: listen again when it is back
            log.warning("not listening for forgets (%s); trying again", type(error).__name__)
        state.connected.clear()
        await asyncio.sleep(RETRY_SECONDS)


async def _listen_once(engine: AsyncEngine, on_scope: Callable[[str, str], None], on_missed: Callable[[], None],
                       state: Listener) -> None:
    async with engine.connect() as conn:
        driver = (await conn.get_raw_connection()).driver_connection
        assert driver is not None
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def received(_conn: object, _pid: int, _channel: str, payload: str) -> None:
            queue.put_nowait(payload)

        def lost(_conn: object) -> None:
            queue.put_nowait(None)

        await driver.add_listener(CHANNEL, received)
        driver.add_termination_listener(lost)
        try:
            state.connections += 1
            on_missed()  # whatever was committed while nobody listened here
            state.connected.set()
            while True:
                try:
                    payload = await asyncio.wait_for(queue.get(), timeout=PING_SECONDS)
                except TimeoutError:
                    await driver.execute("SELECT 1")  # raises when the connection is gone
                    continue
                if payload is None:
                    return
                tenant, _, owner = payload.partition(SEPARATOR)
                on_scope(tenant, owner)
                state.received += 1
        finally:
            state.connected.clear()
            driver.remove_termination_listener(lost)
            with contextlib.suppress(Exception):
                await driver.remove_listener(CHANNEL, received)
