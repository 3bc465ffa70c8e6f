"""Every cache a process keeps that can hold memory text, and how a forget empties them all.

Two kinds:

- caches kept per scope (the evidence of memories, recall's indexes, the servers' kept answers and
  views): each registers itself here (`register`) and drops one scope on `evict_scope`;
- memoised pure functions (`functools.lru_cache` over names, sentences, words): their keys are the
  texts they were called with, memory text among them. They are not kept per scope, so a forget in any
  scope clears every one of them that takes arguments, found by walking the project's loaded modules
  (`memoised`), so that one added later is covered without being listed. A memoised function of no
  arguments holds a loaded resource (a model, a table), never a text: left alone.

`forget_scope` is what a process runs when any process commits a forget of the scope (store/
cache_events.py carries the word across processes; the process that ran the pass runs it too);
`forget_everything` when it may have missed one (its listening connection was lost).
"""

from __future__ import annotations

import gc
import inspect
import sys
import weakref
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

# The folders whose modules may memoise a function of text (the layers).
PROJECT_PACKAGES = ("domain", "messages", "sample", "store", "planners", "activities", "workflows", "runtime",
                    "app", "cli", "servers")


class ScopeCache(Protocol):
    """A cache kept per scope."""

    name: str

    def evict_scope(self, tenant: str, owner: str) -> None: ...

    def clear(self) -> None: ...

    def texts(self) -> Iterable[str]:
        """Every text it holds (keys and values), for an inspection: a census never prints them."""
        ...


_CACHES: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_MODULE_CACHES: list[ScopeCache] = []  # module-level caches, alive as long as their module
EVICTIONS = {"scopes": 0, "everything": 0}  # how often this process emptied its caches, for a census


def register(cache: ScopeCache, *, module_level: bool = False) -> None:
    """Make `cache` follow forgets. An instance is held weakly (it goes when its owner does)."""
    if module_level:
        _MODULE_CACHES.append(cache)
    else:
        _CACHES[id(cache)] = cache


def registered() -> list[ScopeCache]:
    return [*_MODULE_CACHES, *_CACHES.values()]


def memoised() -> list[Any]:
    """The memoised functions of the project's loaded modules that take arguments."""
    found: dict[int, Any] = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".", 1)[0] not in PROJECT_PACKAGES:
            continue
        for value in list(vars(module).values()):
            if callable(value) and hasattr(value, "cache_clear") and hasattr(value, "cache_info") \
                    and _takes_arguments(value):
                found[id(value)] = value
    return list(found.values())


def _takes_arguments(function: Any) -> bool:
    wrapped = getattr(function, "__wrapped__", None)
    try:
        return bool(inspect.signature(wrapped or function).parameters)
    except (TypeError, ValueError):
        return True


def forget_scope(tenant: str, owner: str) -> None:
    """Drop what every cache of this process holds of the scope (and every memoised text)."""
    for cache in registered():
        cache.evict_scope(tenant, owner)
    for function in memoised():
        function.cache_clear()
    EVICTIONS["scopes"] += 1


def forget_everything() -> None:
    for cache in registered():
        cache.clear()
    for function in memoised():
        function.cache_clear()
    EVICTIONS["everything"] += 1


def held_texts() -> Iterator[tuple[str, str]]:
    """(cache name, text) of every text the process's caches hold: the registered caches' texts and
    the memoised functions' keys (read through the garbage collector's view of the cache object)."""
    for cache in registered():
        for value in cache.texts():
            yield cache.name, value
    for function in memoised():
        for referent in gc.get_referents(function):
            if isinstance(referent, dict) and "__wrapped__" not in referent:
                for key in referent:
                    yield function.__qualname__, str(key)
