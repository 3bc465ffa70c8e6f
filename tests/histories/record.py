"""Record workflow histories for the replay test: `make histories` (or `python -m tests.histories.record`).

Runs a small compile on a throwaway embedded Postgres and a local Temporal dev server — with caps
low enough to continue as new, and a wake-up arriving mid-compile — then a retain whose debounce an
admin compile ends, and writes every run's history to tests/histories/<name>.json. Re-record after an intentional, `workflow.patched`-guarded change;
never to make a failing replay pass.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.ext.asyncio import create_async_engine
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from app.worker import build_worker
from domain.compile_messages import Progress
from runtime.database import migrate
from runtime.devservices import EmbeddedPostgres, free_port, temporal_cli_path
from runtime.search_attributes import ALL_SEARCH_ATTRIBUTES
from runtime.temporal_client import signal_compile
from store.memories import retain
from tests.compile.helpers import sample_memories, test_settings

HERE = Path(__file__).resolve().parent


async def record(out_dir: Path = HERE) -> list[Path]:
    # Dated names: new recordings sit beside the old ones, which must keep replaying too.
    prefix = f"compile_{datetime.now(UTC):%Y%m%d_%H%M}"
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        postgres = EmbeddedPostgres(pgdata=Path(tmp) / "pg", port=free_port(), durable=False)
        url = postgres.ensure_running()
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=str(temporal_cli_path()), search_attributes=ALL_SEARCH_ATTRIBUTES,
            data_converter=pydantic_data_converter)
        engine = create_async_engine(url)
        try:
            await migrate(engine)
            settings = test_settings(WIKI_MAX_NEW_PAGES_PER_RUN=10, WIKI_RECORD_PAGE_SIZE=25)
            memories = sample_memories(120)
            await retain(engine, "rec", "alice", memories[:100])
            async with build_worker(env.client, engine, settings):
                handle = await signal_compile(env.client, "rec", "alice", trigger="admin", settings=settings)
                await retain(engine, "rec", "alice", memories[100:])
                await signal_compile(env.client, "rec", "alice", trigger="memory_retain", settings=settings)
                await handle.result()
                await _admin_ends_a_debounce(env.client, engine, settings)
            runs = [wf async for wf in env.client.list_workflows("WorkflowType = 'CompileWorkflow'")]
            for index, run in enumerate(sorted(runs, key=lambda r: r.start_time)):
                history = await env.client.get_workflow_handle(run.id, run_id=run.run_id).fetch_history()
                path = out_dir / f"{prefix}_run_{index + 1}.json"
                path.write_text(history.to_json())
                written.append(path)
        finally:
            await engine.dispose()
            await env.shutdown()
            postgres.stop()
    return written


async def _admin_ends_a_debounce(client, engine, settings) -> None:
    """A retain-started run debouncing for 5 minutes, woken by an admin compile: it compiles at once."""
    await retain(engine, "deb", "alice", sample_memories(20, seed=8))
    patient = settings.model_copy(update={"debounce_seconds": 300.0})
    handle = await signal_compile(client, "deb", "alice", trigger="memory_retain", memory_count=20, settings=patient)
    for _ in range(600):
        if (await handle.query("progress", result_type=Progress)).phase == "debouncing":
            break
        await asyncio.sleep(0.05)
    await signal_compile(client, "deb", "alice", trigger="admin", settings=settings)
    await asyncio.wait_for(handle.result(), timeout=120)


if __name__ == "__main__":
    for path in asyncio.run(record(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)):
        print(f"wrote {path}")
