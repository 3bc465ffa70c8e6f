"""A batch's database steps: run again, they answer as the first time; refused, they fail plainly.

They run as local activities, whose results are recorded only when the workflow task completes, so a
task that fails after it resolved and applied a batch (a worker killed, a completion rejected)
replays and calls resolve and apply again — after the apply. Each must answer what it answered the
first time, and never write twice. And writes the database refuses fail the compile at once with
the reason, rather than being retried forever.
"""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.compile_steps import CompileSteps
from domain import errors, ids
from domain.memory import MemoryIn
from domain.plan import NewPage, NewSection, Plan
from messages.compile import ApplyBatchInput, CursorPosition, NextBatchInput, ResolvePlanInput, Scope
from store import plan_staging
from store.compile_runs import read_cursor
from store.memories import store_memories
from tests.compile.helpers import wiki_snapshot

TENANT = "rerun"


def new_page_plan(memory_id: str) -> Plan:
    return Plan(pageUpdates=[], unresolvedMentions=[], promotions=[], newPages=[NewPage(
        type="entity", slug="franklin-barbecue", title="Franklin Barbecue", summary="Barbecue in Austin.",
        source_refs=[memory_id],
        sections=[NewSection(slug="overview", heading="Overview", body_md="Brisket worth the line.",
                             source_refs=[memory_id])])])


async def staged_new_page(engine, store: CompileSteps, env: ActivityEnvironment):
    """A scope with one memory and a staged plan that creates one page from it."""
    scope = Scope(tenant=TENANT, owner=f"o-{uuid.uuid4().hex[:8]}")
    await store_memories(engine, scope.tenant, scope.owner, [
        MemoryIn(content="Queued two hours at Franklin Barbecue for brisket.", metadata={})])
    batch = await env.run(store.next_batch, NextBatchInput(scope=scope, limit=50))
    plan_id = uuid.uuid4()
    async with engine.begin() as conn:
        await plan_staging.stage_plan(conn, plan_id, scope, "run", batch.memory_ids,
                                      new_page_plan(str(batch.memory_ids[0])))
    apply = ApplyBatchInput(scope=scope, plan_id=plan_id, cursor_expected=batch.cursor_from,
                            cursor_next=batch.positions[-1], deterministic_linking_enabled=True)
    return scope, ResolvePlanInput(scope=scope, plan_id=plan_id), apply


async def test_resolve_and_apply_run_again_after_the_apply_answer_as_the_first_time(engine):
    store, env = CompileSteps(engine), ActivityEnvironment()
    scope, resolve, apply = await staged_new_page(engine, store, env)
    resolved = await env.run(store.resolve_plan, resolve)
    assert resolved.new_pages_planned == 1 and resolved.alias_dedup_merged == 0
    applied = await env.run(store.apply_batch, apply)
    assert applied.pages_created == 1
    wiki = await wiki_snapshot(engine, scope.tenant, scope.owner)

    # Resolved afresh, the page would now be found by its alias: a merge, not a new page.
    assert await env.run(store.resolve_plan, resolve) == resolved
    again = await env.run(store.apply_batch, apply)
    assert again.already_applied and again.model_copy(update={"already_applied": False}) == applied
    assert await wiki_snapshot(engine, scope.tenant, scope.owner) == wiki


async def test_a_skipped_memory_applied_again_after_the_cursor_moved_on_is_already_applied(engine):
    scope = Scope(tenant=TENANT, owner=f"o-{uuid.uuid4().hex[:8]}")
    await store_memories(engine, scope.tenant, scope.owner, [MemoryIn(content=f"Memory {n}.", metadata={}) for n in range(3)])
    store = CompileSteps(engine)
    env = ActivityEnvironment()
    batch = await env.run(store.next_batch, NextBatchInput(scope=scope, limit=50))
    start, first, second = batch.cursor_from, batch.positions[0], batch.positions[1]

    def skip(expected: CursorPosition, next_position: CursorPosition) -> ApplyBatchInput:
        return ApplyBatchInput(scope=scope, plan_id=None, cursor_expected=expected, cursor_next=next_position,
                               deterministic_linking_enabled=True)

    assert not (await env.run(store.apply_batch, skip(start, first))).already_applied
    assert not (await env.run(store.apply_batch, skip(first, second))).already_applied
    # The first skip again, with the cursor already past it: nothing to do, and no error.
    assert (await env.run(store.apply_batch, skip(start, first))).already_applied
    async with engine.connect() as conn:
        assert await read_cursor(conn, scope) == second

    # A cursor moved back (a reset) is still an error: this skip's memories were never compiled there.
    async with engine.begin() as conn:
        await conn.execute(text(
            "UPDATE wiki_compile_cursors SET last_record_updated_at = NULL, last_record_id = NULL "
            "WHERE tenant_id = :t AND owner_id = :o"), {"t": scope.tenant, "o": scope.owner})
    with pytest.raises(ApplicationError) as raised:
        await env.run(store.apply_batch, skip(first, second))
    assert raised.value.type == errors.CURSOR_MOVED


