"""The `wiki` CLI against a real Postgres (a fresh migrated database per test).

No Temporal server here: retain runs with --no-compile, or against a fake client that records the
signal-with-start it is asked for (the compile itself is tested with the workflow). The CLI runs in
a worker thread because its commands call asyncio.run, and the test's own event loop is running.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from temporalio.service import RPCError, RPCStatusCode
from typer.testing import CliRunner, Result

from app.retain import CompileNotSignalled, retain_and_signal
from cli import main as cli
from domain.memory import MemoryIn
from messages.compile import CompileInput, WakeUp
from runtime import temporal_client
from runtime.settings import get_settings, mask_secrets
from store.memories import RetainResult

UNREACHABLE_TEMPORAL = "127.0.0.1:9"  # nothing listens: a test that reached for Temporal would fail loudly


@pytest.fixture
def cli_env(database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Settings pointing at the test database; embedded services would land in tmp_path/data."""
    data_dir = tmp_path / "data"
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("TEMPORAL_ADDRESS", UNREACHABLE_TEMPORAL)
    monkeypatch.setenv("WIKI_DATA_DIR", str(data_dir))
    monkeypatch.setenv("COLUMNS", "200")  # Rich tables unwrapped, so lines can be matched
    for name in ("WIKI_LLM", "WIKI_DEBOUNCE_SECONDS", "TEMPORAL_NAMESPACE", "WIKI_TASK_QUEUE"):
        monkeypatch.delenv(name, raising=False)
    get_settings.cache_clear()
    yield data_dir
    get_settings.cache_clear()


async def wiki(*args: str, stdin: str | None = None) -> Result:
    return await asyncio.to_thread(CliRunner().invoke, cli.app, list(args), input=stdin)


async def stored(engine) -> list[tuple[str, str, str]]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT tenant_id, owner_id, content FROM memory_units ORDER BY content"))
        return [tuple(row) for row in rows]


def jsonl(*rows: Any) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)


GOOD_ROWS = [
    {"id": str(uuid.uuid4()), "content": "Brisket at Franklin Barbecue.", "metadata": {"tags": ["bbq"]}},
    {"content": "Walked Biscuit around Lady Bird Lake.", "occurred_at": "2026-03-01T10:00:00Z"},
    {"content": "Coffee at Mozart's.", "metadata": {"place": {"name": "Mozart's Coffee", "city": "Austin"}}},
]


@dataclass
class FakeHandle:
    id: str


