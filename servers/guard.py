"""What every request to an agent-facing server (`wiki serve`, `wiki mcp --http`) passes before a
route sees it, as one ASGI middleware (`RequestGuard`), in this order:

1. A bearer token, or 401, before anything else (the body is never read for a stranger).
2. A declared body length within WIKI_HTTP_MAX_BODY_KIB, or 413 (411 without one), before a byte
   of it is read; the body is counted again as it is read.
3. A turn (`Admission`): at most WIKI_HTTP_MAX_IN_FLIGHT requests are served at once, retains at most
   WIKI_HTTP_MAX_CONCURRENT_RETAINS of them; up to WIKI_HTTP_QUEUE_LIMIT more wait, each at most
   WIKI_HTTP_QUEUE_TIMEOUT_SECONDS, or WIKI_HTTP_QUEUE_TARGET_MS once the queue has stayed non-empty
   for a tenth of a second. Any other request is answered 503 with Retry-After at once: an
   overloaded server sheds load quickly instead of answering everything slowly.
4. The token looked up (`TokenCache`: a lookup is trusted for WIKI_HTTP_TOKEN_CACHE_SECONDS), 401
   when it is unknown, revoked or expired. A request never holds two pooled connections: a read route
   reads on the guard's connection (the one the token was looked up on, if it was; one checkout per
   request, in autocommit), a retain gets any such connection back into the pool before it takes its own.
5. The token's rate (`RateLimiter`, a token bucket per token in this process), or 429 with Retry-After.
6. The token's rights for the route (a read token cannot retain), or 403.

The caller is then put in the request's state (`caller_of`) for the route. Every refusal is JSON
`{"error": "<one sentence>"}` and is counted in `ServerCounters`, which an operator token reads.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import math
import time
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from uuid import UUID

from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.reads import ReadScope, wiki_revision
from app.tokens import TokenScope, scope_of_token
from domain.tokens import Rights, allows, token_hash
from runtime.settings import Settings
from servers.read_cache import ReadCache, answer_of, recording, replay

BUSY_MESSAGE = "the server is busy; retry after the time in Retry-After"
DATABASE_ERRORS = (PoolTimeout, DBAPIError, OSError)


class Refusal(Exception):
    """A request answered before its route: status, one sentence, headers."""

    def __init__(self, status: int, message: str, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.reason, self.headers = status, message, reason, headers or {}


def busy(retry_after: float, reason: str = "shed") -> Refusal:
    return Refusal(503, BUSY_MESSAGE, reason, {"Retry-After": str(max(1, math.ceil(retry_after)))})


@dataclass(frozen=True)
class Caller:
    scope: ReadScope
    token_id: UUID
    rights: str
    # The request's connection, for a route that reads (None for a write route, which takes its own).
    conn: AsyncConnection | None = None


# The caller of the request being served, for code the guard does not call directly (the MCP SDK's
# token verifier runs inside the request and reuses the guard's lookup instead of making its own).
CURRENT_CALLER: contextvars.ContextVar[tuple[str, TokenScope] | None] = contextvars.ContextVar(
    "current_caller", default=None)


def caller_of(scope: Scope) -> Caller:
    return scope["state"]["caller"]


# ------------------------------------------------------------------------------------------ counters


@dataclass
class ServerCounters:
    """Counts since the process started, by outcome; Prometheus' text format for an operator."""

    responses: Counter = field(default_factory=Counter)  # by status code
    refused: Counter = field(default_factory=Counter)  # by reason
    read_cache: Counter = field(default_factory=Counter)  # "hit" / "miss" of reads the cache applies to
    in_flight: int = 0
    waiting: int = 0

    def prometheus(self) -> str:
        lines = ["# HELP wiki_http_responses_total Responses sent, by status code.",
                 "# TYPE wiki_http_responses_total counter"]
        lines += [f'wiki_http_responses_total{{status="{status}"}} {count}'
                  for status, count in sorted(self.responses.items())]
        lines += ["# HELP wiki_http_refused_total Requests refused before their route, by reason.",
                  "# TYPE wiki_http_refused_total counter"]
        lines += [f'wiki_http_refused_total{{reason="{reason}"}} {count}'
                  for reason, count in sorted(self.refused.items())]
        lines += ["# HELP wiki_http_read_cache_total Cacheable reads answered from the read cache (hit) or "
                  "by their route (miss).", "# TYPE wiki_http_read_cache_total counter"]
        lines += [f'wiki_http_read_cache_total{{outcome="{outcome}"}} {count}'
                  for outcome, count in sorted(self.read_cache.items())]
        lines += ["# HELP wiki_http_in_flight Requests being served now.", "# TYPE wiki_http_in_flight gauge",
                  f"wiki_http_in_flight {self.in_flight}",
                  "# HELP wiki_http_waiting Requests waiting for a turn now.", "# TYPE wiki_http_waiting gauge",
                  f"wiki_http_waiting {self.waiting}"]
        return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ admission


