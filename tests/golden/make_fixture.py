"""Writes the golden fixture: the wiki that compiling the 700-memory sample produces.

    python -m tests.golden.make_fixture [OUT]      # OUT defaults to tests/golden/sample700_wiki.json.gz

Starts its own services, as tests/conftest.py does (an embedded Postgres in a temporary directory on
a free port, migrated; a local Temporal dev server with the project's search attributes and the
pydantic data converter), retains the sample (700 memories, seed 7) into scope golden/alice, runs an
admin compile to completion on a worker with the scripted planner and no debounce, and writes
`dump_scope(...)` as sorted, indented JSON, gzip-compressed with mtime 0 (so equal wikis give
byte-identical files).

The test suite runs `compile_sample` below once per session on its services (`compiled_sample` in
tests/compiled_sample.py); test_sample_golden.py compares that compile with the file.
"""

from __future__ import annotations

import asyncio
import gzip
import sys
import time
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from evals.run import private_services

# Project imports: the only lines to rewrite when the project's modules move.
from tests.compile.helpers import compile_scope, retain_sample, running_worker, test_settings
from tests.golden.dump import dump_scope, encode

TENANT = "golden"
OWNER = "alice"
MEMORIES = 700
SEED = 7
FIXTURE = Path(__file__).with_name("sample700_wiki.json.gz")


async def compile_sample(client: Client, engine: AsyncEngine) -> dict:
    """Retain the sample into the golden scope (a migrated, empty database) and compile it to the end.

    Settings are the test suite's (scripted planner, debounce 0, a private task queue) plus the
    WIKI_* environment, which must not set compile caps for the result to match the fixture.
    """
    settings = test_settings(WIKI_DEBOUNCE_SECONDS=0)
    changed = await retain_sample(engine, TENANT, OWNER, MEMORIES, SEED)
    if changed != MEMORIES:
        raise RuntimeError(f"retain stored {changed} memories, expected {MEMORIES}: is the database empty?")
    async with running_worker(client, engine, settings):
        return await compile_scope(client, settings, TENANT, OWNER, trigger="admin")


async def make(out: Path) -> dict:
    async with private_services("wiki-golden-") as (client, engine):
        started = time.monotonic()
        result = await compile_sample(client, engine)
        print(f"compiled in {time.monotonic() - started:.1f}s: {result}", file=sys.stderr)
        dump = await dump_scope(engine, TENANT, OWNER)
    out.write_bytes(gzip.compress(encode(dump), compresslevel=9, mtime=0))
    return dump


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else FIXTURE
    dump = asyncio.run(make(out))
    print(f"{out}: {out.stat().st_size} bytes gzip")
    for table, rows in dump.items():
        print(f"  {table}: {len(rows)} rows")


if __name__ == "__main__":
    main(sys.argv[1:])
