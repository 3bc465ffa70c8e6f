"""Replaying recorded histories with today's code raises no non-determinism error.

Recordings live in tests/histories/<version>/ (`make histories`), kept for the versions a running
deployment may upgrade from (docs/ARCHITECTURE.md, "Rolling out a workflow change"; tests/test_release_rule.py
checks which). Every kept recording must replay, and the newest release's recordings must cover each
path a compile can take. Another test replays every run the session's own tests recorded.
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
from tests.histories.releases import HISTORIES, ROOT, changelog_releases
from tests.session_replay import product_histories

RECORDINGS = sorted(HISTORIES.glob("*/*.json"))
NEWEST_RELEASE = next(release.version for release in changelog_releases((ROOT / "CHANGELOG.md").read_text())
                      if release.released)


def _replayer() -> Replayer:
    return Replayer(workflows=WORKFLOWS, data_converter=pydantic_data_converter)


@dataclass
class Recorded:
    """What a recorded history shows of its run."""

    workflow_type: str
    trigger: str | None
    ended: int  # the EventType of its last event
    finished: list[dict[str, Any]]  # the inputs of compile.finish_run: status, metrics, error
    activities: set[str]  # the activity types it scheduled
    wakes: list[str]  # the trigger of each wake signal it received
    timers_cancelled: int


def _payload(payloads) -> Any:
    return json.loads(payloads.payloads[0].data)


def recorded(path: Path) -> Recorded:
    events = WorkflowHistory.from_json(path.stem, path.read_text()).events
    started = events[0].workflow_execution_started_event_attributes
    scheduled = [event.activity_task_scheduled_event_attributes for event in events
                 if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    return Recorded(
        workflow_type=started.workflow_type.name,
        trigger=_payload(started.input).get("trigger"),
        ended=events[-1].event_type,
        finished=[_payload(activity.input) for activity in scheduled
                  if activity.activity_type.name == "compile.finish_run"],
        activities={activity.activity_type.name for activity in scheduled},
        wakes=[_payload(event.workflow_execution_signaled_event_attributes.input)["trigger"] for event in events
               if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED],
        timers_cancelled=sum(event.event_type == EventType.EVENT_TYPE_TIMER_CANCELED for event in events),
    )


def test_recordings_exist():
    assert RECORDINGS, "no recorded histories in tests/histories/<version>/ (run `make histories`)"


def _metric(run: Recorded, name: str) -> bool:
    return any(finish["metrics"].get(name) for finish in run.finished)


def _status(run: Recorded, status: str) -> bool:
    return any(finish["status"] == status for finish in run.finished)


COMPLETED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
CONTINUED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
FAILED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED
# Each path a compile can take, and how a recording shows that it took it.
PATHS = {
    "a small compile a retain started, done in one run": lambda run: (
        run.trigger == "memory_retain" and run.ended == COMPLETED and _status(run, "succeeded")
        and len(run.wakes) == 1),
    "a continue-as-new at a cap": lambda run: run.ended == CONTINUED and _status(run, "continued"),
    "a plan ahead (overlap planning)": lambda run: _metric(run, "plans_ahead"),
    "a split batch": lambda run: _metric(run, "batch_splits"),
    "a skipped memory": lambda run: _metric(run, "skipped_memories"),
    "a failed compile": lambda run: run.ended == FAILED and _status(run, "failed"),
    "a batch the database refused (ApplyRejected)": lambda run: any(
        (finish.get("error") or "").startswith("the database refused the writes") for finish in run.finished),
    "a resumed compile (`wiki resume`) that succeeded": lambda run: run.trigger == "resume" and run.ended == COMPLETED,
    "a plan through Message Batches": lambda run: (
        "llm.submit_plan_batch" in run.activities and _metric(run, "batched_planner_calls")),
    "a wake-up during the final aggregation pass, served by continuing as new": lambda run: (
        run.ended == CONTINUED and _status(run, "succeeded") and "aggregation.plan" in run.activities),
    "a lint run": lambda run: run.workflow_type == "LintWorkflow" and run.ended == COMPLETED,
    "a compile woken by the lint that promoted a mention": lambda run: (
        run.trigger == "lint" and _metric(run, "unresolved_promoted")),
    "a retain's debounce ended by an urgent wake-up": lambda run: (
        run.trigger == "memory_retain" and run.timers_cancelled > 0
        and any(trigger != "memory_retain" for trigger in run.wakes)),
}


def test_the_newest_release_recordings_cover_every_path_a_compile_takes():
    runs = [recorded(path) for path in HISTORIES.glob(f"{NEWEST_RELEASE}/*.json")]
    missing = [path for path, taken in PATHS.items() if not any(taken(run) for run in runs)]
    assert not missing, (f"no recording in tests/histories/{NEWEST_RELEASE}/ covers: {', '.join(missing)} "
                         "(see tests/histories/record.py)")


def test_each_path_is_recognised_only_where_it_was_taken():
    """The coverage check is not satisfied by any recording: each path is found in its own scenario's."""
    scenarios = {
        "a small compile a retain started, done in one run": "small_compile",
        "a continue-as-new at a cap": "continued_as_new",
        "a split batch": "split_skip",
        "a skipped memory": "split_skip",
        "a plan through Message Batches": "message_batches",
        "a wake-up during the final aggregation pass, served by continuing as new": "late_wake",
        "a retain's debounce ended by an urgent wake-up": "urgent_wake",
        "a resumed compile (`wiki resume`) that succeeded": "resumed_after_",
    }
    runs = {path.name: recorded(path) for path in HISTORIES.glob(f"{NEWEST_RELEASE}/*.json")}
    for path, scenario in scenarios.items():
        takers = {name for name, run in runs.items() if PATHS[path](run)}
        assert takers and all(name.startswith(scenario) for name in takers), (path, sorted(takers))


@pytest.mark.parametrize("path", RECORDINGS, ids=[f"{p.parent.name}/{p.stem}" for p in RECORDINGS])
async def test_recorded_history_replays(path: Path):
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    await _replayer().replay_workflow(history)


async def test_histories_of_this_session_replay(client, engine):
    settings = test_settings(WIKI_MAX_NEW_PAGES_PER_RUN=5)
    await retain_sample(engine, "replay", "alice", 60)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, "replay", "alice")
    # Every workflow type the session ran (compiles and lint runs), not only this test's.
    histories = product_histories(client)
    results = await _replayer().replay_workflows(histories, raise_on_replay_failure=False)
    assert not results.replay_failures, results.replay_failures
