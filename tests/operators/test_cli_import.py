"""`wiki status` says what the latest compile redid: its attempts that timed out, were cancelled or
failed, and the steps it retried three times or more."""

from __future__ import annotations

import json

from app.retain import retain_and_signal
from tests.compile.helpers import running_worker, sample_memories
from tests.compile.test_attempts import FailingOnce
from tests.operators.cli import scope, wiki


async def retain(engine, tenant: str, count: int) -> None:
    await retain_and_signal(engine, tenant, "alice", sample_memories(count), client=None)


async def test_status_counts_the_attempts_the_latest_run_redid(settings, client, engine):
    await retain(engine, "redo", 30)  # three batches of ten: the later ones rewrite sections (the writer's work)
    planner = FailingOnce()
    async with running_worker(client, engine, settings, planner=planner):
        compiled = await wiki("compile", *scope("redo"))
        assert compiled.exit_code == 0, compiled.output
    assert planner.failed
    text = await wiki("status", *scope("redo"))
    assert "activity attempts redone in the latest run: 0 timed out, 0 cancelled, 1 failed" in text.stdout
    assert "retrying:" not in text.stdout  # one failure is not a step retrying
    state = json.loads((await wiki("status", *scope("redo"), "--json")).stdout)
    assert state["redone"] == {"timed_out": 0, "cancelled": 0, "failed": 1, "retrying": []}
    assert state["latest_run"]["metrics"]["attempts_failed"] == 1


async def test_status_of_a_clean_run_says_nothing_of_redone_work(settings, client, engine):
    await retain(engine, "clean", 10)
    async with running_worker(client, engine, settings):
        assert (await wiki("compile", *scope("clean"))).exit_code == 0
    text = await wiki("status", *scope("clean"))
    assert "redone" not in text.stdout and "Latest compile run" in text.stdout