class Lane:
    """At most `limit` holders at once; up to `queue_limit` more wait, each at most `timeout` seconds,
    or only `target` seconds while the lane is overloaded.

    A request that finds the queue full, or waits out its time, raises the 503 refusal at once.

    Overloaded means the queue has not been empty at any moment of the last `interval` seconds (the
    queue discipline Facebook's servers call adaptive CoDel): a burst still queues for up to
    `timeout`, but under sustained overload a request waits at most `target` before it is shed, so
    the requests that are served keep their latency instead of all of them being answered slowly.
    """

    def __init__(self, limit: int, queue_limit: int, timeout: float, counters: ServerCounters | None = None,
                 target: float | None = None, interval: float = 0.1,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._free = asyncio.Semaphore(limit)
        self.queue_limit, self.timeout = queue_limit, timeout
        self.target = timeout if target is None else min(target, timeout)
        self.interval, self.clock = interval, clock
        self.waiting = 0
        self._last_empty = clock()
        self._counters = counters

    def overloaded(self) -> bool:
        return self.waiting > 0 and self.clock() - self._last_empty > self.interval

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        if self._free.locked():
            if self.waiting >= self.queue_limit:
                raise busy(self.timeout)
            wait = self.target if self.overloaded() else self.timeout
            if self.waiting == 0:
                self._last_empty = self.clock()
            self.waiting += 1
            if self._counters:
                self._counters.waiting += 1
            try:
                await asyncio.wait_for(self._free.acquire(), wait)
            except TimeoutError:
                raise busy(self.timeout) from None
            finally:
                self.waiting -= 1
                if self._counters:
                    self._counters.waiting -= 1
                if self.waiting == 0:
                    self._last_empty = self.clock()
        else:
            await self._free.acquire()
        try:
            yield
        finally:
            self._free.release()


class Admission:
    """The lanes of one server process: every request, and retains among them."""

    def __init__(self, settings: Settings, counters: ServerCounters) -> None:
        timeout, target = settings.http_queue_timeout_seconds, settings.http_queue_target_ms / 1000
        self.all = Lane(settings.http_max_in_flight, settings.http_queue_limit, timeout, counters, target=target)
        # Retains wait their full time: a burst of writes is stored a little later rather than refused,
        # and the turns they then take among all requests are bounded by the lane above.
        self.writes = Lane(settings.http_max_concurrent_retains, settings.http_queue_limit, timeout)

    @asynccontextmanager
    async def turn(self, write: bool) -> AsyncIterator[None]:
        if write:
            # A retain first waits among retains, so waiting writes never hold a turn reads need.
            async with self.writes.turn(), self.all.turn():
                yield
        else:
            async with self.all.turn():
                yield


# ------------------------------------------------------------------------------------------ rate


class RateLimiter:
    """A token bucket per API token: `burst` requests at once, refilled at `rate` per second.

    Buckets live in this process (a server started with several processes grants each its own rate);
    the least recently used are forgotten past `max_buckets`, which only ever gives a token a full
    bucket back.
    """

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic,
                 max_buckets: int = 100_000) -> None:
        self.rate, self.burst, self.clock, self.max_buckets = rate, burst, clock, max_buckets
        self._buckets: OrderedDict[UUID, tuple[float, float]] = OrderedDict()

    def wait_needed(self, key: UUID) -> float:
        """0 when the request may go now (and it is counted); else the seconds until it could."""
        now = self.clock()
        level, last = self._buckets.pop(key, (float(self.burst), now))
        level = min(float(self.burst), level + (now - last) * self.rate)
        if level >= 1:
            self._buckets[key] = (level - 1, now)
            wait = 0.0
        else:
            self._buckets[key] = (level, now)
            wait = (1 - level) / self.rate
        while len(self._buckets) > self.max_buckets:
            self._buckets.popitem(last=False)
        return wait


