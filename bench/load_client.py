"""The load benchmark's HTTP client: keep-alive HTTP/1.1 connections on asyncio protocols, responses
parsed by httptools (the C parser uvicorn itself uses).

A load generator that shares two cores with the server it measures must cost far less per request
than the server: httpcore's pool scans every connection for every request, which at a few hundred
connections cost the generator more CPU per request than the server spent answering. Here a request
is one write of pre-encoded bytes and one parse of the answer; idle connections wait in a stack, so
a request takes the most recently used one in constant time.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlencode, urlsplit

import httptools


class ConnectionLost(Exception):
    """The connection closed, or broke, before its answer was complete."""


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.BaseTransport | None = None
        self.answer: asyncio.Future[tuple[int, str | None]] | None = None
        self.retry_after: str | None = None
        self.open = False

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport, self.open = transport, True

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(ConnectionLost(f"unparsable answer: {error}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        self._fail(ConnectionLost("the server closed the connection"))

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"retry-after":
            self.retry_after = value.decode()

    def on_message_complete(self) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_result((self.parser.get_status_code(), self.retry_after))
        if not self.parser.should_keep_alive():
            self.close()

    def send(self, request: bytes) -> asyncio.Future[tuple[int, str | None]]:
        self.retry_after = None
        self.answer = asyncio.get_running_loop().create_future()
        self.transport.write(request)  # type: ignore[union-attr]  # set by connection_made
        return self.answer

    def close(self) -> None:
        self.open = False
        if self.transport is not None:
            self.transport.close()

    def _fail(self, error: Exception) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_exception(error)


class LoadClient:
    """At most `connections` connections to one server; a request waits for an idle one when all are
    busy. `request` returns (status, Retry-After) or raises TimeoutError / ConnectionLost / OSError."""

    def __init__(self, base: str, connections: int, timeout: float) -> None:
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.host_header = f"{self.host}:{self.port}".encode()
        self.timeout = timeout
        self._idle: list[_Connection] = []
        self._slots = asyncio.Semaphore(connections)
        self._all: set[_Connection] = set()

    def encode(self, method: str, path: str, params: dict | None, body: dict | None, token: str) -> bytes:
        target = f"{path}?{urlencode(params)}" if params else path
        content = json.dumps(body).encode() if body is not None else b""
        head = (f"{method} {target} HTTP/1.1\r\nHost: {self.host_header.decode()}\r\n"
                f"Authorization: Bearer {token}\r\n")
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(content)}\r\n"
        return head.encode() + b"\r\n" + content

    async def request(self, raw: bytes) -> tuple[int, str | None]:
        async with self._slots:
            conn = await self._take()
            try:
                async with asyncio.timeout(self.timeout):
                    status, retry_after = await conn.send(raw)
            except BaseException:
                conn.close()
                self._all.discard(conn)
                raise
            if conn.open:
                self._idle.append(conn)
            else:
                self._all.discard(conn)
            return status, retry_after

    async def _take(self) -> _Connection:
        while self._idle:
            conn = self._idle.pop()
            if conn.open:
                return conn
            self._all.discard(conn)
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self.timeout):
            _, conn = await loop.create_connection(_Connection, self.host, self.port)
        self._all.add(conn)
        return conn

    async def aclose(self) -> None:
        for conn in list(self._all):
            conn.close()
        self._all.clear()
        self._idle.clear()
