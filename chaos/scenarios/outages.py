"""Scenarios 2 and 3: a service goes away mid-compile and comes back.

2. The Temporal dev server is stopped — once cleanly (SIGTERM), once killed (SIGKILL) — and started
   again on the same port with the same database file, while the worker process keeps running.
3. Postgres is stopped (`pg_ctl stop -m fast`, which cuts every connection) for 20 s, then started
   again, while the worker keeps running.

The outage starts at a random point: once the compile has applied a random number of memories.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from chaos.measure import pending_memories
from chaos.outcome import Outcome
from chaos.suite import OWNER, SAMPLE_MEMORIES, TENANT, Judgement, Suite, poll

TEMPORAL_OUTAGE_SECONDS = 10
POSTGRES_OUTAGE_SECONDS = 20
PROGRESS_TIMEOUT_SECONDS = 600


async def _compiled(engine: AsyncEngine) -> int:
    return SAMPLE_MEMORIES - await pending_memories(engine, TENANT, OWNER)


async def _outage_run(suite: Suite, label: str, outage: Callable[[], Awaitable[str]]) -> tuple[Judgement, str]:
    """One compile on a fresh clone with one worker; `outage` runs once a random share is compiled."""
    async with suite.database(label) as (url, engine):
        settings = suite.settings()
        await suite.start_compile(settings)
        with suite.fleet(label, settings, url) as fleet:
            worker = fleet.product_worker()
            target = suite.rng.randint(60, SAMPLE_MEMORIES - 150)

            async def progressed() -> bool:
                return await _compiled(engine) >= target

            await poll(progressed, timeout=PROGRESS_TIMEOUT_SECONDS, what=f"{target} memories compiled")
            compiled = await _compiled(engine)
            what = await outage()
            await suite.wait_for_compile()
            survived = worker.alive()
        judged = await suite.judge(engine)
    where = f"{what} after {compiled} of {SAMPLE_MEMORIES} memories were compiled" + (
        "" if survived else " (the worker process died)")
    return judged, where


def _summarise(outcome: Outcome, runs: list[tuple[Judgement, str]]) -> None:
    outcome.runs = len(runs)
    identical = sum(judged.diff.identical for judged, _ in runs)
    outcome.identical = "yes" if identical == len(runs) else f"no ({identical} of {len(runs)} runs)"
    outcome.rows_lost = sum(judged.diff.lost for judged, _ in runs)
    outcome.rows_duplicated = sum(judged.diff.duplicated for judged, _ in runs)
    outcome.llm_calls_wasted = sum(judged.wasted_by_retries() for judged, _ in runs)
    passed = []
    for number, (judged, where) in enumerate(runs, start=1):
        outcome.note(f"run {number}: {where}; Temporal retried: {judged.history.describe_retries()}; "
                     f"{judged.history.workflow_task_timeouts} workflow tasks timed out; "
                     f"wiki vs reference: {judged.diff.describe()}; ledger: {', '.join(judged.statuses)}")
        passed += [
            outcome.check(judged.succeeded, f"run {number}: the compile did not succeed: {judged.statuses}"),
            outcome.check(judged.diff.identical, f"run {number}: the wiki differs from the reference"),
            outcome.check(judged.isolated, f"run {number}: rows cross scopes: {judged.breaches}"),
        ]
    outcome.passed = all(passed)


async def temporal_restart(suite: Suite) -> Outcome:
    """Scenario 2: the Temporal server stopped and restarted mid-compile."""
    outcome = Outcome(2, "Temporal dev server stopped and restarted mid-compile (same database file)")
    started = time.monotonic()
    runs = []
    for hard in (False, True):
        async def outage(hard: bool = hard) -> str:
            suite.temporal.stop(hard=hard)
            try:
                await asyncio.sleep(TEMPORAL_OUTAGE_SECONDS)  # the outage itself
            finally:
                suite.temporal.start()
            await suite.reconnect()
            return f"{'SIGKILL' if hard else 'SIGTERM'}, down {TEMPORAL_OUTAGE_SECONDS} s,"

        runs.append(await _outage_run(suite, f"temporal-{'kill' if hard else 'term'}", outage))
    _summarise(outcome, runs)
    outcome.injected = (f"server stopped with SIGTERM once and SIGKILL once, {TEMPORAL_OUTAGE_SECONDS} s down "
                        "each time; the worker keeps running")
    outcome.outcome = ("both compiles completed after the restart; wikis identical to the reference"
                       if outcome.passed else "; ".join(outcome.failures))
    outcome.seconds = time.monotonic() - started
    return outcome


async def postgres_outage(suite: Suite) -> Outcome:
    """Scenario 3: Postgres stopped for 20 s mid-compile."""
    outcome = Outcome(3, f"Postgres stopped for {POSTGRES_OUTAGE_SECONDS} s mid-compile")
    started = time.monotonic()
    runs = []
    for number in (1, 2):
        async def outage() -> str:
            suite.postgres.stop()
            try:
                await asyncio.sleep(POSTGRES_OUTAGE_SECONDS)  # the outage itself
            finally:
                suite.postgres.ensure_running()
            return f"stopped (fast shutdown), down {POSTGRES_OUTAGE_SECONDS} s,"

        runs.append(await _outage_run(suite, f"postgres-{number}", outage))
    _summarise(outcome, runs)
    outcome.injected = f"2 outages of {POSTGRES_OUTAGE_SECONDS} s (every connection cut); the worker keeps running"
    outcome.outcome = ("both compiles completed once Postgres was back; wikis identical to the reference"
                       if outcome.passed else "; ".join(outcome.failures))
    outcome.seconds = time.monotonic() - started
    return outcome
