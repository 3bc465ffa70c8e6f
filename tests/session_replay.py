"""Every workflow history a Temporal server holds, replayed with today's workflow code.

tests/test_replay.py replays what the session ran before it. Under pytest-xdist (`make test`) each
worker is a session with a Temporal server of its own, and that test runs on one of them; so each
worker also replays its whole server when its session ends (the `temporal_env` fixture's teardown in
tests/conftest.py), and a non-deterministic history fails the run there.
"""

from __future__ import annotations

import os

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from app.worker import WORKFLOWS


def under_xdist() -> bool:
    """This session is one pytest-xdist worker of several."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))


async def replay_failures(client: Client) -> dict[str, Exception]:
    """Run id → the error replaying it raised, over every history on the client's server."""
    replayer = Replayer(workflows=WORKFLOWS, data_converter=pydantic_data_converter)
    results = await replayer.replay_workflows(client.list_workflows().map_histories(), raise_on_replay_failure=False)
    return dict(results.replay_failures)


async def assert_every_history_replays(client: Client) -> None:
    failures = await replay_failures(client)
    assert not failures, f"histories of this session failed to replay with today's code: {failures}"
