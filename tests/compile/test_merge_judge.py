"""The merge judge in a real compile: ambiguous pairs are judged before resolve, once per batch.

Paris comes first, from visits whose addresses are in France. Then "Paris, France" and "Paris, Texas"
are each written twice in a later batch, with no address: the planner cannot tell them apart from
the candidate list, so both are proposed as new pages and the resolver meets two ambiguous pairs.
The judge (scripted here) reads the memories behind the Paris page: France, not Texas.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from app.worker import WORKFLOWS, activities_for
from domain import errors
from domain.memory import MemoryIn
from messages.compile import JudgeMergesInput, JudgeMergesResult
from store.memories import store_memories
from tests.compile.helpers import compile_scope, ledger, ledger_total, running_worker, test_settings

START = datetime(2026, 4, 1, 12, tzinfo=UTC)


def paris_visits() -> list[MemoryIn]:
    return [MemoryIn(content=f"Coffee at Cafe de Flore, day {day}.", occurred_at=START + timedelta(days=day),
                     metadata={"entities": [{"name": "Cafe de Flore", "type": "entity", "kind": "cafe"}],
                               "place": {"name": "Cafe de Flore", "city": "Paris",
                                         "address": "172 Bd Saint-Germain, 75006 Paris, France"}})
            for day in (1, 2)]


def qualified_cities() -> list[MemoryIn]:
    lines = [("Paris, France", "Back to Paris, France in May: booked."), ("Paris, France", "Paris, France again soon."),
             ("Paris, Texas", "Drove up to Paris, Texas for the day."), ("Paris, Texas", "Paris, Texas diner lunch.")]
    return [MemoryIn(content=content, occurred_at=START + timedelta(days=10 + i),
                     metadata={"entities": [{"name": name, "type": "topic", "kind": "city"}]})
            for i, (name, content) in enumerate(lines)]


async def topic_titles(engine, tenant: str) -> list[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT title FROM wiki_pages WHERE tenant_id = :t AND type = 'topic' "
                                       "ORDER BY title"), {"t": tenant})
        return [row.title for row in rows]


async def paris_aliases(engine, tenant: str) -> list[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT a.alias FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
            WHERE p.tenant_id = :t AND p.type = 'topic' AND p.slug = 'paris' ORDER BY a.alias
        """), {"t": tenant})
        return [row.alias for row in rows]


async def compile_in_two_batches(client, engine, settings, tenant: str, worker_for) -> None:
    await store_memories(engine, tenant, "alice", paris_visits())
    async with worker_for():
        await compile_scope(client, settings, tenant, "alice")
        await store_memories(engine, tenant, "alice", qualified_cities())
        await compile_scope(client, settings, tenant, "alice")


async def test_the_judge_merges_the_country_and_keeps_the_town_apart(client, engine):
    settings = test_settings()
    await compile_in_two_batches(client, engine, settings, "judged",
                                 lambda: running_worker(client, engine, settings))

    assert await topic_titles(engine, "judged") == ["Paris", "Paris, Texas"]
    assert "paris france" in await paris_aliases(engine, "judged")
    rows = await ledger(engine, "judged", "alice")
    assert ledger_total(rows, "merge_questions") == 2
    assert ledger_total(rows, "merge_judge_calls") == 1  # one call for the batch's two pairs
    assert ledger_total(rows, "judged_merges") == 1 and ledger_total(rows, "judged_apart") == 1
    assert ledger_total(rows, "merge_judge_failures") == 0


class FailingJudge:
    @activity.defn(name="llm.judge_merges")
    async def judge_merges(self, request: JudgeMergesInput) -> JudgeMergesResult:
        raise ApplicationError("the model rejected the request", type=errors.LLM_REJECTED, non_retryable=True)


async def test_a_failed_judge_merges_nothing_ambiguous_and_the_compile_goes_on(client, engine):
    settings = test_settings()
    real = [a for a in activities_for(engine, settings) if a.__name__ != "judge_merges"]

    def worker():
        return Worker(client, task_queue=settings.task_queue, workflows=WORKFLOWS,
                      activities=[*real, FailingJudge().judge_merges])

    await compile_in_two_batches(client, engine, settings, "unjudged", worker)

    assert await topic_titles(engine, "unjudged") == ["Paris", "Paris, France", "Paris, Texas"]
    rows = await ledger(engine, "unjudged", "alice")
    assert [row["status"] for row in rows] == ["succeeded", "succeeded"]
    assert ledger_total(rows, "merge_judge_failures") >= 1
    assert ledger_total(rows, "unjudged_merge_pairs") == 2 and ledger_total(rows, "judged_merges") == 0
