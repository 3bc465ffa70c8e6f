"""One worker process of the many-scopes benchmark: `python -m bench.scope_worker` (started by the bench).

It runs the product's two workers — the compile worker on WIKI_TASK_QUEUE and the model worker on
WIKI_LLM_TASK_QUEUE with WIKI_LLM_MAX_PER_SECOND — configured from the environment like
`python worker.py`. The only difference: each model call first asks the simulated provider at
BENCH_PROVIDER (host:port) for admission, so the provider counts the calls of all processes and
answers 429 over its quota. The calls themselves are the scripted planner's, with
WIKI_SCRIPTED_LATENCY_MS of simulated latency. Prints "ready" once both workers poll; stops on SIGTERM.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

from temporalio import activity

from app.worker import activities_for, build_llm_worker, build_worker
from bench.provider import ask_provider
from runtime.database import create_engine
from runtime.settings import load_settings
from runtime.temporal_client import connect

# The activities that call the model (the workflow schedules them on the model queue).
MODEL_CALLS = frozenset({"llm.plan_batch", "llm.write_section", "llm.judge_merges", "aggregation.plan"})


def _activity_name(fn: Callable[..., Any]) -> str:
    definition = activity._Definition.from_callable(fn)
    return definition.name if definition else ""


def through_provider(fn: Callable[[Any], Awaitable[Any]], host: str, port: int) -> Callable[[Any], Awaitable[Any]]:
    """The same activity, under the same name, that first gets the provider's admission."""

    @functools.wraps(fn, updated=())  # not __dict__: it holds the wrapped activity's definition
    async def call(request):
        await ask_provider(host, port)
        return await fn(request)

    return activity.defn(name=_activity_name(fn))(call)


async def run(stop: asyncio.Event) -> None:
    settings = load_settings()
    host, port = os.environ["BENCH_PROVIDER"].rsplit(":", 1)
    client = await connect(settings)
    engine = create_engine()
    model_activities = [
        through_provider(fn, host, int(port)) if _activity_name(fn) in MODEL_CALLS else fn
        for fn in activities_for(engine, settings)
    ]
    try:
        async with AsyncExitStack() as running:
            await running.enter_async_context(build_worker(client, engine, settings))
            await running.enter_async_context(build_llm_worker(client, engine, settings, activities=model_activities))
            print("ready", flush=True)
            await stop.wait()
    finally:
        await engine.dispose()


def main() -> None:
    async def go() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await run(stop)

    asyncio.run(go())


if __name__ == "__main__":
    main()
