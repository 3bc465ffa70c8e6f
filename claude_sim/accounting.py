"""Usage with prompt caching, and rate limits, as the Messages API documents them.

Prompt caching: a `cache_control` breakpoint caches the exact prefix up to and including its block
(in the order tools, system, messages), and only when that prefix has at least the model's minimum
cacheable tokens. A request reads the longest of its breakpoint prefixes that is cached and not
expired (5 minutes, refreshed on every read), and writes the qualifying breakpoint prefixes after
it. Usage then reports cache_read_input_tokens (the prefix read), cache_creation_input_tokens (from
there to the last prefix written) and input_tokens (everything after it).

Rate limits: requests, input tokens and output tokens per minute, each a bucket that refills
continuously (a full minute's allowance at most), reported on every response in the
anthropic-ratelimit-* headers. A request is refused with 429 and retry-after (whole seconds until
the buckets hold enough) when its input would not fit, or when no request or output capacity is
left. Output tokens are charged when the reply is complete.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from claude_sim.catalog import tokens

CACHE_TTL_SECONDS = 300.0


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens}


def prompt_blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request's prompt as (canonical text of a block, has a cache breakpoint), in cache order."""
    blocks: list[tuple[str, bool]] = []
    for tool in body.get("tools") or []:
        plain = {k: v for k, v in tool.items() if k != "cache_control"}
        blocks.append((json.dumps(plain, sort_keys=True, ensure_ascii=False), "cache_control" in tool))
    system = body.get("system")
    if isinstance(system, str):
        blocks.append((system, False))
    for block in system if isinstance(system, list) else []:
        blocks.append((block.get("text", ""), "cache_control" in block))
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            blocks.append((f"{message.get('role')}:{content}", False))
            continue
        for block in content or []:
            text = block.get("text") if block.get("type") == "text" else json.dumps(block, sort_keys=True)
            blocks.append((f"{message.get('role')}:{text}", "cache_control" in block))
    return blocks


@dataclass
class PromptCache:
    clock: Callable[[], float] = time.monotonic
    ttl: float = CACHE_TTL_SECONDS
    _expiry: dict[str, float] = field(default_factory=dict)

    def account(self, scope: str, body: dict[str, Any], min_cacheable: int) -> Usage:
        """Input usage of one request (output filled in later), reading and writing the cache."""
        now = self.clock()
        blocks = prompt_blocks(body)
        digest = hashlib.sha256(scope.encode())
        total = 0
        breakpoints: list[tuple[int, str]] = []  # (prefix tokens, prefix key), in order
        for text, marked in blocks:
            digest.update(b"\x00" + text.encode())
            total += tokens(text)
            if marked:
                breakpoints.append((total, digest.hexdigest()))
        qualifying = [(size, key) for size, key in breakpoints if size >= min_cacheable]
        read = 0
        for size, key in reversed(qualifying):
            if self._expiry.get(key, 0.0) > now:
                read = size
                self._expiry[key] = now + self.ttl  # a read refreshes the entry
                break
        written = 0
        for size, key in qualifying:
            if size > read:
                self._expiry[key] = now + self.ttl
                written = size
        creation = written - read if written else 0
        return Usage(input_tokens=total - read - creation, cache_read_input_tokens=read,
                     cache_creation_input_tokens=creation)


@dataclass
class Limits:
    requests_per_minute: int | None = None
    input_tokens_per_minute: int | None = None
    output_tokens_per_minute: int | None = None


@dataclass
class _Bucket:
    capacity: float
    level: float
    updated: float

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.updated) * self.capacity / 60.0)
        self.updated = now

    def seconds_until(self, amount: float) -> float:
        missing = min(amount, self.capacity) - self.level
        return max(0.0, missing * 60.0 / self.capacity)


class RateLimiter:
    NAMES = ("requests", "input-tokens", "output-tokens")

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        now = clock()
        caps = (limits.requests_per_minute, limits.input_tokens_per_minute, limits.output_tokens_per_minute)
        self._buckets = {name: _Bucket(float(cap), float(cap), now) if cap else None
                         for name, cap in zip(self.NAMES, caps, strict=True)}

    def admit(self, input_tokens: int) -> float | None:
        """None when the request may go (requests and input charged now), else seconds to wait."""
        now = self._clock()
        wanted = {"requests": 1.0, "input-tokens": float(input_tokens), "output-tokens": 1.0}
        wait = 0.0
        for name, bucket in self._buckets.items():
            if bucket is None:
                continue
            bucket.refill(now)
            if bucket.level < min(wanted[name], bucket.capacity):
                wait = max(wait, bucket.seconds_until(wanted[name]))
        if wait > 0:
            return wait
        for name in ("requests", "input-tokens"):
            bucket = self._buckets[name]
            if bucket is not None:
                bucket.level -= min(wanted[name], bucket.capacity)
        return None

    def charge_output(self, output_tokens: int) -> None:
        bucket = self._buckets["output-tokens"]
        if bucket is not None:
            bucket.refill(self._clock())
            bucket.level -= output_tokens  # may go negative: the next requests wait it out

    def headers(self) -> dict[str, str]:
        now = self._clock()
        wall = datetime.now(UTC)
        out: dict[str, str] = {}
        for name, bucket in self._buckets.items():
            if bucket is None:
                continue
            bucket.refill(now)
            full_in = (bucket.capacity - bucket.level) * 60.0 / bucket.capacity
            reset = (wall + timedelta(seconds=full_in)).strftime("%Y-%m-%dT%H:%M:%SZ")
            out[f"anthropic-ratelimit-{name}-limit"] = str(int(bucket.capacity))
            out[f"anthropic-ratelimit-{name}-remaining"] = str(max(0, math.floor(bucket.level)))
            out[f"anthropic-ratelimit-{name}-reset"] = reset
        return out
