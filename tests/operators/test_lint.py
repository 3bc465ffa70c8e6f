"""The nightly lint against the real services: each check on seeded rows, ledger pruning, the lint
ledger row, lint-triggered promotion end to end, and the Schedule that starts it."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

from temporalio.client import Client, ScheduleOverlapPolicy

from app.operations import (
    LINT_CATCHUP_WINDOW,
    describe_lint_schedule,
    install_lint_schedule,
    set_lint_schedule_paused,
)
from domain.lint import LintInput, LintReport
from messages.compile import compile_workflow_id
from runtime.search_attributes import WIKI_OWNER, WIKI_TENANT, WIKI_TRIGGER
from tests.compile.helpers import running_worker
from tests.compile.helpers import test_settings as worker_settings
from tests.operators import helpers as db

POLL = 0.1  # seconds between checks of a condition the test waits for


async def run_lint(client: Client, settings, **options) -> LintReport:
    return await client.execute_workflow("LintWorkflow", LintInput(trigger="admin", **options),
                                         id=f"lint-{uuid.uuid4()}", task_queue=settings.task_queue,
                                         result_type=LintReport)


async def seed_every_check(engine) -> dict[str, uuid.UUID]:
    t, o = "lint", "alice"
    alpha = await db.page(engine, t, o, "alpha")
    archived = await db.page(engine, t, o, "beta", status="archived")
    gamma = await db.page(engine, t, o, "gamma")
    await db.link(engine, alpha, archived)  # broken: the target is archived
    await db.link(engine, archived, alpha)  # fine: the target is active
    await db.link(engine, alpha, gamma)
    await db.alias(engine, alpha, "twin")
    await db.alias(engine, gamma, "twin")  # duplicate alias among active entities
    await db.alias(engine, alpha, "solo")
    await db.alias(engine, archived, "solo")  # not a duplicate: one of the pages is archived
    await db.page(engine, t, o, "same-1", page_type="topic", title="Same")
    await db.page(engine, t, o, "same-2", page_type="topic", title="Same")  # duplicate title
    await db.page(engine, t, o, "old", days_old=91)  # stale
    await db.page(engine, t, o, "oldish", days_old=89)
    await db.page(engine, t, o, "huge", body="x" * 8001)  # oversize
    await db.page(engine, t, o, "big", body="x" * 8000)
    await db.page(engine, t, o, "forgotten", status="archived", days_old=200, body="x" * 9000)  # archived: ignored
    candidate = await db.mention(engine, t, o, "Sam's Bakery", 3)
    await db.mention(engine, t, o, "Twice Seen", 2)
    await db.mention(engine, t, o, "Long Ago", 9, days_ago=31)
    await db.mention(engine, t, o, "Done Already", 9, status="promoted")
    # Provenance and bodies, by page: alpha has a section citing nothing and a repeated line; gamma
    # cites something that is no memory and a memory of another scope, and holds raw HTML.
    [memory] = await db.memories(engine, t, o, ["Dinner at Alpha."])
    [elsewhere] = await db.memories(engine, t, "bob", ["Dinner at Alpha, for Bob."])
    await db.section(engine, alpha, "notes", "- A.\n- [**A**](/wiki/entity/a).\n- A.\n- B.", 1, [memory])
    await db.section(engine, alpha, "visits", "- Visited.", 2)
    await db.section(engine, gamma, "notes", "<script>alert(1)</script>", 1, [memory, "not-a-memory", elsewhere])
    await db.section(engine, archived, "notes", "- X.\n- X.", 1)  # archived: ignored
    # Another scope: one broken link only. Its page's link target is in the first scope.
    other = await db.page(engine, "lint", "bob", "alpha")
    await db.link(engine, other, alpha)
    return {"candidate": candidate}


async def test_each_check_counts_its_findings_per_scope_and_prunes_the_ledger(client, engine):
    settings = worker_settings()
    seeded = await seed_every_check(engine)
    pruned = await db.ledger_row(engine, status="succeeded", days_old=31)
    await db.ledger_row(engine, status="running", days_old=40)  # still open: kept
    await db.ledger_row(engine, status="failed", days_old=29)

    async with running_worker(client, engine, settings):
        # One scope per page: the two scopes with findings are checked on two pages (and a third, empty).
        report = await run_lint(client, settings, scopes_per_page=1)
        # The candidate's scope got a compile (trigger lint); let it finish before the worker stops.
        await client.get_workflow_handle("compile:lint:alice").result()

    assert report.ok and report.trigger == "admin"
    scopes = {(s.tenant, s.owner): s for s in report.scopes}
    assert set(scopes) == {("lint", "alice"), ("lint", "bob")}
    alice = scopes["lint", "alice"]
    assert (alice.broken_links, alice.duplicate_aliases, alice.duplicate_titles) == (1, 1, 1)
    assert (alice.stale_pages, alice.oversize_pages, alice.promotion_candidates) == (1, 1, 1)
    assert alice.promotion_mention_ids == [seeded["candidate"]] and alice.compile_started
    assert (alice.unsourced_sections, alice.foreign_sources, alice.repeated_lines, alice.raw_html) == (1, 2, 1, 1)
    assert sorted((p.check, p.page, p.count) for p in alice.problem_pages) == [
        ("foreign_sources", "entity/gamma", 2), ("raw_html", "entity/gamma", 1),
        ("repeated_lines", "entity/alpha", 1), ("unsourced_sections", "entity/alpha", 1)]
    bob = scopes["lint", "bob"]
    assert (bob.broken_links, bob.promotion_candidates, bob.compile_started) == (1, 0, False)
    assert bob.problem_pages == []
    totals = report.totals
    assert (totals.scopes, totals.broken_links, totals.promotion_compiles_started) == (2, 2, 1)
    assert totals.ledger_rows_pruned == 1

    remaining = {r.run_id for r in await db.rows(engine, "SELECT run_id FROM wiki_compile_jobs WHERE kind = 'compile'"
                                                         " AND workflow_id = 'compile:t:o'")}
    assert pruned not in remaining and len(remaining) == 2
    lint_rows = await db.rows(engine, "SELECT trigger, status, tenant_id, metrics FROM wiki_compile_jobs "
                                      "WHERE kind = 'lint'")
    assert len(lint_rows) == 1
    assert (lint_rows[0].trigger, lint_rows[0].status, lint_rows[0].tenant_id) == ("admin", "succeeded", None)
    assert lint_rows[0].metrics["broken_links"] == 2 and lint_rows[0].metrics["ok"] is True


async def test_lint_promotes_a_candidate_even_when_no_memory_is_new(client, engine):
    settings = worker_settings()
    tenant, owner = "promo", "alice"
    memory_ids = await db.memories(engine, tenant, owner, [
        "Bought sourdough at Sam's Bakery.",
        "Sam's Bakery had cardamom buns today.",
        "Met Ana at Sam's Bakery for coffee.",
    ])
    await db.move_cursor_past_every_memory(engine, tenant, owner)
    contexts = [{"quote": quote, "source_ref": ref, "seen_at": "2026-01-01T00:00:00+00:00"}
                for quote, ref in zip(["Bought sourdough there.", "Cardamom buns.", "Coffee with Ana."], memory_ids,
                                      strict=True)]
    mention_id = await db.mention(engine, tenant, owner, "Sam's Bakery", 3, contexts=contexts)

    async with running_worker(client, engine, settings):
        report = await run_lint(client, settings)
        assert report.totals.promotion_candidates == 1 and report.totals.promotion_compiles_started == 1
        metrics = await client.get_workflow_handle(compile_workflow_id(tenant, owner)).result()

    assert metrics["records_read"] == 0 and metrics["planner_calls"] == 1 and metrics["unresolved_promoted"] == 1
    mention = (await db.rows(engine, "SELECT status, promoted_page_id FROM wiki_unresolved_mentions WHERE id = :id",
                             id=mention_id))[0]
    assert mention.status == "promoted"
    page = (await db.rows(engine, "SELECT id, type, slug, status FROM wiki_pages WHERE id = :id",
                          id=mention.promoted_page_id))[0]
    assert (page.type, page.slug, page.status) == ("entity", "sam-s-bakery", "active")
    cited = {r.source_ref for r in await db.rows(engine, """
        SELECT src.source_ref FROM wiki_section_sources src JOIN wiki_page_sections s ON s.id = src.section_id
        WHERE s.page_id = :page""", page=page.id)}
    assert cited == set(memory_ids)
    triggers = [r.trigger for r in await db.rows(engine, "SELECT trigger FROM wiki_compile_jobs WHERE kind = 'compile'"
                                                          " AND tenant_id = :t", t=tenant)]
    assert triggers == ["lint"]


async def _scheduled_run_id(client: Client, schedule_id: str) -> str:
    handle = client.get_schedule_handle(schedule_id)
    for _ in range(200):
        recent = (await handle.describe()).info.recent_actions
        if recent:
            return recent[-1].action.workflow_id
        await asyncio.sleep(POLL)
    raise AssertionError("the triggered schedule started no workflow")


async def test_installing_the_schedule_twice_updates_it_and_a_triggered_run_lints(client, engine):
    settings = worker_settings()
    schedule_id = f"wiki-lint-{uuid.uuid4().hex[:8]}"
    try:
        assert await install_lint_schedule(client, settings, hour=5, schedule_id=schedule_id) == "created"
        await set_lint_schedule_paused(client, True, schedule_id)
        assert await install_lint_schedule(client, settings, schedule_id=schedule_id) == "updated"

        view = await describe_lint_schedule(client, schedule_id)
        assert (view.hours_utc, view.minutes, view.time_zone) == ([2], [0], "UTC")
        assert view.overlap == ScheduleOverlapPolicy.SKIP.name
        assert view.catchup_window_seconds == LINT_CATCHUP_WINDOW.total_seconds()
        assert view.task_queue == settings.task_queue
        assert view.paused, "re-installing must not unpause a paused schedule"
        raw = await client.get_schedule_handle(schedule_id).describe()
        assert raw.schedule.action.execution_timeout == timedelta(hours=1)

        await set_lint_schedule_paused(client, False, schedule_id)
        view = await describe_lint_schedule(client, schedule_id)
        assert not view.paused and all(t.hour == 2 and t.minute == 0 for t in view.next_runs)

        await db.page(engine, "sched", "alice", "huge", body="y" * 9000)
        async with running_worker(client, engine, settings):
            await client.get_schedule_handle(schedule_id).trigger()
            run = client.get_workflow_handle(await _scheduled_run_id(client, schedule_id), result_type=LintReport)
            report = await run.result()
        assert report.trigger == "schedule" and report.totals.oversize_pages == 1
        attributes = (await run.describe()).typed_search_attributes
        assert (attributes.get(WIKI_TENANT), attributes.get(WIKI_OWNER), attributes.get(WIKI_TRIGGER)) == (
            "*", "*", "schedule")
    finally:
        await client.get_schedule_handle(schedule_id).delete()


async def test_lint_hands_a_scope_at_most_twenty_promotions_a_night_most_seen_first(client, engine):
    settings = worker_settings()
    tenant, owner = "many", "alice"
    memory_ids = await db.memories(engine, tenant, owner, ["Coffee on South Congress.", "Tacos on East Sixth.",
                                                           "A show at the Continental Club."])
    await db.move_cursor_past_every_memory(engine, tenant, owner)
    contexts = [{"quote": "seen there", "source_ref": ref, "seen_at": "2026-01-01T00:00:00+00:00"} for ref in memory_ids]
    # 25 candidates, each seen a different number of times (3 to 27).
    by_count = {count: await db.mention(engine, tenant, owner, f"Place {count}", count, contexts=contexts)
                for count in range(3, 28)}
    most_seen = [by_count[count] for count in range(27, 7, -1)]

    async with running_worker(client, engine, settings):
        report = await run_lint(client, settings)
        await client.get_workflow_handle(f"compile:{tenant}:{owner}").result()

    [scope] = [s for s in report.scopes if s.tenant == tenant]
    assert scope.promotion_candidates == 25 and scope.compile_started
    assert scope.promotion_mention_ids == most_seen
    open_mentions = await db.rows(engine, "SELECT alias FROM wiki_unresolved_mentions "
                                          "WHERE tenant_id = :t AND status = 'open'", t=tenant)
    # The compile promoted the twenty it was handed; the five least seen wait for another night.
    assert sorted(row.alias for row in open_mentions) == [f"Place {count}" for count in range(3, 8)]
