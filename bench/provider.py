"""A simulated model provider with a request quota, shared by every worker process over loopback HTTP.

The provider replenishes its quota continuously (a token bucket holding at most one second of
requests, as Anthropic documents its rate limits) and answers 429 when a request finds the bucket
empty. Worker processes ask it before every model call (`admit`), so it sees the calls of all
workers together, exactly as a real provider would.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from temporalio.exceptions import ApplicationError

from domain import errors


@dataclass
class SimulatedProvider:
    quota_per_second: float
    accepted: list[float] = field(default_factory=list)  # monotonic times of admitted calls
    throttled: int = 0
    _tokens: float = 0.0
    _refilled_at: float = 0.0

    def __post_init__(self) -> None:
        self._tokens = self.quota_per_second
        self._refilled_at = time.monotonic()

    def admit(self) -> bool:
        now = time.monotonic()
        self._tokens = min(self.quota_per_second, self._tokens + (now - self._refilled_at) * self.quota_per_second)
        self._refilled_at = now
        if self._tokens < 1:
            self.throttled += 1
            return False
        self._tokens -= 1
        self.accepted.append(now)
        return True

    def achieved_per_second(self) -> float:
        """Admitted calls per second between the first and the last admitted call."""
        if len(self.accepted) < 2:
            return 0.0
        return (len(self.accepted) - 1) / (self.accepted[-1] - self.accepted[0])

    def steady_per_second(self, share: float = 0.8) -> float:
        """Admitted calls per second over the middle `share` of the calls: the rate once every scope is
        under way and before the last ones finish (the ramp-up and the tail left out)."""
        if len(self.accepted) < 10:
            return self.achieved_per_second()
        edge = int(len(self.accepted) * (1 - share) / 2)
        first, last = edge, len(self.accepted) - 1 - edge
        return (last - first) / (self.accepted[last] - self.accepted[first])

    def busiest_second(self) -> int:
        """The most calls admitted within any one-second window."""
        most, start = 0, 0
        for end, moment in enumerate(self.accepted):
            while moment - self.accepted[start] >= 1.0:
                start += 1
            most = max(most, end - start + 1)
        return most

    async def serve(self, host: str = "127.0.0.1", port: int = 0) -> asyncio.Server:
        return await asyncio.start_server(self._handle, host, port)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass  # request line and headers: every request is "one model call"
            status = "200 OK" if self.admit() else "429 Too Many Requests"
            writer.write(f"HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
            await writer.drain()
        finally:
            writer.close()


async def ask_provider(host: str, port: int) -> None:
    """One model call's admission: returns if admitted, raises a retryable LlmThrottled error on 429."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(b"POST /v1/messages HTTP/1.1\r\nHost: provider\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        status_line = (await reader.readline()).decode()
    finally:
        writer.close()
    if " 429 " in status_line:
        raise ApplicationError("simulated provider: 429 Too Many Requests", type=errors.LLM_THROTTLED)
