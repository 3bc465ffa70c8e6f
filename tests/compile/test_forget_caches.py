"""Every process's caches follow a forget: two real worker processes (`wiki worker` with a window onto
their caches, tests/compile/cache_probe.py) compile a scope and both hold a memory's text in their
caches; one of them serves its forget; both drop it, the other on the pass's notification."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from app.forget import forget_memories, wait_for_receipt
from app.reads import ReadScope
from messages.compile import compile_workflow_id
from store.memories import store_memories
from tests.compile.helpers import compile_scope, poll
from tests.compile.helpers import test_settings as settings_for
from tests.compile.test_forget import new_scope
from tests.compile.test_forget_everywhere import small_corpus

PROJECT_DIR = Path(__file__).resolve().parents[2]


class Probe:
    """One worker process and its control channel."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def ask(self, line: str) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{line}\n".encode())
        await self.process.stdin.drain()
        while True:
            answer = await asyncio.wait_for(self.process.stdout.readline(), timeout=60)
            assert answer, f"the probe worker exited (code {self.process.returncode})"
            if answer.startswith(b"{"):
                return json.loads(answer)


@contextlib.asynccontextmanager
async def probe(env: dict[str, str], log: Path) -> AsyncIterator[Probe]:
    with log.open("ab") as errors:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.compile.cache_probe", cwd=PROJECT_DIR, env={**os.environ, **env},
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=errors)
    worker = Probe(process)
    try:
        yield worker
    finally:
        if process.returncode is None:
            with contextlib.suppress(Exception):
                await worker.ask("quit")
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await process.wait()


async def test_two_worker_processes_both_drop_a_forgotten_memory_from_their_caches(
        client, temporal_env, database_url, engine, tmp_path) -> None:
    tenant, owner = new_scope()
    settings = settings_for()
    memories, shared, shared_word = small_corpus(47)
    await store_memories(engine, tenant, owner, memories)
    env = {"DATABASE_URL": database_url, "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
           "WIKI_TASK_QUEUE": settings.task_queue, "WIKI_LLM": "scripted", "WIKI_DEBOUNCE_SECONDS": "0"}
    async with probe(env, tmp_path / "first.log") as first, probe(env, tmp_path / "second.log") as second:
        workers = (first, second)
        for worker in workers:
            async def listening(worker: Probe = worker) -> bool:
                return (await worker.ask("listening"))["listening"]

            await poll(listening, timeout=60, what="a worker process listening for forgets")
        await compile_scope(client, settings, tenant, owner)
        for worker in workers:
            assert (await worker.ask(f"warm {tenant} {owner}"))["warmed"] == len(memories)
            # The check sees the word where it is: each process holds the memory's text.
            assert "memory evidence" in (await worker.ask(f"holds {shared_word}"))["caches"]

        scope = ReadScope.of(tenant, owner)
        queued = await forget_memories(engine, scope, [str(shared.resolved_id(tenant, owner))], client, settings)
        await wait_for_receipt(engine, scope, queued.request_id, timeout_seconds=120)
        await client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()
        for worker in workers:
            async def dropped(worker: Probe = worker) -> bool:
                return (await worker.ask(f"holds {shared_word}"))["caches"] == []

            await poll(dropped, timeout=30, what="every worker process to drop the forgotten memory")
