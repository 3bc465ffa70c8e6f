"""A failed compile, resumed, leaves exactly the wiki an uninterrupted compile of the same memories
leaves: row for row, in a second fresh database (ids are uuid5 of natural keys, so the two compare).

Two failures: the model refusing a request after some batches were committed, and a batch whose writes
the database refuses (`ApplyRejected`: nothing of that batch written) until the cause is removed.
The aggregation pass is off: it works on what one run changed, so how a compile is cut into runs
decides its rollups (see test_durability's caps test); the leaf wiki must not depend on it.
"""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from app.operations import resume_scope
from domain import errors
from runtime.temporal_client import signal_compile
from store.memories import store_memories
from tests.compile.helpers import ledger, running_worker, sample_memories
from tests.compile.helpers import test_settings as settings_for
from tests.compile.test_durability import UNCAPPED, assert_same_wiki, comparable_wiki, cursor_record_id
from tests.operators.test_cli_operators import RejectingPlanner, worker_with_rejecting_planner

OWNER = "alice"
COUNT, PAGE_SIZE = 40, 10  # four batches


def failure_types(error: BaseException) -> list[str]:
    """The application error types along a workflow failure's chain of causes."""
    types = []
    while error is not None:
        if isinstance(error, ApplicationError):
            types.append(error.type)
        error = getattr(error, "cause", None)
    return types


def leaf_settings():
    return settings_for(WIKI_RECORD_PAGE_SIZE=PAGE_SIZE, WIKI_AGGREGATION_PASS_ENABLED=False, **UNCAPPED)


async def uninterrupted(client, engine, settings, tenant: str) -> dict[str, list[tuple]]:
    await store_memories(engine, tenant, OWNER, sample_memories(COUNT))
    async with running_worker(client, engine, settings):
        await (await signal_compile(client, tenant, OWNER, trigger="admin", settings=settings)).result()
    return await comparable_wiki(engine, tenant, OWNER)


async def resume_to_the_end(client, engine, settings, tenant: str) -> None:
    async with running_worker(client, engine, settings):
        await (await resume_scope(client, engine, settings, tenant, OWNER)).result()
    rows = await ledger(engine, tenant, OWNER)
    assert [(row["trigger"], row["status"]) for row in rows] == [("admin", "failed"), ("resume", "succeeded")]
    assert sum(row["metrics"]["records_read"] for row in rows) == COUNT, "a memory was compiled twice or never"


async def test_a_compile_resumed_after_the_model_failed_equals_an_uninterrupted_one(client, engine, second_engine):
    tenant = f"t-{uuid.uuid4().hex[:10]}"
    settings = leaf_settings()
    reference = await uninterrupted(client, second_engine, settings, tenant)

    await store_memories(engine, tenant, OWNER, sample_memories(COUNT))
    async with worker_with_rejecting_planner(client, engine, settings, good_calls=2):
        handle = await signal_compile(client, tenant, OWNER, trigger="admin", settings=settings)
        with pytest.raises(WorkflowFailureError):
            await handle.result()
    [failed] = await ledger(engine, tenant, OWNER)
    assert (failed["error"], failed["metrics"]["records_read"]) == (RejectingPlanner.MESSAGE, 2 * PAGE_SIZE)

    await resume_to_the_end(client, engine, settings, tenant)
    assert_same_wiki(await comparable_wiki(engine, tenant, OWNER), reference)


async def test_a_compile_resumed_after_apply_rejected_equals_an_uninterrupted_one(client, engine, second_engine):
    tenant = f"t-{uuid.uuid4().hex[:10]}"
    settings = leaf_settings()
    reference = await uninterrupted(client, second_engine, settings, tenant)
    # A page the second half of the memories creates: every memory it cites comes after the 20th.
    async with second_engine.connect() as conn:
        order = [str(m) for m in (await conn.execute(text(
            "SELECT id FROM memory_units WHERE tenant_id = :t ORDER BY updated_at, id"), {"t": tenant})).scalars()]
        cited = await conn.execute(text("""
            SELECT p.id, p.type, p.slug, array_agg(ss.source_ref) AS refs FROM wiki_pages p
            JOIN wiki_page_sections s ON s.page_id = p.id JOIN wiki_section_sources ss ON ss.section_id = s.id
            WHERE p.tenant_id = :t GROUP BY p.id, p.type, p.slug ORDER BY p.slug"""), {"t": tenant})
        late = next(row for row in cited if min(order.index(ref) for ref in row.refs) >= 2 * PAGE_SIZE)

    # Another scope's row already holds that page's id: the batch creating the page is refused whole.
    await store_memories(engine, tenant, OWNER, sample_memories(COUNT))
    async with engine.begin() as conn:
        await conn.execute(text("INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title) "
                                "VALUES (:id, 'squatter', 'bob', :type, 'squatter', 'Squatter')"),
                           {"id": late.id, "type": late.type})
    async with running_worker(client, engine, settings):
        handle = await signal_compile(client, tenant, OWNER, trigger="admin", settings=settings)
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
    # The run failed as any compile fails: one sentence, and its ledger row closed with it.
    assert failure_types(failure.value) == ["CompileFailed", errors.APPLY_REJECTED]
    message = failure.value.cause.message
    assert message.startswith("the database refused the writes") and "\n" not in message
    [failed] = await ledger(engine, tenant, OWNER)
    assert (failed["status"], failed["error"]) == ("failed", message)
    assert failed["metrics"]["records_read"] >= 2 * PAGE_SIZE
    assert await cursor_record_id(engine, tenant, OWNER) is not None, "no batch was committed before the refusal"
    async with engine.connect() as conn:
        rejected = await conn.execute(text("SELECT count(*) FROM wiki_pages WHERE tenant_id = :t AND slug = :s"),
                                      {"t": tenant, "s": late.slug})
        assert rejected.scalar_one() == 0

    # The cause removed, the resumed compile plans the refused batch again and finishes.
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM wiki_pages WHERE tenant_id = 'squatter'"))
    await resume_to_the_end(client, engine, settings, tenant)
    assert_same_wiki(await comparable_wiki(engine, tenant, OWNER), reference)
