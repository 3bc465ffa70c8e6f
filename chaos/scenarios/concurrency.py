"""Scenario 6: 20 scopes compiling at once while retains keep arriving for them.

Twenty tenants get the same sample (the same titles and aliases in every scope), retained in
rounds through the product's retain seam (`retain_and_signal`: store, then signal-with-start the
scope's workflow, with a debounce window), a round every second or two while the previous rounds
compile on two worker processes. Once every workflow has closed, every memory of every scope must
have been compiled exactly once (no wake-up lost), and no row may connect two scopes. The wikis
are not compared with the reference: batches follow the arrival of the rounds by design.

Then the narrowest window, aimed at on purpose: for a few more scopes, a retain arrives while the
workflow runs its final aggregation pass (the cursor drained, the loop already left); those
memories must still be compiled before the workflow closes.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import WorkflowExecutionStatus, WorkflowQueryFailedError
from temporalio.service import RPCError

from app.retain import retain_and_signal
from chaos.measure import cross_scope_rows, isolation_breaches, ledger_rows, ledger_sum, pending_memories
from chaos.outcome import Outcome
from chaos.suite import OWNER, Suite, poll
from messages.compile import Progress, compile_workflow_id
from runtime.settings import Settings
from tests.compile.helpers import sample_memories

SCOPES = 20
MEMORIES_PER_SCOPE = 120
ROUNDS = 6
LATE_SCOPES = 3
LATE_MEMORIES = 20
# Slower model calls, so the final aggregation pass lasts long enough to be hit by a retain.
LATE_SCRIPTED_LATENCY_MS = "300"
DEBOUNCE_SECONDS = 1
WORKERS = 2
SETTLE_TIMEOUT_SECONDS = 1200


async def _retain_during_final_aggregation(suite: Suite, engine: AsyncEngine, settings: Settings,
                                           tenant: str) -> tuple[str, int]:
    """Compile a scope; once its last run is aggregating with nothing left to read, retain more.
    Returns the phase the retain landed in and what is left uncompiled once the workflow closed."""
    memories = sample_memories(MEMORIES_PER_SCOPE + LATE_MEMORIES)
    first = await retain_and_signal(engine, tenant, OWNER, memories[:MEMORIES_PER_SCOPE], client=suite.client,
                                    settings=settings)
    handle = first.compile

    async def final_pass() -> str | None:
        try:
            progress = await handle.query("progress", result_type=Progress)
        except (RPCError, WorkflowQueryFailedError):
            return None  # between two runs
        if progress.phase in ("aggregating", "finishing") and await pending_memories(engine, tenant, OWNER) == 0:
            return progress.phase
        return None

    phase = await poll(final_pass, timeout=SETTLE_TIMEOUT_SECONDS, what=f"the final pass of {tenant}", every=0.02)
    await retain_and_signal(engine, tenant, OWNER, memories[MEMORIES_PER_SCOPE:], client=suite.client,
                            settings=settings)
    await suite.wait_for_compile(tenant, OWNER)
    return phase, await pending_memories(engine, tenant, OWNER)


async def run(suite: Suite) -> Outcome:
    """Scenario 6: 20 scopes compiling at once while retains keep arriving."""
    outcome = Outcome(6, f"{SCOPES} scopes compiling at once while retains keep arriving")
    started = time.monotonic()
    tenants = [f"tenant-{number:02d}" for number in range(1, SCOPES + 1)]
    memories = sample_memories(MEMORIES_PER_SCOPE)
    size = MEMORIES_PER_SCOPE // ROUNDS
    rounds = [memories[start:start + size] for start in range(0, MEMORIES_PER_SCOPE, size)]
    signals = 0
    async with suite.database("concurrency") as (url, engine):
        settings = suite.settings(WIKI_DEBOUNCE_SECONDS=DEBOUNCE_SECONDS)
        with suite.fleet("concurrency", settings, url) as fleet:
            for _ in range(WORKERS):
                fleet.product_worker()
            for number, batch in enumerate(rounds, start=1):
                outcomes = await asyncio.gather(*(
                    retain_and_signal(engine, tenant, OWNER, batch, client=suite.client, settings=settings)
                    for tenant in tenants))
                signals += sum(1 for stored in outcomes if stored.compile is not None)
                if number < len(rounds):
                    await asyncio.sleep(suite.rng.uniform(0.5, 2.5))  # when the next round arrives

            async def all_closed() -> bool:
                for tenant in tenants:
                    try:
                        description = await suite.client.get_workflow_handle(
                            compile_workflow_id(tenant, OWNER)).describe()
                    except RPCError:
                        return False
                    if description.status == WorkflowExecutionStatus.RUNNING:
                        return False
                return True

            await poll(all_closed, timeout=SETTLE_TIMEOUT_SECONDS, what="every scope's compile to close", every=0.5)
        late_settings = suite.settings()
        with suite.fleet("late-wakeups", late_settings, url, WIKI_SCRIPTED_LATENCY_MS=LATE_SCRIPTED_LATENCY_MS) as fleet:
            fleet.product_worker()
            late = {f"late-{number}": await _retain_during_final_aggregation(suite, engine, late_settings,
                                                                              f"late-{number}")
                    for number in range(1, LATE_SCOPES + 1)}
        pending = {tenant: await pending_memories(engine, tenant, OWNER) for tenant in tenants}
        ledgers = {tenant: await ledger_rows(engine, tenant, OWNER) for tenant in tenants}
        breaches = await cross_scope_rows(engine)
    late_lost = [tenant for tenant, (_, left) in late.items() if left]
    lost_wakeups = [tenant for tenant, count in pending.items() if count]
    read = {tenant: ledger_sum(rows, "records_read") for tenant, rows in ledgers.items()}
    misread = {tenant: count for tenant, count in read.items() if count != MEMORIES_PER_SCOPE}
    statuses = Counter(row["status"] for rows in ledgers.values() for row in rows)
    pages = {tenant: ledger_sum(rows, "pages_created") for tenant, rows in ledgers.items()}
    outcome.runs = 2
    outcome.injected = (f"{SCOPES} scopes × {MEMORIES_PER_SCOPE} memories in {len(rounds)} rounds of {size}, "
                        f"{signals} retain signals, debounce {DEBOUNCE_SECONDS} s, {WORKERS} worker processes; "
                        f"then {LATE_SCOPES} retains aimed at the final aggregation pass")
    outcome.identical = "n/a (batches follow arrival)"
    outcome.note(f"ledger: {sum(statuses.values())} workflow runs ({', '.join(f'{s} {n}' for s, n in statuses.items())}); "
                 f"pages created per scope {min(pages.values())}-{max(pages.values())}")
    outcome.note(f"memories left uncompiled after every workflow closed: {sum(pending.values())} "
                 f"(scopes: {', '.join(lost_wakeups) or 'none'}); scopes whose runs read other than "
                 f"{MEMORIES_PER_SCOPE} memories in all: {misread or 'none'}")
    outcome.note("retains aimed at the final pass landed during: "
                 + ", ".join(f"{tenant} {phase}" for tenant, (phase, _) in late.items())
                 + f"; memories left uncompiled: {sum(left for _, left in late.values())}")
    outcome.note("cross-scope rows: " + ", ".join(f"{name} {count}" for name, count in breaches.items()))
    passed = [
        outcome.check(not lost_wakeups, f"wake-ups lost: {len(lost_wakeups)} scopes closed with memories "
                                        "not compiled"),
        outcome.check(not late_lost, f"wake-ups during the final pass lost: {late_lost}"),
        outcome.check(not misread, f"memories read other than once: {misread}"),
        outcome.check(statuses["failed"] == 0, f"{statuses['failed']} runs failed"),
        outcome.check(isolation_breaches(breaches) == 0, f"rows cross scopes: {breaches}"),
        outcome.check(min(pages.values()) > 0, "a scope got no pages"),
    ]
    return outcome.conclude(passed, started,
                            "every memory of every scope compiled exactly once; no wake-up lost; no cross-scope row")
