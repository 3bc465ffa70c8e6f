"""Replaying recorded histories with today's code raises no non-determinism error.

Committed histories live in tests/histories/ (refresh with `make histories`); they must keep covering
the paths a compile can take (lint, split, skip, failure and resume, continue-as-new). Another test
replays every run the session's own tests recorded on the dev server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
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


@dataclass
class Recorded:
    """What a committed history shows of its run."""

    workflow_type: str
    trigger: str | None
    ended: int  # the EventType of its last event
    finished: list[dict[str, Any]]  # the inputs of compile.finish_run: status, metrics, error


def recorded(path: Path) -> Recorded:
    events = WorkflowHistory.from_json(path.stem, path.read_text()).events
    started = events[0].workflow_execution_started_event_attributes
    finished = [json.loads(event.activity_task_scheduled_event_attributes.input.payloads[0].data)
                for event in events if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                and event.activity_task_scheduled_event_attributes.activity_type.name == "compile.finish_run"]
    return Recorded(workflow_type=started.workflow_type.name,
                    trigger=json.loads(started.input.payloads[0].data).get("trigger"),
                    ended=events[-1].event_type, finished=finished)


def test_committed_histories_cover_the_paths_a_compile_takes():
    runs = [recorded(path) for path in HISTORIES]
    metrics = [finish["metrics"] for run in runs for finish in run.finished]
    covered = {
        "a lint run": any(run.workflow_type == "LintWorkflow" for run in runs),
        "a compile woken by lint that promoted a mention": any(
            run.trigger == "lint" and any(f["metrics"].get("unresolved_promoted") for f in run.finished)
            for run in runs),
        "a split batch": any(m.get("batch_splits") for m in metrics),
        "a skipped memory": any(m.get("skipped_memories") for m in metrics),
        "a failed compile": any(run.ended == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED for run in runs),
        "a batch the database refused (ApplyRejected)": any(
            (m.get("error") or "").startswith("the database refused the writes") for m in metrics),
        "a resumed compile that succeeded": any(
            run.trigger == "resume" and run.ended == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED for run in runs),
        "a continue-as-new": any(run.ended == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW for run in runs),
    }
    missing = [path for path, found in covered.items() if not found]
    assert not missing, f"no committed history covers: {', '.join(missing)} (see tests/histories/record.py)"


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
