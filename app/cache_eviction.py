"""Every long-lived process follows forgets: its caches drop a scope the moment any process commits a
forget of it (store/cache_events.py carries the word, domain/process_caches.py knows the caches)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncEngine

from domain.process_caches import forget_everything, forget_scope
from store.cache_events import Listener, listening


@contextlib.asynccontextmanager
async def forgets_followed(engine: AsyncEngine) -> AsyncIterator[Listener]:
    async with listening(engine, forget_scope, forget_everything) as listener:
        yield listener
