"""Every workflow history a Temporal server holds, replayed with today's workflow code.

tests/test_replay.py replays what the session ran before it. Under pytest-xdist (`make test`) each
worker is a session with a Temporal server of its own, and that test runs on one of them; so each
worker also replays its whole server when its session ends (the `temporal_env` fixture's teardown in
tests/conftest.py), and a non-deterministic history fails the run there.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

from temporalio.client import Client, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from app.worker import WORKFLOWS


def under_xdist() -> bool:
    """This session is one pytest-xdist worker of several."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))


# The product's workflow types: a test may run a workflow of its own (a probe of the worker), which
# no release ships and nothing replays. A probe that must borrow a product type's name (the attempts
# interceptor records compile workflows only) runs on a task queue named with PROBE_QUEUE_PREFIX.
PRODUCT_WORKFLOWS = frozenset(w.__name__ for w in WORKFLOWS)
PROBE_QUEUE_PREFIX = "probe-"


async def product_histories(client: Client) -> AsyncIterator[WorkflowHistory]:
    """Every history on the client's server of one of the product's workflow types."""
    async for history in client.list_workflows().map_histories():
        started = history.events[0].workflow_execution_started_event_attributes
        if started.workflow_type.name in PRODUCT_WORKFLOWS and not started.task_queue.name.startswith(
                PROBE_QUEUE_PREFIX):
            yield history


async def replay_failures(client: Client) -> dict[str, Exception]:
    """Run id → the error replaying it raised, over every product history on the client's server."""
    replayer = Replayer(workflows=WORKFLOWS, data_converter=pydantic_data_converter)
    results = await replayer.replay_workflows(product_histories(client), raise_on_replay_failure=False)
    return dict(results.replay_failures)


async def assert_every_history_replays(client: Client) -> None:
    failures = await replay_failures(client)
    assert not failures, f"histories of this session failed to replay with today's code: {failures}"
