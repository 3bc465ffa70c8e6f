"""Views computed from a whole scope, kept in the serving process and served again until the scope
changes.

A kept value is keyed on (tenant, owner, what) and holds the scope revision it was read at
(`store.scope_revisions`): a read first takes the scope's current revision (one indexed row), and
serves the kept value only when the revision is the same, so a view is never older than the last
committed write. Entries are bounded (least recently used go first); each process keeps its own.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from domain.process_caches import register
from store.scope_revisions import scope_revision

T = TypeVar("T")
DEFAULT_ENTRIES = 512


@dataclass
class ScopeViewCache:
    entries: int = DEFAULT_ENTRIES
    hits: int = 0
    misses: int = 0
    _kept: OrderedDict[tuple[str, str, Hashable], tuple[int, Any]] = field(default_factory=OrderedDict)
    name = "web views"

    def __post_init__(self) -> None:
        register(self)  # a forget drops the scope's views in every process (they hold page text)

    def evict_scope(self, tenant: str, owner: str) -> None:
        for key in [k for k in list(self._kept) if k[0] == tenant and k[1] == owner]:
            self._kept.pop(key, None)

    def clear(self) -> None:
        self._kept.clear()

    def texts(self) -> Iterable[str]:
        for _, value in list(self._kept.values()):
            yield repr(value)

    async def view(self, conn: AsyncConnection, tenant: str, owner: str, what: Hashable,
                   compute: Callable[[], Awaitable[T]]) -> T:
        """The value `compute` reads for `what` in the scope, computed once per scope revision."""
        revision = await scope_revision(conn, tenant, owner)
        key = (tenant, owner, what)
        kept = self._kept.get(key)
        if kept is not None and kept[0] == revision:
            self._kept.move_to_end(key)
            self.hits += 1
            return kept[1]
        self.misses += 1
        value = await compute()
        self._kept[key] = (revision, value)
        self._kept.move_to_end(key)
        while len(self._kept) > self.entries:
            self._kept.popitem(last=False)
        return value