@dataclass
class FakeClient:
    """Records signal-with-start calls; `fail` makes the call raise like an unavailable server."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    fail: bool = False

    async def start_workflow(self, workflow: str, arg: CompileInput, **options: Any) -> FakeHandle:
        if self.fail:
            raise RPCError("server unavailable", RPCStatusCode.UNAVAILABLE, b"")
        self.calls.append({"workflow": workflow, "input": arg, **options})
        return FakeHandle(options["id"])


# ----------------------------------------------------------------------------------------- retain


async def test_retain_stores_a_good_file_and_prints_counts(cli_env, engine, tmp_path):
    path = tmp_path / "memories.jsonl"
    path.write_text(jsonl(*GOOD_ROWS) + "\n")  # a trailing blank line is fine

    first = await wiki("retain", "--tenant", "t1", "--owner", "o1", "--no-compile", str(path))
    assert first.exit_code == 0, first.output
    assert "3 inserted, 0 updated, 0 unchanged" in first.stdout
    assert "compile not signalled (--no-compile)" in first.stdout
    assert await stored(engine) == sorted(("t1", "o1", row["content"]) for row in GOOD_ROWS)

    again = await wiki("retain", "--tenant", "t1", "--owner", "o1", "--no-compile", str(path))
    assert again.exit_code == 0, again.output
    assert "0 inserted, 0 updated, 3 unchanged" in again.stdout
    assert "nothing changed; no compile needed" in again.stdout
    assert len(await stored(engine)) == 3


async def test_retain_reads_stdin(cli_env, engine):
    result = await wiki("retain", "--tenant", "t1", "--owner", "o1", "--no-compile", "-", stdin=jsonl(*GOOD_ROWS[:2]))
    assert result.exit_code == 0, result.output
    assert "2 inserted" in result.stdout
    assert len(await stored(engine)) == 2


@pytest.mark.parametrize(
    ("rows", "expected_lines"),
    [
        pytest.param([GOOD_ROWS[0], '{"content": "unterminated"'], ["line 2: malformed JSON"], id="malformed-json"),
        # json names some places "starting at": never "at at column".
        pytest.param(['{"content": "open'], ["line 1: malformed JSON: Unterminated string starting at column 13\n"],
                     id="malformed-json-starting-at"),
        pytest.param([{"content": "x" * (32 * 1024 + 1)}, GOOD_ROWS[1]],
                     ["line 1: content: content is 32769 bytes; the limit is 32768 (32 KiB)"], id="oversize-content"),
        pytest.param([GOOD_ROWS[0], GOOD_ROWS[1], {"content": "ok", "metadata": ["a"]}],
                     ["line 3: metadata: metadata must be a JSON object, not list"], id="metadata-not-object"),
        pytest.param([GOOD_ROWS[0], "[1, 2]", GOOD_ROWS[1], {"content": "  "}],
                     ["line 2: each line must be a JSON object", "line 4: content: content must not be empty"],
                     id="every-bad-line-reported"),
    ],
)
async def test_a_bad_file_stores_nothing_and_names_each_line(cli_env, engine, tmp_path, rows, expected_lines):
    path = tmp_path / "bad.jsonl"
    path.write_text(jsonl(*rows))
    result = await wiki("retain", "--tenant", "t1", "--owner", "o1", "--no-compile", str(path))
    assert result.exit_code == 2
    for line in expected_lines:
        assert line in result.stderr
    assert f"error: {len(expected_lines)} invalid line(s) in {path}; nothing was stored" in result.stderr
    assert await stored(engine) == []


@pytest.mark.parametrize(
    ("row", "message"),
    [
        # Nested 5,000 deep: the json module would recurse past the interpreter's limit (a traceback).
        pytest.param('{"content": "deep", "metadata": ' + "[" * 5000 + "]" * 5000 + "}",
                     "line 2: metadata nests more than 32 levels deep", id="deep-json"),
        # Valid as written, but year 10000 in UTC: the database driver would refuse it mid-transaction.
        pytest.param({"content": "late", "occurred_at": "9999-12-31T23:59:59-05:00"},
                     "line 2: occurred_at: 9999-12-31T23:59:59-05:00 is out of range: in UTC it must fall strictly "
                     "within the years 1 to 9999", id="out-of-range-date"),
        pytest.param('{"content": "inf", "metadata": {"n": 1e999}}', "line 2: the number 1e999 is out of range",
                     id="infinite-number"),
    ],
)
async def test_a_line_the_parser_or_the_database_would_choke_on_is_one_line_and_exit_2(
        cli_env, engine, tmp_path, row, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(jsonl(GOOD_ROWS[0], row, GOOD_ROWS[1]))
    result = await wiki("retain", "--tenant", "t1", "--owner", "o1", str(path))
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [message, f"error: 1 invalid line(s) in {path}; nothing was stored"]
    assert await stored(engine) == []


async def test_a_bad_tenant_is_refused_before_reading_anything(cli_env, engine, tmp_path):
    path = tmp_path / "memories.jsonl"
    path.write_text(jsonl(*GOOD_ROWS))
    result = await wiki("retain", "--tenant", "acme corp", "--owner", "o1", "--no-compile", str(path))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: tenant must be 1-128 characters")
    assert await stored(engine) == []


async def test_a_missing_file_is_bad_input(cli_env, tmp_path):
    result = await wiki("retain", "--tenant", "t1", "--owner", "o1", "--no-compile", str(tmp_path / "nope.jsonl"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: cannot read {tmp_path / 'nope.jsonl'}")


async def test_retain_wakes_the_compile_only_when_something_changed(cli_env, engine, tmp_path, monkeypatch):
    client = FakeClient()

    async def fake_connect(settings, **_):
        return client

    pollers = ["a-worker"]

    async def fake_pollers(client, task_queue):
        return pollers

    # Where the CLI looks them up when a command reaches Temporal (imported there, not at start-up).
    monkeypatch.setattr(temporal_client, "connect", fake_connect)
    monkeypatch.setattr(temporal_client, "live_pollers", fake_pollers)
    path = tmp_path / "memories.jsonl"
    path.write_text(jsonl(*GOOD_ROWS))

    first = await wiki("retain", "--tenant", "t1", "--owner", "o1", str(path))
    assert first.exit_code == 0, first.output
    assert "compile signalled: workflow compile:t1:o1" in first.stdout
    assert first.stderr == ""
    assert len(client.calls) == 1
    call = client.calls[0]
    assert (call["workflow"], call["id"], call["start_signal"]) == ("CompileWorkflow", "compile:t1:o1", "wake")
    assert call["start_signal_args"] == [WakeUp(trigger="memory_retain", memory_count=3)]
    assert call["input"].trigger == "memory_retain"
    assert call["input"].options.debounce_seconds == get_settings().debounce_seconds

    again = await wiki("retain", "--tenant", "t1", "--owner", "o1", str(path))
    assert again.exit_code == 0, again.output
    assert "nothing changed; no compile needed" in again.stdout
    assert len(client.calls) == 1

    # No worker polls the queue: the memories are stored and the compile signalled all the same, with
    # one line saying that it waits for a worker.
    pollers.clear()
    path.write_text(jsonl({"content": "A new memory."}))
    unserved = await wiki("retain", "--tenant", "t1", "--owner", "o1", str(path))
    assert unserved.exit_code == 0, unserved.output
    assert "1 inserted" in unserved.stdout and len(client.calls) == 2
    assert unserved.stderr == ("warning: no worker is polling task queue wiki-compile: this waits until a worker "
                               "polls it\n")


async def test_retain_and_signal_counts_only_changed_memories(cli_env, engine):
    client = FakeClient()
    memories = [MemoryIn.model_validate(row) for row in GOOD_ROWS]
    await retain_and_signal(engine, "t1", "o1", memories[:1], client=None)

    outcome = await retain_and_signal(engine, "t1", "o1", memories, client=client)
    assert isinstance(outcome.stored, RetainResult)
    assert (len(outcome.stored.inserted), len(outcome.stored.unchanged)) == (2, 1)
    assert outcome.compile == FakeHandle("compile:t1:o1")
    assert client.calls[0]["start_signal_args"][0].memory_count == 2


async def test_a_failed_signal_keeps_the_memories_and_says_how_to_compile(cli_env, engine):
    memories = [MemoryIn.model_validate(row) for row in GOOD_ROWS]
    with pytest.raises(CompileNotSignalled, match=r"stored 3 memories .*`wiki compile --tenant t1 --owner o1`"):
        await retain_and_signal(engine, "t1", "o1", memories, client=FakeClient(fail=True))
    assert len(await stored(engine)) == 3


# ----------------------------------------------------------------------------------------- sample


async def test_sample_is_deterministic_and_retainable(cli_env, engine, tmp_path):
    first, second, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    for path, seed in ((first, "3"), (second, "3"), (other, "4")):
        result = await wiki("sample", "--memories", "40", "--seed", seed, "--out", str(path))
        assert result.exit_code == 0, result.output
        assert f"wrote 40 memories to {path}" in result.stdout
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() != other.read_bytes()

    to_stdout = await wiki("sample", "--memories", "40", "--seed", "3")
    assert to_stdout.stdout == first.read_text()

    retained = await wiki("retain", "--tenant", "t1", "--owner", "o1", "--no-compile", "-", stdin=to_stdout.stdout)
    assert retained.exit_code == 0, retained.output
    assert "40 inserted" in retained.stdout
    assert len(await stored(engine)) == 40


# ----------------------------------------------------------------------------------------- dev, migrate, config


async def test_dev_status_shows_configured_services_and_starts_nothing(cli_env, database_url):
    result = await wiki("dev", "status")
    assert result.exit_code == 0, result.output
    postgres = next(line for line in result.stdout.splitlines() if "Postgres" in line)
    assert mask_secrets(database_url) in postgres and ":***@" in postgres  # the embedded server's password too
    assert "reachable (external: DATABASE_URL)" in postgres
    temporal = next(line for line in result.stdout.splitlines() if line.strip("│ ").startswith("Temporal "))
    assert UNREACHABLE_TEMPORAL in temporal and "not reachable (external: TEMPORAL_ADDRESS)" in temporal
    worker = next(line for line in result.stdout.splitlines() if line.startswith("Worker"))
    assert "task queue wiki-compile" in worker and "yours to run: `wiki worker`" in worker
    assert not cli_env.exists()  # no embedded Postgres or Temporal was started


async def test_dev_status_hides_the_database_password(cli_env, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://wiki:hunter2@127.0.0.1:9/wiki")
    get_settings.cache_clear()
    result = await wiki("dev", "status")
    assert result.exit_code == 0, result.output
    assert "postgresql://wiki:***@127.0.0.1:9/wiki" in result.stdout
    assert "hunter2" not in result.stdout


async def test_migrate_is_idempotent_on_a_migrated_database(cli_env):
    result = await wiki("migrate")
    assert result.exit_code == 0, result.output
    assert "latest revision" in result.stdout


@pytest.mark.parametrize("command", [["migrate"], ["retain", "--tenant", "t", "--owner", "o", "-"]])
async def test_a_bad_setting_exits_2_naming_the_variable(cli_env, monkeypatch, command):
    monkeypatch.setenv("WIKI_LLM", "foo")
    get_settings.cache_clear()
    result = await wiki(*command, stdin="")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: invalid configuration: WIKI_LLM")


async def test_an_unreachable_database_is_an_operational_failure(cli_env, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://wiki@127.0.0.1:9/wiki")
    get_settings.cache_clear()
    result = await wiki("retain", "--tenant", "t", "--owner", "o", "--no-compile", "-", stdin=jsonl(GOOD_ROWS[0]))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot connect to the database at postgresql+asyncpg://wiki@127.0.0.1:9")


async def test_no_arguments_prints_help():
    result = await wiki()
    assert "Usage" in result.output and "retain" in result.output and "demo" in result.output
