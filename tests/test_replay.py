"""Replaying recorded histories with today's code raises no non-determinism error.

Committed histories live in tests/histories/ (refresh with `make histories`); the second test also
replays every CompileWorkflow run the session's own tests recorded on the dev server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from app.worker import WORKFLOWS
from tests.compile.helpers import compile_scope, retain_sample, running_worker, test_settings

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def _replayer() -> Replayer:
    return Replayer(workflows=WORKFLOWS, data_converter=pydantic_data_converter)


def test_committed_histories_exist():
    assert HISTORIES, "no recorded histories in tests/histories (run `make histories`)"


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_committed_history_replays(path: Path):
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    await _replayer().replay_workflow(history)


async def test_histories_of_this_session_replay(client, engine):
    settings = test_settings(WIKI_MAX_NEW_PAGES_PER_RUN=5)
    await retain_sample(engine, "replay", "alice", 60)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, "replay", "alice")
    # Every workflow type the session ran (compiles and lint runs), not only this test's.
    histories = client.list_workflows().map_histories()
    results = await _replayer().replay_workflows(histories, raise_on_replay_failure=False)
    assert not results.replay_failures, results.replay_failures
