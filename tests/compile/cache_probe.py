"""A worker process that can be looked into: `wiki worker` (app/worker.py run_worker, its cache listener
included), plus a line protocol on stdin/stdout for tests/compile/test_forget_caches.py:

- `listening` -> {"listening": bool}: it has (re)connected its forget listener at least once;
- `warm TENANT OWNER` -> {"warmed": n}: reads the evidence of every memory of the scope, as a
  compile's apply does, into this process's caches;
- `holds WORD` -> {"caches": [...]}: which of this process's caches hold WORD (any case);
- `quit`: stops the worker.

Run as `python -m tests.compile.cache_probe` with the worker's environment.
"""

from __future__ import annotations

import asyncio
import json
import sys

from sqlalchemy import text

from app.worker import run_worker
from domain.process_caches import EVICTIONS, held_texts
from runtime.database import create_engine
from runtime.settings import get_settings
from store.claims import memory_evidence


async def main() -> None:
    settings = get_settings()
    stop = asyncio.Event()
    worker = asyncio.create_task(run_worker(settings, stop=stop))
    engine = create_engine(pool_size=2, settings=settings)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        while line := (await reader.readline()).decode().strip():
            command, *args = line.split()
            if command == "quit":
                break
            if command == "listening":
                answer: dict = {"listening": EVICTIONS["everything"] >= 1 and not worker.done()}
            elif command == "warm":
                tenant, owner = args
                async with engine.connect() as conn:
                    ids = [row.id for row in await conn.execute(text(
                        "SELECT id::text AS id FROM memory_units WHERE tenant_id = :t AND owner_id = :o"),
                        {"t": tenant, "o": owner})]
                    answer = {"warmed": len(await memory_evidence(conn, tenant, owner, ids))}
            elif command == "holds":
                word = args[0].lower()
                answer = {"caches": sorted({name for name, value in held_texts() if word in value.lower()})}
            else:
                answer = {"error": f"unknown command {command}"}
            print(json.dumps(answer), flush=True)
    finally:
        stop.set()
        await worker
        await engine.dispose()


if __name__ == "__main__":
    asyncio.run(main())
