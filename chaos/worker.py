"""`python -m chaos.worker`: the product's worker with a fault injected at the model boundary.

Configured from the environment exactly like `python worker.py`, plus:
  CHAOS_FAULT    none | throttle | garbage | lossy | obey (see chaos.faults)
  CHAOS_JOURNAL  the JSON-lines file every injection and model call is written to
  CHAOS_SEED     the seed of every random decision (default 1)
  CHAOS_THROTTLE_RATE, CHAOS_THROTTLE_FIRST_ATTEMPTS_ONLY  the storm's shape (default 0.3, no)
The compile worker on WIKI_TASK_QUEUE is the product's own (`build_worker`); the model worker on
WIKI_LLM_TASK_QUEUE (`build_llm_worker`, so it must be set) runs the faulty model activities.
Runs until SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from contextlib import AsyncExitStack
from pathlib import Path

from app.worker import build_llm_worker, build_worker
from chaos.faults import Journal, ThrottleStorm, model_activities
from runtime.database import create_engine
from runtime.settings import ConfigError, load_settings
from runtime.signals import until_signalled
from runtime.temporal_client import connect

log = logging.getLogger("chaos.worker")


async def run(stop: asyncio.Event) -> None:
    settings = load_settings()
    if not settings.llm_task_queue:
        raise ConfigError("WIKI_LLM_TASK_QUEUE must be set: the fault worker serves the model task queue")
    seed = int(os.environ.get("CHAOS_SEED", "1"))
    storm = ThrottleStorm(seed=seed, rate=float(os.environ.get("CHAOS_THROTTLE_RATE", "0.3")),
                          only_first_attempts=os.environ.get("CHAOS_THROTTLE_FIRST_ATTEMPTS_ONLY") == "1")
    journal = Journal(Path(os.environ["CHAOS_JOURNAL"]))
    client = await connect(settings)
    engine = create_engine()
    faulty = model_activities(engine, settings, os.environ.get("CHAOS_FAULT", "none"), journal, seed=seed,
                              storm=storm)
    try:
        async with AsyncExitStack() as running:
            await running.enter_async_context(build_worker(client, engine, settings))
            await running.enter_async_context(build_llm_worker(client, engine, settings, activities=faulty))
            log.info("fault worker polling %s and %s", settings.task_queue, settings.llm_task_queue)
            await stop.wait()
    finally:
        await engine.dispose()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(until_signalled(run))
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
