"""Answers of the agent server's most frequent reads, kept per server process under their scope's
revision (`ReadCache`), replayed by the request guard without running the route.

A scope's revision (store/scope_revisions.py) changes at the commit of every write to what these
reads are made of: pages, sections, aliases, section sources, claims and claim sources, whatever
wrote them (a compile, a forget, a correction, an operator). A request reads the revision first, on
the connection it reads the page with, then either replays the answer kept under that same revision
or runs the route and keeps its answer under it. The answer is read after the revision, so it is at
least as new as the revision it is kept under; a request that sees a newer revision never gets an
older answer. Only reads whose answer depends on nothing but the stored wiki and the request are
kept: a page by type and slug and changes (not related pages, whose recency moves with the clock,
nor search and recall, which rank memories too and read recall's own indexes kept under the scope's
revision, nor anything that shows memory text or memories not compiled yet). Entries are keyed by
scope, path and query string, so a scope never sees another's answer, and the guard has checked the
token, its rights and its rate before any lookup.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from starlette.types import Message, Scope, Send

from app.reads import ReadScope
from domain.process_caches import register

# GET routes whose answers are kept: a page by TYPE/SLUG (any window, confidence, as_of, history) and
# changes.
CACHED_READS = re.compile(r"^/v1/(?:changes|pages/(?:entity|topic|decision)/[^/]+)$")
# An answer larger than this share of the cache is not kept (it would push out many others).
LARGEST_SHARE = 16


class _Key(NamedTuple):
    tenant: str
    owner: str
    path: str
    query: bytes


@dataclass(frozen=True, slots=True)
class Answer:
    revision: int
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


class ReadCache:
    """Answers by (scope, path, query string), least recently used dropped past `max_bytes`."""

    name = "agent read answers"

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[_Key, Answer] = OrderedDict()
        self._bytes = 0
        register(self)  # a forget drops the scope's answers in every process (they hold page text)

    @staticmethod
    def applies(method: str, path: str) -> bool:
        return method == "GET" and CACHED_READS.match(path) is not None

    @staticmethod
    def key(scope: ReadScope, request: Scope) -> _Key:
        return _Key(scope.tenant, scope.owner, request["path"], request.get("query_string", b""))

    def get(self, key: _Key, revision: int) -> Answer | None:
        answer = self._entries.get(key)
        if answer is None or answer.revision != revision:
            return None
        self._entries.move_to_end(key)
        return answer

    def put(self, key: _Key, answer: Answer) -> None:
        size = len(answer.body) + len(key.path) + len(key.query)
        if size * LARGEST_SHARE > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= len(old.body) + len(key.path) + len(key.query)
        self._entries[key] = answer
        self._bytes += size
        while self._bytes > self.max_bytes and self._entries:
            dropped_key, dropped = self._entries.popitem(last=False)
            self._bytes -= len(dropped.body) + len(dropped_key.path) + len(dropped_key.query)

    def __len__(self) -> int:
        return len(self._entries)

    def evict_scope(self, tenant: str, owner: str) -> None:
        for key in [k for k in list(self._entries) if k.tenant == tenant and k.owner == owner]:
            dropped = self._entries.pop(key, None)
            if dropped is not None:
                self._bytes -= len(dropped.body) + len(key.path) + len(key.query)

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0

    def texts(self) -> Iterable[str]:
        for key, answer in list(self._entries.items()):
            yield key.query.decode(errors="replace")
            yield answer.body.decode(errors="replace")


async def replay(send: Send, answer: Answer) -> None:
    await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers})
    await send({"type": "http.response.body", "body": answer.body})


def recording(send: Send, keep: list[Message]) -> Send:
    """`send` that also keeps the messages of the answer, for `answer_of`."""

    async def recorded(message: Message) -> None:
        keep.append(message)
        await send(message)

    return recorded


def answer_of(messages: list[Message], revision: int) -> Answer | None:
    """The complete 200 answer the messages make, or None (another status, or not whole)."""
    if not messages or messages[0]["type"] != "http.response.start" or messages[0]["status"] != 200:
        return None
    body = b"".join(m.get("body", b"") for m in messages[1:] if m["type"] == "http.response.body")
    if messages[-1]["type"] != "http.response.body" or messages[-1].get("more_body", False):
        return None
    return Answer(revision, 200, list(messages[0].get("headers", [])), body)