# ------------------------------------------------------------------------------------------ token cache


class TokenCache:
    """Live tokens this process looked up, trusted for `seconds` after their lookup.

    Most requests come from tokens seen a moment ago; trusting a lookup for a few seconds saves a
    query on almost every request. The bound is what revocation costs: a revoked token keeps working
    in a process that looked it up for at most `seconds`. Unknown tokens are never kept (a token just
    created works at once, and a stranger's guesses fill nothing), an expiry is checked on every use,
    and entries are keyed by the token's SHA-256, never the token itself. At most `max_entries` are
    kept, the least recently used forgotten first (which only costs a lookup).
    """

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic,
                 max_entries: int = 10_000) -> None:
        self.seconds, self.clock, self.max_entries = seconds, clock, max_entries
        self._entries: OrderedDict[str, tuple[float, TokenScope]] = OrderedDict()

    def get(self, token: str) -> TokenScope | None:
        if self.seconds <= 0:
            return None
        key = token_hash(token)
        entry = self._entries.get(key)
        if entry is None:
            return None
        if self.clock() - entry[0] >= self.seconds:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def put(self, token: str, found: TokenScope) -> None:
        if self.seconds <= 0:
            return
        key = token_hash(token)
        self._entries[key] = (self.clock(), found)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


# ------------------------------------------------------------------------------------------ the middleware


TokenLookup = Callable[[AsyncConnection, str], Awaitable[TokenScope | None]]


def bearer_token(scope: Scope) -> str | None:
    for name, value in scope.get("headers") or []:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            token = token.strip()
            return token if scheme.lower() == "bearer" and token else None
    return None


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers") or []:
        if name == b"content-length":
            return int(value) if value.isdigit() else -1
    return None


