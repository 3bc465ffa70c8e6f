"""The request guard's parts on their own: the per-token bucket, the admission lanes and the token cache."""

from __future__ import annotations

import asyncio
import random
import uuid

import pytest

from domain.tokens import new_token
from servers.guard import Lane, RateLimiter, Refusal, ServerCounters, TokenCache
from store.api_tokens import TokenScope


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_lets_its_burst_through_then_its_rate():
    clock = Clock()
    limiter = RateLimiter(rate=2, burst=3, clock=clock)
    token, other = uuid.uuid4(), uuid.uuid4()
    assert [limiter.wait_needed(token) for _ in range(3)] == [0, 0, 0]
    assert limiter.wait_needed(token) == pytest.approx(0.5)
    assert limiter.wait_needed(other) == 0  # each token has its own bucket
    clock.now = 0.5
    assert limiter.wait_needed(token) == 0 and limiter.wait_needed(token) > 0
    clock.now = 100
    assert [limiter.wait_needed(token) for _ in range(4)][:3] == [0, 0, 0]  # refilled to the burst, not beyond


def test_generated_request_times_never_pass_more_than_the_rate_allows():
    for seed in range(20):
        rng = random.Random(seed)
        rate, burst = rng.uniform(0.5, 50), rng.randint(1, 20)
        clock = Clock()
        limiter = RateLimiter(rate=rate, burst=burst, clock=clock)
        token = uuid.uuid4()
        passed = 0
        for _ in range(300):
            clock.now += rng.expovariate(rate * 2)
            passed += limiter.wait_needed(token) == 0
        assert passed <= burst + rate * clock.now + 1e-6, (seed, passed)


def test_forgotten_buckets_are_bounded():
    limiter = RateLimiter(rate=1, burst=1, clock=Clock(), max_buckets=10)
    for _ in range(100):
        limiter.wait_needed(uuid.uuid4())
    assert len(limiter._buckets) == 10


async def held_with_one_waiting(lane: Lane) -> tuple[asyncio.Task, asyncio.Event, asyncio.Task]:
    """The lane's one turn held until the event is set, and one request waiting for it."""
    holding, release = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with lane.turn():
            holding.set()
            await release.wait()

    holder = asyncio.create_task(hold())
    await holding.wait()
    waiter = asyncio.create_task(lane.turn().__aenter__())
    while lane.waiting == 0:
        await asyncio.sleep(0)
    return holder, release, waiter


async def test_a_lane_sheds_at_once_when_its_queue_is_full_and_after_its_timeout_when_not():
    counters = ServerCounters()
    lane = Lane(limit=1, queue_limit=1, timeout=0.2, counters=counters)
    holder, release, waiter = await held_with_one_waiting(lane)
    with pytest.raises(Refusal) as full:
        async with lane.turn():
            pass
    assert full.value.status == 503 and full.value.headers == {"Retry-After": "1"}
    with pytest.raises(Refusal):  # the queued one waited its timeout out
        await waiter
    assert lane.waiting == 0 and counters.waiting == 0
    release.set()
    await holder
    async with lane.turn():  # the turn was given back
        pass


def test_settings_that_would_queue_in_the_pool_are_refused_naming_the_variables(monkeypatch):
    from runtime.settings import load_settings
    from tests.settings_helpers import refused

    refused(monkeypatch, "WIKI_HTTP_MAX_IN_FLIGHT must be at most WIKI_DB_POOL_SIZE",
            WIKI_DB_POOL_SIZE="4", WIKI_DB_POOL_OVERFLOW="0", WIKI_HTTP_MAX_IN_FLIGHT="5")
    refused(monkeypatch, "WIKI_HTTP_MAX_CONCURRENT_RETAINS must be at most",
            WIKI_HTTP_MAX_IN_FLIGHT="4", WIKI_HTTP_MAX_CONCURRENT_RETAINS="8")
    refused(monkeypatch, "WIKI_HTTP_RATE_BURST", WIKI_HTTP_MAX_CONCURRENT_RETAINS="1", WIKI_HTTP_RATE_BURST="0")
    monkeypatch.delenv("WIKI_HTTP_RATE_BURST")
    assert load_settings().metrics_host == "127.0.0.1"  # the worker's metrics stay on loopback unless asked


async def test_under_sustained_overload_a_lane_sheds_after_its_target_not_its_timeout():
    clock = Clock()
    lane = Lane(limit=1, queue_limit=10, timeout=60, target=0.01, interval=0.1, clock=clock)
    holder, release, first = await held_with_one_waiting(lane)  # a burst: the first waits its full timeout
    assert not lane.overloaded()
    clock.now = 0.5  # the queue has not been empty for half a second
    assert lane.overloaded()
    with pytest.raises(Refusal) as shed:  # waits its 10 ms target, not its 60 s timeout
        async with lane.turn():
            pass
    assert shed.value.status == 503 and int(shed.value.headers["Retry-After"]) >= 1
    release.set()
    await holder
    await first  # the first waiter got its turn once the holder left
    assert lane.waiting == 0 and not lane.overloaded()


def test_a_token_lookup_is_trusted_for_its_bound_and_never_for_an_unknown_token():
    clock = Clock()
    cache = TokenCache(seconds=5, clock=clock, max_entries=3)
    scope = TokenScope(token_id=uuid.uuid4(), tenant="acme", owner="eric", rights="read")
    token = new_token()
    assert cache.get(token) is None
    cache.put(token, scope)
    clock.now = 4.9
    assert cache.get(token) == scope
    clock.now = 5.0  # a revocation is seen by the next request after the bound
    assert cache.get(token) is None
    for _ in range(10):  # bounded: the least recently used are forgotten
        cache.put(new_token(), scope)
    assert len(cache._entries) == 3
    assert TokenCache(seconds=0).get(token) is None  # 0: every request looks its token up
    off = TokenCache(seconds=0)
    off.put(token, scope)
    assert off.get(token) is None and not off._entries
    assert token not in repr(cache._entries)  # kept by its hash, never the secret itself


def test_a_cached_token_past_its_expiry_is_refused_as_expired():
    from datetime import UTC, datetime, timedelta

    from runtime.database import engine_for
    from runtime.settings import Settings
    from servers.guard import GuardRules, RequestGuard

    guard = RequestGuard(lambda *_: None, engine=engine_for("postgresql+asyncpg://nobody@127.0.0.1/none"),
                         settings=Settings(), rules=GuardRules("/v1/"), counters=ServerCounters())
    looked_up = TokenScope(token_id=uuid.uuid4(), tenant="acme", owner="eric", rights="read",
                           expires_at=datetime.now(UTC) - timedelta(seconds=1))  # live when looked up
    with pytest.raises(Refusal) as refused:
        guard._authenticate(new_token(), looked_up)
    assert refused.value.status == 401 and refused.value.reason == "expired"
