"""One worker process of the many-scopes benchmark: `python -m bench.scope_worker` (started by the bench).

It runs the product's workers exactly as `python worker.py` composes them (`app.worker.build_workers`:
the compile worker on WIKI_TASK_QUEUE and the model worker on WIKI_LLM_TASK_QUEUE), configured from
the environment. With WIKI_LLM=anthropic its model calls go through the anthropic SDK to
ANTHROPIC_BASE_URL, which the bench points at its Claude simulator: the simulator's rate limits
(429 with retry-after) are the quota every process shares. Unlike `python worker.py` it prints
"ready" once the workers poll, so the bench knows when to start the compiles; it stops on SIGTERM.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from app.worker import build_workers, worker_sizes
from runtime.database import create_engine
from runtime.priority import apply_tenant_rate_limit
from runtime.settings import load_settings
from runtime.signals import until_signalled
from runtime.temporal_client import connect


async def run(stop: asyncio.Event) -> None:
    settings = load_settings()
    client = await connect(settings)
    await apply_tenant_rate_limit(client, settings)  # as `wiki worker` does at start-up
    # Two workers share this engine, as in app.worker.run_worker.
    engine = create_engine(pool_size=worker_sizes(settings).database_connections)
    try:
        async with AsyncExitStack() as running:
            for worker in build_workers(client, engine, settings):
                await running.enter_async_context(worker)
            print("ready", flush=True)
            await stop.wait()
    finally:
        await engine.dispose()


def main() -> None:
    asyncio.run(until_signalled(run))


if __name__ == "__main__":
    main()
