"""Scenario 9: every workflow history the suite recorded replays with the current code.

Every execution on the suite's Temporal server — every run of every scenario, continued-as-new
runs, runs interrupted by kills and outages — is fetched and replayed with `Replayer` (the
worker's workflows, the pydantic data converter); so are the recordings kept in
tests/histories/<version>/ (which CI replays too). Any non-determinism fails the scenario.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from app.worker import WORKFLOWS
from chaos.outcome import Outcome
from chaos.suite import Suite

COMMITTED = Path(__file__).resolve().parents[2] / "tests" / "histories"


async def _each(histories: list[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    for history in histories:
        yield history


async def run(suite: Suite) -> Outcome:
    """Scenario 9: replay of every recorded workflow history."""
    outcome = Outcome(9, "Replay: every workflow history recorded in the suite, with the current code")
    started = time.monotonic()
    replayer = Replayer(workflows=WORKFLOWS, data_converter=pydantic_data_converter)
    executions = [execution async for execution in suite.client.list_workflows()]
    types = Counter(execution.workflow_type for execution in executions)
    histories = [await suite.client.get_workflow_handle(e.id, run_id=e.run_id).fetch_history() for e in executions]
    committed = [WorkflowHistory.from_json(path.stem, path.read_text()) for path in sorted(COMMITTED.glob("*/*.json"))]
    results = await replayer.replay_workflows(_each(histories + committed), raise_on_replay_failure=False)
    failures = [f"run {run_id}: {error}" for run_id, error in results.replay_failures.items()]
    events = sum(len(history.events) for history in histories)
    outcome.runs = len(histories) + len(committed)
    outcome.injected = (f"{len(histories)} recorded runs ({', '.join(f'{n} {t}' for t, n in types.items())}; "
                        f"{events} events) and {len(committed)} committed histories")
    outcome.identical = "n/a"
    for failure in failures:
        outcome.note(f"FAILED: {failure[:300]}")
    outcome.passed = outcome.check(bool(histories), "no history was recorded") and not failures
    outcome.outcome = ("every history replays without non-determinism" if outcome.passed
                       else f"{len(failures)} histories do not replay")
    outcome.seconds = time.monotonic() - started
    return outcome
