"""`wiki retain` against the real Temporal dev server: the signal-with-start it sends starts the scope's
compile (trigger memory_retain), which a worker runs to the end; a file retained again wakes nothing."""

from __future__ import annotations

from pathlib import Path

from temporalio.api.enums.v1 import EventType

from messages.compile import compile_workflow_id
from runtime.search_attributes import WIKI_TENANT, WIKI_TRIGGER
from tests.compile.helpers import ledger, running_worker, sample_memories
from tests.operators.cli import scope, wiki


async def test_wiki_retain_starts_the_scope_compile_on_temporal(settings, client, engine, tmp_path: Path):
    memories = tmp_path / "memories.jsonl"
    memories.write_text("".join(m.model_dump_json() + "\n" for m in sample_memories(12)))
    workflow_id = compile_workflow_id("cli-retain", "alice")

    async with running_worker(client, engine, settings):
        retained = await wiki("retain", *scope("cli-retain"), str(memories))
        assert retained.exit_code == 0, retained.output
        assert "retained for cli-retain/alice: 12 inserted, 0 updated, 0 unchanged" in retained.stdout
        assert f"compile signalled: workflow {workflow_id}" in retained.stdout
        handle = client.get_workflow_handle(workflow_id)
        metrics = await handle.result()

    assert metrics["records_read"] == 12
    [run] = await ledger(engine, "cli-retain", "alice")
    assert (run["trigger"], run["status"]) == ("memory_retain", "succeeded")
    # Started by the signal-with-start: the run's first events are its start and the `wake` signal.
    started, signalled = (await handle.fetch_history()).events[:2]
    assert started.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
    assert signalled.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, (
        f"the compile started without the wake signal (second event: {EventType.Name(signalled.event_type)})")
    assert signalled.workflow_execution_signaled_event_attributes.signal_name == "wake"
    attributes = (await handle.describe()).typed_search_attributes
    assert (attributes.get(WIKI_TENANT), attributes.get(WIKI_TRIGGER)) == ("cli-retain", "memory_retain")

    again = await wiki("retain", *scope("cli-retain"), str(memories))
    assert again.exit_code == 0, again.output
    assert "0 inserted, 0 updated, 12 unchanged" in again.stdout and "no compile needed" in again.stdout
    assert len(await ledger(engine, "cli-retain", "alice")) == 1
