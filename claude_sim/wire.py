"""A small HTTP/1.1 server on asyncio streams: requests in, whole or streamed (chunked) responses out.

Only what the anthropic SDK's HTTP client needs: one request per connection (every response says
`Connection: close`), bodies by Content-Length, responses either whole or chunked. A handler may also
hold a connection open without answering (the "hung connection" fault): the server waits until the
client gives up and closes it, or until the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, ClassVar, Self

MAX_BODY_BYTES = 32 * 1024 * 1024


@dataclass
class Request:
    method: str
    target: str  # path and query, as sent
    headers: dict[str, str]  # lower-cased names
    body: bytes
    raw_headers: list[tuple[str, str]] = field(default_factory=list)  # names as sent, in order

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


@dataclass
class Response:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    # When set, the body is streamed chunk by chunk (chunked transfer encoding).
    stream: AsyncIterator[bytes] | None = None
    # When set, nothing is sent: the connection is held until the client closes it.
    hang: bool = False


Handler = Callable[[Request], Awaitable[Response]]


class HttpServer:
    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task] = set()
        self.port = 0

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        self._server = await asyncio.start_server(self._serve, host, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(BaseException):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            request = await _read_request(reader)
            if request is None:
                return
            response = await self._handler(request)
            if response.hang:
                # Hold the connection: read until the client closes it (or the server stops).
                while await reader.read(65536):
                    pass
                return
            await _write_response(writer, response)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client went away, or the server is stopping
        finally:
            if task is not None:
                self._connections.discard(task)
            with contextlib.suppress(Exception):
                writer.close()


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    line = await reader.readline()
    if not line:
        return None
    method, target, _version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    headers: dict[str, str] = {}
    raw: list[tuple[str, str]] = []
    while True:
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        raw.append((name.strip(), value.strip()))
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    if length > MAX_BODY_BYTES:
        raise ConnectionError("request body too large")
    body = await reader.readexactly(length) if length else b""
    return Request(method=method, target=target, headers=headers, body=body, raw_headers=raw)


async def _write_response(writer: asyncio.StreamWriter, response: Response) -> None:
    reason = HTTPStatus(response.status).phrase if response.status in HTTPStatus._value2member_map_ else "Status"
    head = [f"HTTP/1.1 {response.status} {reason}", "Connection: close"]
    head += [f"{name}: {value}" for name, value in response.headers.items()]
    if response.stream is None:
        head.append(f"Content-Length: {len(response.body)}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body)
        await writer.drain()
        return
    head.append("Transfer-Encoding: chunked")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    await writer.drain()
    async for chunk in response.stream:
        if chunk:
            writer.write(f"{len(chunk):X}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()
    writer.write(b"0\r\n\r\n")
    await writer.drain()


async def pace(ttft_seconds: float, output_tokens_per_second: float, output_tokens: int) -> None:
    """Wait as long as the simulated model takes to answer whole: its time to first token, then
    `output_tokens` at its output rate (0: the rest at once)."""
    seconds = ttft_seconds
    if output_tokens_per_second > 0:
        seconds += output_tokens / output_tokens_per_second
    if seconds > 0:
        await asyncio.sleep(seconds)


class SimulatedService:
    """What every simulated provider shares: its HTTP server on a free local port, the async context
    manager that starts and stops it, and the queue of faults the next matching calls get (each
    simulator names its own fault type and the path its SDK's base URL ends with)."""

    fault_type: ClassVar[Callable[..., Any]]
    base_path: ClassVar[str] = ""

    def __init__(self, handler: Handler) -> None:
        self.faults: deque[Any] = deque()
        self._http = HttpServer(handler)

    async def start(self, port: int = 0) -> str:
        await self._http.start(port=port)
        return self.base_url

    async def stop(self) -> None:
        await self._http.stop()

    def serve_until_interrupted(self, port: int, banner: Callable[[str], str]) -> int:
        """Serve on `port`, printing `banner(base URL)` once it listens, until Ctrl-C; the exit code."""
        async def serve() -> None:
            print(banner(await self.start(port)), flush=True)
            try:
                await asyncio.Event().wait()
            finally:
                await self.stop()

        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve())
        return 0

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        """The address an SDK is given as its base URL."""
        return f"http://127.0.0.1:{self._http.port}{self.base_path}"

    def fail_next(self, kind: str, call: str = "any", times: int = 1, retry_after: float | None = None) -> None:
        self.faults.extend(self.fault_type(kind, call, retry_after) for _ in range(times))

    def fail_always(self, kind: str, call: str = "any", retry_after: float | None = None) -> None:
        """Every matching call from now on fails this way, once the faults queued before it are used up."""
        self.faults.append(self.fault_type(kind, call, retry_after, lasting=True))