def test_cursor_positions_follow_the_keyset_order():
    earlier = CursorPosition(updated_at="2026-11-23T10:00:00.001Z", record_id=uuid.UUID(int=2))
    same_ms_higher_id = CursorPosition(updated_at="2026-11-23T10:00:00.001Z", record_id=uuid.UUID(int=3))
    later = CursorPosition(updated_at="2026-11-23T10:00:00.002Z", record_id=uuid.UUID(int=1))
    start = CursorPosition()
    assert later.at_or_after(same_ms_higher_id) and same_ms_higher_id.at_or_after(earlier)
    assert earlier.at_or_after(earlier) and earlier.at_or_after(start) and start.at_or_after(start)
    assert not earlier.at_or_after(same_ms_higher_id) and not start.at_or_after(earlier)


async def test_writes_the_database_refuses_fail_the_apply_without_retrying_and_write_nothing(engine):
    store, env = CompileSteps(engine), ActivityEnvironment()
    scope, resolve, apply = await staged_new_page(engine, store, env)
    await env.run(store.resolve_plan, resolve)
    # A row already holds the id the new page would get (under another slug): its insert must fail.
    taken = ids.page_id(scope.tenant, scope.owner, "entity", "franklin-barbecue")
    async with engine.begin() as conn:
        await conn.execute(text(
            "INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title) "
            "VALUES (:id, :t, :o, 'entity', 'squatter', 'Squatter')"), {"id": taken, "t": scope.tenant, "o": scope.owner})

    with pytest.raises(ApplicationError) as raised:
        await env.run(store.apply_batch, apply)
    assert raised.value.type == errors.APPLY_REJECTED and raised.value.non_retryable
    assert "nothing was written and the cursor did not move" in raised.value.message
    assert "wiki_pages_pkey" in raised.value.message  # the database's own reason
    async with engine.connect() as conn:
        assert await read_cursor(conn, scope) == apply.cursor_expected
        titles = (await conn.execute(text("SELECT title FROM wiki_pages WHERE owner_id = :o"),
                                     {"o": scope.owner})).scalars().all()
    assert titles == ["Squatter"]


async def test_an_apply_carrying_a_plan_after_the_cursor_moved_writes_nothing(engine):
    """The cursor's compare-and-set guards a planned batch as it guards a skip: once anything else has
    moved the cursor (another compile, a reset), the batch's rows are not written at all."""
    store, env = CompileSteps(engine), ActivityEnvironment()
    scope = Scope(tenant=TENANT, owner=f"o-{uuid.uuid4().hex[:8]}")
    await store_memories(engine, scope.tenant, scope.owner, [
        MemoryIn(content=f"Visit {n} to Franklin Barbecue.", metadata={}) for n in range(3)])
    # Stored within one millisecond: the three positions share their timestamp and differ by id only.
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE memory_units SET updated_at = date_trunc('milliseconds', now()) "
                                "WHERE tenant_id = :t AND owner_id = :o"), {"t": scope.tenant, "o": scope.owner})
    batch = await env.run(store.next_batch, NextBatchInput(scope=scope, limit=50))
    start, (p0, p1, p2) = batch.cursor_from, batch.positions
    assert p0.updated_at == p1.updated_at == p2.updated_at

    def skip(expected: CursorPosition, next_position: CursorPosition) -> ApplyBatchInput:
        return ApplyBatchInput(scope=scope, plan_id=None, cursor_expected=expected, cursor_next=next_position,
                               deterministic_linking_enabled=True)

    # A batch of the last two memories, planned and resolved while the cursor stood after the first.
    assert not (await env.run(store.apply_batch, skip(start, p0))).already_applied
    plan_id = uuid.uuid4()
    async with engine.begin() as conn:
        await plan_staging.stage_plan(conn, plan_id, scope, "run", batch.memory_ids[1:],
                                      new_page_plan(str(batch.memory_ids[1])))
    await env.run(store.resolve_plan, ResolvePlanInput(scope=scope, plan_id=plan_id))
    apply = ApplyBatchInput(scope=scope, plan_id=plan_id, cursor_expected=p0, cursor_next=p2,
                            deterministic_linking_enabled=True)
    async def wiki_rows() -> dict[str, list[tuple]]:
        return {table: rows for table, rows in (await wiki_snapshot(engine, scope.tenant, scope.owner)).items()
                if table != "cursor"}

    empty = await wiki_rows()
    assert not any(empty.values())

    async def refused(cursor_now: CursorPosition) -> None:
        with pytest.raises(ApplicationError) as raised:
            await env.run(store.apply_batch, apply)
        assert raised.value.type == errors.CURSOR_MOVED and raised.value.non_retryable
        assert await wiki_rows() == empty
        async with engine.connect() as conn:
            assert await read_cursor(conn, scope) == cursor_now

    # Moved on by one memory (same timestamp, another id), then reset to the start.
    assert not (await env.run(store.apply_batch, skip(p0, p1))).already_applied
    await refused(p1)
    async with engine.begin() as conn:
        await conn.execute(text(
            "UPDATE wiki_compile_cursors SET last_record_updated_at = NULL, last_record_id = NULL "
            "WHERE tenant_id = :t AND owner_id = :o"), {"t": scope.tenant, "o": scope.owner})
    await refused(start)

    # With the cursor back where the batch started, the same apply writes the page and moves on.
    await env.run(store.apply_batch, skip(start, p0))
    applied = await env.run(store.apply_batch, apply)
    assert applied.pages_created == 1 and not applied.already_applied
    async with engine.connect() as conn:
        assert await read_cursor(conn, scope) == p2
    assert [row[3] for row in (await wiki_rows())["pages"]] == ["Franklin Barbecue"]
