"""The compile through WIKI_LLM=openai-compatible: the real `openai` SDK over loopback HTTP to the fake
of a local server (openai_sim/), the worker built from settings by the composition root.

The fake answers through the Claude simulator, so a compile through it must write the wiki a compile
through the Anthropic path and the simulator writes, row for row: every difference is the gateway's.
The kill test runs the fake as its own process and kills it (SIGKILL) mid-compile, as the fault suite
kills services: the compile waits, and finishes once a new process answers on the same port.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from app.worker import build_model_client
from domain.memory import MemoryIn
from runtime.temporal_client import signal_compile
from store.memories import store_memories
from tests.compile.helpers import (
    compile_scope,
    ledger,
    own_process,
    poll,
    running_worker,
    sample_memories,
    test_settings,
    wiki_snapshot,
)

TENANT, OWNER = "t-local", "alice"
MODEL = "qwen2.5:14b"
PROJECT = Path(__file__).resolve().parents[2]


def local_settings(base_url: str, **env):
    return test_settings(WIKI_LLM="openai-compatible", WIKI_OPENAI_SERVER="ollama", WIKI_OPENAI_BASE_URL=base_url,
                         WIKI_MODEL_ID=MODEL, WIKI_LLM_STALL_TIMEOUT_SECONDS=5, **env)


async def compiled_with(client, engine, settings) -> None:
    model_client = build_model_client(settings)
    try:
        async with running_worker(client, engine, settings, model_client=model_client):
            await compile_scope(client, settings, TENANT, OWNER)
    finally:
        await model_client.aclose()


def same_wiki(first: dict, second: dict) -> None:
    # The cursor's timestamp is each database's retain time; the record it points at must match.
    assert [row[1] for row in first.pop("cursor")] == [row[1] for row in second.pop("cursor")]
    assert first == second


async def test_the_wiki_through_the_fake_is_the_claude_paths_and_the_ledger_counts_the_servers_tokens(
        client, engine, second_engine, sim, openai_sim) -> None:
    memories = sample_memories(90)
    for database in (engine, second_engine):
        await store_memories(database, TENANT, OWNER, memories)
    claude = test_settings(WIKI_LLM="anthropic", ANTHROPIC_API_KEY="sim-anthropic-key", WIKI_RECORD_PAGE_SIZE=30)
    await compiled_with(client, engine, claude)
    await compiled_with(client, second_engine, local_settings(openai_sim.base_url, WIKI_RECORD_PAGE_SIZE=30))

    expected, compiled = await wiki_snapshot(engine, TENANT, OWNER), await wiki_snapshot(second_engine, TENANT, OWNER)
    assert len(expected["pages"]) > 5 and expected["sources"]
    same_wiki(compiled, expected)
    answered = [call for call in openai_sim.calls if call.status == 200]
    assert {"planner", "aggregation"} <= {call.kind for call in answered}
    assert openai_sim.invalid_requests() == [] and len(answered) == len(openai_sim.calls)
    assert {call.mode for call in answered if call.kind != "writer"} == {"json_schema"}

    runs = await ledger(second_engine, TENANT, OWNER)
    metrics = [run["metrics"] for run in runs]
    assert all(m["structured_output"] == "json_schema" and m["llm_provider"] == "openai-compatible (ollama)"
               for m in metrics)
    leaf = [c for c in answered if c.kind != "aggregation"]
    aggregation = [c for c in answered if c.kind == "aggregation"]
    assert sum(m["input_tokens"] for m in metrics) == sum(c.prompt_tokens for c in leaf)
    assert sum(m["output_tokens"] for m in metrics) == sum(c.completion_tokens for c in leaf)
    assert sum(m.get("aggregation_output_tokens", 0) for m in metrics) == sum(c.completion_tokens for c in aggregation)
    assert sum(m["cost_usd"] for m in metrics) == 0  # no price set: a local server costs nothing


async def test_a_price_per_million_tokens_is_what_the_ledger_charges(client, engine, openai_sim) -> None:
    await store_memories(engine, TENANT, OWNER, sample_memories(20))
    await compiled_with(client, engine, local_settings(openai_sim.base_url, WIKI_LLM_PRICE_INPUT_PER_MTOK=0.5,
                                                       WIKI_LLM_PRICE_OUTPUT_PER_MTOK=2,
                                                       WIKI_AGGREGATION_PASS_ENABLED=False))
    answered = [call for call in openai_sim.calls if call.status == 200]
    expected = sum(c.prompt_tokens * 0.5 + c.completion_tokens * 2 for c in answered) / 1_000_000
    [run] = await ledger(engine, TENANT, OWNER)
    assert run["metrics"]["cost_usd"] > 0
    assert abs(run["metrics"]["cost_usd"] - expected) < 1e-5


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def fake_server(port: int, log: Path) -> Iterator[subprocess.Popen]:
    """The fake as its own process on `port`, answering once it listens; killed on exit if alive."""
    with own_process([sys.executable, "-m", "openai_sim", "serve", "--port", str(port), "--model", MODEL], log,
                     cwd=PROJECT, stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(PROJECT)}) as process:
        yield process


async def listening(port: int) -> bool:
    try:
        async with httpx.AsyncClient(timeout=1) as http:
            return (await http.get(f"http://127.0.0.1:{port}/v1/models")).status_code == 200
    except httpx.TransportError:
        return False


async def applied(engine) -> int:
    rows = await ledger(engine, TENANT, OWNER)
    return sum(int((row["metrics"] or {}).get("records_read", 0)) for row in rows if row["status"] != "running")


async def test_the_server_killed_mid_compile_loses_nothing_and_the_compile_finishes_once_it_is_back(
        client, engine, second_engine, openai_sim, tmp_path) -> None:
    memories: list[MemoryIn] = sample_memories(32)
    for database in (engine, second_engine):
        await store_memories(database, TENANT, OWNER, memories)
    # The reference: the same memories compiled through the in-process fake, no fault.
    await compiled_with(client, engine, local_settings(openai_sim.base_url, WIKI_RECORD_PAGE_SIZE=8,
                                                       WIKI_MAX_RECORDS_PER_RUN=16))
    port = free_port()
    settings = local_settings(f"http://127.0.0.1:{port}/v1", WIKI_RECORD_PAGE_SIZE=8, WIKI_MAX_RECORDS_PER_RUN=16)
    model_client = build_model_client(settings)
    log = tmp_path / "fake.log"
    try:
        async with running_worker(client, second_engine, settings, model_client=model_client):
            with fake_server(port, log) as first:
                await poll(lambda: listening(port), timeout=60, what="the fake listening")
                handle = await signal_compile(client, TENANT, OWNER, trigger="admin", settings=settings)
                # Killed once a run has finished (16 memories applied) and the next one is compiling.
                await poll(lambda: applied(second_engine), timeout=120, what="a first run applied")
                first.send_signal(signal.SIGKILL)
                first.wait(timeout=30)
            done_before = await applied(second_engine)
            assert done_before < len(memories)
            with fake_server(port, log):
                await handle.result()
    finally:
        await model_client.aclose()
    runs = await ledger(second_engine, TENANT, OWNER)
    assert {run["status"] for run in runs} <= {"succeeded", "continued"}, runs
    assert sum(int(run["metrics"].get("records_read", 0)) for run in runs) == len(memories)
    assert not any(run["metrics"].get("skipped_memories") for run in runs)
    same_wiki(await wiki_snapshot(second_engine, TENANT, OWNER), await wiki_snapshot(engine, TENANT, OWNER))
