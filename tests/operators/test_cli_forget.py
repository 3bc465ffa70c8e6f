"""`wiki memory forget` on a compiled wiki: the dry run lists the blast radius and changes nothing, the
forget is served by the scope's compile and its receipt shows in `wiki jobs`, bad ids are refused."""

from __future__ import annotations

import json
import re

from temporalio.client import Client

from messages.compile import compile_workflow_id
from store.memories import store_memories
from tests.compile.helpers import compile_scope, running_worker
from tests.operators.cli import one_error_line, scope, wiki
from tests.operators.test_cli_reads import franklin

TENANT = "forgetcli"


async def test_dry_run_then_forget_then_the_receipt_in_jobs(settings, client: Client, engine):
    stored = await store_memories(engine, TENANT, "alice", [
        franklin("Brisket at Franklin Barbecue with Sam.", 1), franklin("Back at Franklin Barbecue for beef ribs.", 2),
        franklin("Franklin Barbecue sold out of the Wagyuzilla special by noon.", 3)])
    wagyu = str(stored.inserted[2])
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, TENANT, "alice")
        preview = await wiki("memory", "forget", wagyu, *scope(TENANT), "--dry-run")
        assert preview.exit_code == 0, preview.output
        assert "claims removed:" in preview.stdout and "entity/franklin-barbecue" in preview.stdout
        radius = json.loads((await wiki("memory", "forget", wagyu, *scope(TENANT), "--dry-run", "--json")).stdout)
        assert radius["memory_ids"] == [wagyu] and radius["claims_removed"] >= 1
        assert "Wagyuzilla" in (await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT))).stdout

        forgot = await wiki("memory", "forget", wagyu, *scope(TENANT))
        assert forgot.exit_code == 0, forgot.output
        assert "forget queued for 1 memories" in forgot.stdout
        await client.get_workflow_handle(compile_workflow_id(TENANT, "alice")).result()

    one_error_line(await wiki("memory", "show", wagyu, *scope(TENANT)), 1, f"no memory {wagyu} in {TENANT}/alice")
    assert "Wagyuzilla" not in (await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT))).stdout
    jobs = json.loads((await wiki("jobs", "--tenant", TENANT, "--json")).stdout)
    receipts = [row for row in jobs if row["kind"] == "forget"]
    assert len(receipts) == 1 and receipts[0]["metrics"]["memory_ids"] == [wagyu]
    assert "Wagyuzilla" not in json.dumps(jobs)
    assert "forget" in (await wiki("jobs", "--tenant", TENANT)).stdout


async def test_bad_and_unknown_ids_are_refused_in_one_line(settings, engine):
    stored = await store_memories(engine, TENANT, "alice", [franklin("Brisket at Franklin Barbecue.", 1)])
    one_error_line(await wiki("memory", "forget", "nope", *scope(TENANT), "--dry-run"), 2, "not a memory id: 'nope'")
    # Another scope's id is exactly an absent one.
    one_error_line(await wiki("memory", "forget", str(stored.inserted[0]), *scope("someone-else"), "--dry-run"), 1,
                   f"no memory {stored.inserted[0]} in someone-else/alice")


def _counts(lines: str) -> list[str]:
    """A report's lines with the names a receipt does not keep left out (the counts stay)."""
    out = []
    for line in lines.splitlines()[1:]:
        line = line.strip()
        if line.startswith(("the writer:", "cost:")):
            continue
        out.append(re.sub(r" \([^()]*(\([^()]*\)[^()]*)*\)", "", line))
    return out


async def test_forget_waits_for_its_receipt_which_says_what_the_dry_run_said(settings, client: Client, engine):
    stored = await store_memories(engine, TENANT, "alice", [
        franklin("Brisket at Franklin Barbecue with Sam.", 1), franklin("Back at Franklin Barbecue for beef ribs.", 2),
        franklin("Franklin Barbecue sold out of the Wagyuzilla special by noon.", 3),
        franklin("Franklin Barbecue's line wrapped around the block past the Smokeluxe sign.", 4)])
    wagyu, smoke = str(stored.inserted[2]), str(stored.inserted[3])
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, TENANT, "alice")
        dry = await wiki("memory", "forget", wagyu, *scope(TENANT), "--dry-run")
        dry_json = json.loads((await wiki("memory", "forget", wagyu, *scope(TENANT), "--dry-run", "--json")).stdout)
        waited = await wiki("memory", "forget", wagyu, *scope(TENANT), "--wait")
        assert waited.exit_code == 0, waited.output
        assert waited.stdout.startswith(f"forgotten, in {TENANT}/alice (receipt of request ")
        # The same lines, the receipt's without the names of what it removed.
        assert _counts(waited.stdout) == _counts(dry.stdout)
        assert "Wagyuzilla" not in waited.stdout
        again = json.loads((await wiki("memory", "forget", smoke, *scope(TENANT), "--wait", "--json")).stdout)
        assert again["memories_forgotten"] == 1 and again["report"]["memory_ids"] == [smoke]
        assert dry_json["claims_removed"] >= 1 and set(dry_json) == set(again["report"])
    one_error_line(await wiki("memory", "forget", wagyu, *scope(TENANT), "--dry-run", "--wait"), 2,
                   "--dry-run changes nothing")


async def test_a_wait_that_runs_out_says_so_in_one_line_and_the_forget_still_happens(settings, client: Client, engine):
    stored = await store_memories(engine, TENANT, "alice", [
        franklin("Brisket at Franklin Barbecue with Sam.", 1), franklin("Back at Franklin Barbecue for beef ribs.", 2)])
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, TENANT, "alice")
    # A worker whose every model call takes seconds: the pass outlasts a one-second wait.
    slow = settings.model_copy(update={"scripted_latency_ms": 4000})
    async with running_worker(client, engine, slow):
        timed_out = await wiki("memory", "forget", str(stored.inserted[0]), *scope(TENANT), "--wait", "--timeout", "1")
        one_error_line(timed_out, 1, "no receipt within 1 s for forget request ")
        assert "still queued" in timed_out.stderr or "not deleted" in timed_out.stderr
        await client.get_workflow_handle(compile_workflow_id(TENANT, "alice")).result()
    jobs = json.loads((await wiki("jobs", "--tenant", TENANT, "--json")).stdout)
    assert [row["metrics"]["memory_ids"] for row in jobs if row["kind"] == "forget"] == [[str(stored.inserted[0])]]
