"""The debounce: retain-triggered compiles wait for a quiet period, so a burst of retains is compiled in
one pass; admin and bootstrap compiles start at once whatever the debounce is.

The other compile tests run with the debounce at 0; these set it, and keep it short where it is
actually waited for.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from app.retain import retain_and_signal
from messages.compile import Progress
from runtime.temporal_client import signal_compile
from store.memories import store_memories
from tests.compile.helpers import ledger, poll, running_worker, sample_memories
from tests.compile.helpers import test_settings as settings_for

# The quiet period of the burst test: each retain of the burst comes well within it of the previous one.
QUIET_SECONDS = 2.0
# Long enough that a compile which waited for it could not finish within the test's bound.
LONG_DEBOUNCE_SECONDS = 120
ADMIN_BOUND_SECONDS = 30


def new_scope() -> tuple[str, str]:
    return f"t-{uuid.uuid4().hex[:10]}", "alice"


async def test_a_burst_of_retains_is_compiled_in_one_pass(client, engine):
    tenant, owner = new_scope()
    settings = settings_for(WIKI_DEBOUNCE_SECONDS=QUIET_SECONDS)
    memories = sample_memories(25)
    bursts = [memories[i:i + 5] for i in range(0, 25, 5)]

    async with running_worker(client, engine, settings):
        first = await retain_and_signal(engine, tenant, owner, bursts[0], client=client, settings=settings)
        handle = first.compile

        async def running() -> bool:
            # Debouncing — or, were there no debounce, past reading the first burst (so the burst's
            # later retains could not be read with it).
            return (await handle.query("progress", result_type=Progress)).phase not in ("starting", "reading")

        await poll(running, timeout=30, what="the compile to start")
        for burst in bursts[1:]:
            woken = await retain_and_signal(engine, tenant, owner, burst, client=client, settings=settings)
            assert woken.compile is not None and woken.compile.id == handle.id
        await asyncio.wait_for(handle.result(), timeout=60)

    runs = await ledger(engine, tenant, owner)
    batches = sum(run["metrics"].get("batches", 0) for run in runs)
    assert (len(runs), batches) == (1, 1), (
        f"five retains within the quiet period were compiled in {len(runs)} run(s) and {batches} batches, not one pass")
    [run] = runs
    assert (run["trigger"], run["status"], run["metrics"]["records_read"]) == ("memory_retain", "succeeded", 25)
    assert run["metrics"]["planner_calls"] == 1


async def test_admin_and_bootstrap_compiles_do_not_wait_for_the_debounce(client, engine):
    settings = settings_for(WIKI_DEBOUNCE_SECONDS=LONG_DEBOUNCE_SECONDS)
    scopes = {"admin": new_scope(), "bootstrap_import": new_scope()}
    async with running_worker(client, engine, settings):
        handles = []
        for trigger, (tenant, owner) in scopes.items():
            await store_memories(engine, tenant, owner, sample_memories(5))
            # What `wiki compile` (and `--bootstrap`) sends.
            handles.append(await signal_compile(client, tenant, owner, trigger=trigger, settings=settings))
        try:
            await asyncio.wait_for(asyncio.gather(*(h.result() for h in handles)), timeout=ADMIN_BOUND_SECONDS)
        except TimeoutError:
            pytest.fail(f"admin and bootstrap compiles did not finish within {ADMIN_BOUND_SECONDS} s: "
                        f"they waited for the {LONG_DEBOUNCE_SECONDS} s debounce")

    for trigger, (tenant, owner) in scopes.items():
        [run] = await ledger(engine, tenant, owner)
        assert (run["trigger"], run["status"], run["metrics"]["records_read"]) == (trigger, "succeeded", 5)