async def send_refusal(send: Send, refusal: Refusal) -> None:
    body = json.dumps({"error": refusal.message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(name.lower().encode(), value.encode()) for name, value in refusal.headers.items()]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


UNAUTHENTICATED = {"WWW-Authenticate": "Bearer"}


@dataclass(frozen=True)
class GuardRules:
    """Which paths need a token, and which (method, path) need more than `read`."""

    protected_prefix: str
    needs: dict[tuple[str, str], Rights] = field(default_factory=dict)
    write_routes: frozenset[tuple[str, str]] = frozenset()


class RequestGuard:
    def __init__(self, app: ASGIApp, *, engine: AsyncEngine, settings: Settings, rules: GuardRules,
                 counters: ServerCounters, lookup: TokenLookup = scope_of_token, share_connection: bool = False,
                 admission: Admission | None = None, limiter: RateLimiter | None = None,
                 read_cache: ReadCache | None = None) -> None:
        self.app, self.engine, self.lookup, self.rules, self.counters = app, engine, lookup, rules, counters
        # Whether a read route reads on the guard's connection (`Caller.conn`) rather than its own.
        self.share_connection = share_connection
        self.max_body = settings.http_max_body_bytes
        self.admission = admission or Admission(settings, counters)
        self.limiter = limiter or RateLimiter(settings.http_rate_per_second, settings.http_rate_burst)
        self.tokens = TokenCache(settings.http_token_cache_seconds)
        self.read_engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        # Answers of the reads it applies to, under their scope's revision (reads on the guard's connection only).
        self.read_cache = read_cache if share_connection else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started: list[int] = []

        async def counted_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                started.append(message["status"])
                self.counters.responses[message["status"]] += 1
            await send(message)

        try:
            await self._guarded(scope, receive, counted_send)
        except Refusal as refusal:
            if started:
                raise
            self.counters.refused[refusal.reason] += 1
            await send_refusal(counted_send, refusal)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        path, method = scope["path"], scope["method"]
        protected = path.startswith(self.rules.protected_prefix)
        token = bearer_token(scope)
        if protected and token is None:
            raise Refusal(401, "missing bearer token (Authorization: Bearer <token>)", "unauthenticated",
                          UNAUTHENTICATED)
        if method in ("POST", "PUT", "PATCH"):
            declared = _declared_length(scope)
            if declared is None or declared < 0:
                raise Refusal(411, "the request body must declare its Content-Length", "no_length")
            if declared > self.max_body:
                raise Refusal(413, f"request body over {self.max_body} bytes; send fewer memories per call",
                              "too_large")
        if not protected:
            await self.app(scope, self._bounded(receive), send)
            return
        assert token is not None
        write = (method, path) in self.rules.write_routes
        reads_here = self.share_connection and not write
        async with self.admission.turn(write):
            self.counters.in_flight += 1
            conn: AsyncConnection | None = None
            try:
                found = self.tokens.get(token)
                if found is None:
                    conn = await self._connection()
                    found = await self._look_up(conn, token)
                caller = self._authenticate(token, found)
                self._admit(caller, method, path)
                if reads_here:
                    conn = conn or await self._connection()
                    caller = Caller(caller.scope, caller.token_id, caller.rights, conn)
                elif conn is not None:
                    await conn.close()  # given back before the route takes its own
                    conn = None
                scope.setdefault("state", {})["caller"] = caller
                if caller.conn is not None and self.read_cache is not None and self.read_cache.applies(method, path):
                    await self._read_through_cache(scope, receive, send, caller)
                else:
                    await self.app(scope, self._bounded(receive), send)
            finally:
                if conn is not None:
                    await conn.close()
                self.counters.in_flight -= 1

    async def _connection(self) -> AsyncConnection:
        # Autocommit: a read is one or a few statements, each with its own snapshot as in a read
        # committed transaction, without the BEGIN and ROLLBACK round trips around them.
        conn = self.read_engine.connect()
        try:
            await conn.start()
        except PoolTimeout:
            raise busy(1, "pool_exhausted") from None
        except (DBAPIError, OSError):
            raise busy(5, "database_unavailable") from None
        return conn

    async def _read_through_cache(self, scope: Scope, receive: Receive, send: Send, caller: Caller) -> None:
        """The answer kept under the scope's revision of now, or the route's, kept under it."""
        assert self.read_cache is not None and caller.conn is not None
        try:
            revision = await wiki_revision(caller.conn, caller.scope)
        except (DBAPIError, OSError):
            raise busy(5, "database_unavailable") from None
        key = self.read_cache.key(caller.scope, scope)
        answer = self.read_cache.get(key, revision)
        if answer is not None:
            self.counters.read_cache["hit"] += 1
            await replay(send, answer)
            return
        self.counters.read_cache["miss"] += 1
        messages: list[Message] = []
        await self.app(scope, self._bounded(receive), recording(send, messages))
        answer = answer_of(messages, revision)
        if answer is not None:
            self.read_cache.put(key, answer)

    def _admit(self, caller: Caller, method: str, path: str) -> None:
        wait = self.limiter.wait_needed(caller.token_id)
        if wait > 0:
            raise Refusal(429, "this token is over its request rate; retry after the time in Retry-After",
                          "rate_limited", {"Retry-After": str(max(1, math.ceil(wait)))})
        needed = self.rules.needs.get((method, path), "read")
        if not allows(caller.rights, needed):
            raise Refusal(403, f"this {caller.rights} token cannot do this (it needs {needed} rights: "
                               f"`wiki token create --rights {needed}`)", "forbidden")

    async def _look_up(self, conn: AsyncConnection, token: str) -> TokenScope | None:
        try:
            found = await self.lookup(conn, token)
        except (DBAPIError, OSError):
            raise busy(5, "database_unavailable") from None
        if found is not None:
            self.tokens.put(token, found)
        return found

    def _authenticate(self, token: str, found: TokenScope | None) -> Caller:
        if found is None:
            raise Refusal(401, "unknown or revoked token", "unauthenticated", UNAUTHENTICATED)
        if found.expired or (found.expires_at is not None and found.expires_at <= datetime.now(UTC)):
            raise Refusal(401, "this token has expired; create a new one with `wiki token create`", "expired",
                          UNAUTHENTICATED)
        CURRENT_CALLER.set((token, found))
        return Caller(ReadScope(tenant=found.tenant, owner=found.owner), found.token_id, found.rights)

    def _bounded(self, receive: Receive) -> Receive:
        """`receive` that refuses a body growing past the limit (the declared length is checked first;
        this holds whatever the framing)."""
        read = 0

        async def bounded() -> Message:
            nonlocal read
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
                if read > self.max_body:
                    raise Refusal(413, f"request body over {self.max_body} bytes; send fewer memories per call",
                                  "too_large")
            return message

        return bounded
