"""What a newcomer meets first, on the real Postgres and Temporal (issue 16): commands that need a worker
say so at once, a compile ends a retain's debounce, runs ended outside the workflow show how they ended,
lint names what it found, the schedule shows what it will do, usage errors are one line, and tables fit
80 columns without cutting a word."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client

from runtime.search_attributes import WIKI_RUN
from runtime.settings import get_settings
from tests.compile.helpers import ledger, poll, running_worker, sample_memories
from tests.operators import helpers as db
from tests.operators.cli import one_error_line, scope, wiki
from tests.operators.test_lint import seed_every_check

pytestmark = pytest.mark.usefixtures("settings")


def use_queue(monkeypatch: pytest.MonkeyPatch, name: str | None = None) -> str:
    """Point the CLI at a task queue no worker has ever polled (or at `name`)."""
    queue = name or f"tq-{uuid.uuid4()}"
    monkeypatch.setenv("WIKI_TASK_QUEUE", queue)
    get_settings.cache_clear()
    return queue


def sample_file(tmp_path, count: int, seed: int = 7) -> str:
    path = tmp_path / f"sample-{count}-{seed}.jsonl"
    path.write_text("".join(m.model_dump_json(exclude_none=True) + "\n" for m in sample_memories(count, seed)))
    return str(path)


# ------------------------------------------------------------------------------------ 1. a worker, or a clear no


async def test_commands_that_wait_for_a_worker_fail_at_once_without_one(engine, tmp_path, monkeypatch):
    queue = use_queue(monkeypatch)
    retained = await wiki("retain", *scope("noworker"), sample_file(tmp_path, 5))
    assert retained.exit_code == 0, retained.output  # stored, and the compile signalled: it waits for a worker
    assert retained.stderr == (f"warning: no worker is polling task queue {queue}: this waits until a worker "
                               "polls it\n")
    no_wait = await wiki("compile", *scope("noworker"), "--no-wait")
    assert no_wait.exit_code == 0 and no_wait.stderr.startswith("warning: no worker is polling"), no_wait.output

    use_queue(monkeypatch)  # a queue with no workflow waiting on it either
    for command in (["compile", *scope("noworker")], ["lint"]):
        one_error_line(await wiki(*command), 1, "no worker is polling task queue tq-")
    assert [r["status"] for r in await ledger(engine, "noworker", "alice")] == []


async def test_rebuild_without_a_worker_changes_nothing(settings, client, engine, tmp_path, monkeypatch):
    assert (await wiki("retain", *scope("rbnw"), "--no-compile", sample_file(tmp_path, 10))).exit_code == 0
    async with running_worker(client, engine, settings):
        assert (await wiki("compile", *scope("rbnw"))).exit_code == 0
    before = await db.rows(engine, "SELECT slug, status FROM wiki_pages WHERE tenant_id = 'rbnw' ORDER BY slug")
    use_queue(monkeypatch)
    one_error_line(await wiki("rebuild", *scope("rbnw"), "--yes"), 1, "no worker is polling task queue")
    assert await db.rows(engine, "SELECT slug, status FROM wiki_pages WHERE tenant_id = 'rbnw' ORDER BY slug") \
        == before and all(row.status == "active" for row in before)


# ------------------------------------------------------------------------------------ 2. compile ends the debounce


async def test_compile_after_a_retain_ends_its_debounce_and_status_says_when_it_would_start(
        settings, client, engine, tmp_path, monkeypatch):
    monkeypatch.setenv("WIKI_DEBOUNCE_SECONDS", "300")  # the default: five minutes of quiet after a retain
    get_settings.cache_clear()
    async with running_worker(client, engine, settings):
        assert (await wiki("retain", *scope("quiet"), sample_file(tmp_path, 20))).exit_code == 0

        async def debouncing() -> dict | None:
            state = json.loads((await wiki("status", *scope("quiet"), "--json")).stdout)
            progress = state["progress"]
            return state if progress and progress["phase"] == "debouncing" else None

        state = await poll(debouncing, timeout=30, every=0.2, what="the compile to debounce")
        assert state["progress"]["debounce_until"] is not None
        text = " ".join((await wiki("status", *scope("quiet"))).stdout.replace("│", " ").split())
        assert re.search(r"phase debouncing compiles at \d\d:\d\d:\d\d UTC \(in \d+ s\) unless more memories "
                         r"arrive; `wiki compile --tenant quiet --owner alice` starts it now", text), text

        compiled = await wiki("compile", *scope("quiet"))  # would hang five minutes before the fix
    assert compiled.exit_code == 0, compiled.output
    rows = await ledger(engine, "quiet", "alice")
    assert [(r["trigger"], r["status"], r["metrics"]["records_read"]) for r in rows] == [
        ("memory_retain", "succeeded", 20)]


# ------------------------------------------------------------------------------------ 3. the Temporal UI


async def test_a_compile_run_is_summarised_numbered_and_its_details_are_final(settings, client, engine, tmp_path):
    assert (await wiki("retain", *scope("ui"), "--no-compile", sample_file(tmp_path, 10))).exit_code == 0
    async with running_worker(client, engine, settings):
        assert (await wiki("compile", *scope("ui"))).exit_code == 0
        handle = client.get_workflow_handle("compile:ui:alice")
        metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    description = await handle.describe()
    assert await description.static_summary() == "compile ui/alice · run 1 · trigger admin"
    assert description.typed_search_attributes.get(WIKI_RUN) == 1
    summary, final = metadata.current_details.split("\n")
    assert summary == "compile ui/alice · run 1 · trigger admin"
    assert final.startswith("succeeded: 10 memories read, ")


# ------------------------------------------------------------------------------------ 4. runs ended outside


async def test_status_shows_a_run_terminated_outside_the_workflow_as_terminated(settings, client: Client, engine,
                                                                                tmp_path):
    assert (await wiki("retain", *scope("term"), "--no-compile", sample_file(tmp_path, 30))).exit_code == 0
    slow = settings.model_copy(update={"scripted_latency_ms": 400})
    async with running_worker(client, engine, slow):
        assert (await wiki("compile", *scope("term"), "--no-wait")).exit_code == 0

        async def run_open() -> bool:
            return [r["status"] for r in await ledger(engine, "term", "alice")] == ["running"]

        await poll(run_open, timeout=30, what="the run's ledger row")
        await client.get_workflow_handle("compile:term:alice").terminate(reason="operator stopped it")

    state = json.loads((await wiki("status", *scope("term"), "--json")).stdout)
    assert state["running"] is False
    assert (state["latest_run"]["status"], state["latest_run"]["error"]) == (
        "terminated", "terminated outside the workflow: operator stopped it")
    text = await wiki("status", *scope("term"))
    assert "terminated" in text.stdout and "error: terminated outside the workflow: operator stopped it" in text.stdout
    jobs = json.loads((await wiki("jobs", "--tenant", "term", "--json")).stdout)
    assert [row["status"] for row in jobs] == ["terminated"]  # the ledger itself was corrected


# ------------------------------------------------------------------------------------ 6. the schedule


async def test_schedule_show_follows_install_and_pause(settings):
    try:
        assert (await wiki("schedule", "install")).exit_code == 0
        moved = await wiki("schedule", "install", "--hour", "5")
        assert moved.exit_code == 0 and "daily at 05:00 UTC" in moved.stdout
        shown = await wiki("schedule", "show", "--json")
        view = json.loads(shown.stdout)
        assert view["note"] == "wiki lint, daily at 05:00 UTC" and len(view["next_runs"]) == 3
        assert "02:00" not in (await wiki("schedule", "show")).stdout

        assert (await wiki("schedule", "pause")).exit_code == 0
        paused = json.loads((await wiki("schedule", "show", "--json")).stdout)
        assert (paused["paused"], paused["next_runs"]) == (True, [])
        text = (await wiki("schedule", "show")).stdout
        assert "paused (paused with `wiki schedule pause`)" in text and "none while paused" in text
        again = await wiki("schedule", "install", "--hour", "6")  # a paused schedule stays paused
        assert "daily at 06:00 UTC" in again.stdout and "paused" in again.stdout

        assert (await wiki("schedule", "unpause")).exit_code == 0
        active = json.loads((await wiki("schedule", "show", "--json")).stdout)
        assert (active["paused"], active["note"], len(active["next_runs"])) == (
            False, "wiki lint, daily at 06:00 UTC", 3)
    finally:
        await wiki("schedule", "delete")


# ------------------------------------------------------------------------------------ 7. usage errors


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["retain", "-", "--tenant", "t"], "Missing option '--owner' (see `wiki retain --help`)"),
        (["jobs", "--json", "--bogus"], "No such option: --bogus"),
        (["frobnicate"], "No such command 'frobnicate'"),
        (["jobs", "--limit", "many"], "Invalid value for '--limit'"),
        (["page", "show", "--tenant", "t", "--owner", "o"], "Missing argument 'PAGE'"),
        (["memory", "show", "--tenant", "t", "--owner", "o"], "Missing argument 'MEMORY_ID'"),
        (["sample", "--memories", "0"], "Invalid value for '--memories'"),
        (["compile", "--tenant", "t", "--owner", "o", "--model", " "], "--model must name a model"),
    ],
)
async def test_a_usage_error_is_one_line_and_exit_2(args, message):
    result = await wiki(*args)
    one_error_line(result, 2, message)
    assert result.stdout == ""


async def test_compile_of_a_scope_without_memories_starts_nothing(client):
    one_error_line(await wiki("compile", *scope("empty")), 1, "no memories are stored for empty/alice")
    assert [w async for w in client.list_workflows("WorkflowId = 'compile:empty:alice'")] == []


# ------------------------------------------------------------------------------------ 8. 80 columns


def fits(output: str, width: int = 80) -> None:
    too_long = [line for line in output.splitlines() if len(line.rstrip()) > width]
    assert not too_long, "\n".join(too_long)


async def test_tables_fit_80_columns_without_cutting_a_word(settings, client, engine, tmp_path, monkeypatch):
    assert (await wiki("retain", *scope("narrow"), "--no-compile", sample_file(tmp_path, 60))).exit_code == 0
    async with running_worker(client, engine, settings):
        assert (await wiki("compile", *scope("narrow"))).exit_code == 0
    long_scope = "a-tenant-with-a-long-name/and-an-owner-with-one-too"
    await db.ledger_row(engine, status="failed", days_old=1, tenant=long_scope.split("/")[0],
                        owner=long_scope.split("/")[1], trigger="bootstrap_import")
    monkeypatch.setenv("COLUMNS", "80")

    hits = json.loads((await wiki("search", "coffee", *scope("narrow"), "--json", "--limit", "50")).stdout)
    searched = await wiki("search", "coffee", *scope("narrow"), "--limit", "50")
    fits(searched.stdout)
    assert hits and all(f"{h['type']}/{h['slug']}" in searched.stdout for h in hits)  # slugs whole
    words = {word for h in hits for word in h["title"].split()}
    assert all(re.search(rf"(^|\s){re.escape(word)}(\s|$)", searched.stdout, re.M) for word in words)
    assert "0.0000" not in searched.stdout and "score" not in searched.stdout  # ranks, not raw scores

    backlinked = json.loads((await wiki("page", "backlinks", "topic/austin", *scope("narrow"), "--json")).stdout)
    backlinks = await wiki("page", "backlinks", "topic/austin", *scope("narrow"))
    fits(backlinks.stdout)
    assert backlinked and all(f"{b['from_type']}/{b['from_slug']}" in backlinks.stdout for b in backlinked)
    wide = await wiki("page", "backlinks", "topic/austin", *scope("narrow"), "--wide")
    assert all(b["context"] in wide.stdout for b in backlinked if b["context"])  # every cell whole

    jobs = await wiki("jobs")
    fits(jobs.stdout)
    for word in ("admin", "succeeded", "narrow/alice", "failed"):
        assert re.search(rf"(^|\s){word}(\s|$)", jobs.stdout, re.M), jobs.stdout
    # What cannot fit is elided, never cut across lines; --wide shows it whole.
    elided = next(line for line in jobs.stdout.splitlines() if "a-tenant-" in line)
    assert "…" in elided and not any(line.startswith(" ") and "owner" in line for line in jobs.stdout.splitlines())
    assert long_scope in (await wiki("jobs", "--wide")).stdout
    fits((await wiki("dev", "status")).stdout)


# ------------------------------------------------------------------------------------ 10. lint names pages


async def test_lint_names_the_pages_it_found(settings, client, engine):
    await seed_every_check(engine)
    async with running_worker(client, engine, settings):
        report = await wiki("lint", "--json")
        text = await wiki("lint")
    assert report.exit_code == 0, report.output
    findings = {(f["tenant"], f["owner"], f["check"], tuple(f["subject"]), f["detail"])
                for f in json.loads(report.stdout)["findings"]}
    assert findings == {
        ("lint", "alice", "broken_links", ("entity/alpha",), "links to entity/beta, which is archived"),
        ("lint", "alice", "duplicate_aliases", ("entity/alpha", "entity/gamma"), 'share the alias "twin"'),
        ("lint", "alice", "duplicate_titles", ("topic/same-1", "topic/same-2"), 'share the title "Same"'),
        ("lint", "alice", "oversize_pages", ("entity/huge",), "body of 8001 characters (the limit is 8000)"),
        ("lint", "alice", "promotion_candidates", ("Sam's Bakery",), next(
            f[4] for f in findings if f[2] == "promotion_candidates")),
        ("lint", "alice", "stale_pages", ("entity/old",), next(f[4] for f in findings if f[2] == "stale_pages")),
        # The target is in another scope: never named.
        ("lint", "bob", "broken_links", ("entity/alpha",), "links to a page of another scope"),
    }
    assert any(f[2] == "stale_pages" and re.fullmatch(r"last updated \d{4}-\d\d-\d\d, 91 days ago", f[4])
               for f in findings)
    assert any(f[2] == "promotion_candidates" and f[4].startswith("mentioned 3 times, last on ") for f in findings)
    flat = " ".join(text.stdout.split())
    for fragment in ("lint/alice oversize pages entity/huge body of 8001 characters",
                     "lint/alice broken links entity/alpha links to entity/beta, which is archived",
                     "lint/bob broken links entity/alpha links to a page of another scope"):
        assert fragment in flat, text.stdout
    # The lint counts what it checked, not only the scopes where it found something.
    checked = json.loads(report.stdout)["checked"]
    assert checked["scopes"] >= 2 and checked["active_pages"] >= 6, checked
    # (the text run comes after the JSON one, whose promotions may have added a page meanwhile)
    pages, scopes = map(int, re.search(r"checked (\d+) active page\(s\) in (\d+) scope\(s\)", flat).groups())
    assert pages >= checked["active_pages"] and scopes == checked["scopes"]
