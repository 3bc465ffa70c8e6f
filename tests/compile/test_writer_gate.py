"""`llm.write_section` checks a model writer's draft before storing it (activities/writer_gate.py): on a
real database, a writer that condenses honestly keeps its lines, one that invents a name in a fold has
that line dropped from the stored draft and recorded among the scope's rejected claims with the run."""

from __future__ import annotations

import uuid

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import ActivityEnvironment

from activities.planning import Planning
from domain.context import MemoryRecord
from domain.memory import MemoryIn
from domain.plan import Plan
from domain.pricing import TokenCounts
from domain.resolved_plan import ResolvedPlan, SectionTask
from messages.compile import Scope, WriteSectionInput
from planners.port import SectionReply
from store.claims import rejected_claims
from store.memories import store_memories
from store.plan_staging import stage_plan, store_resolution

SCOPE = Scope(tenant="t-writer", owner="alice")
EXISTING = "- 2026-01-10: Ribs at Franklin with Lena.\n- 2026-01-24: Brisket at Franklin with Mateo."
PROPOSED = "- 2026-02-01: Brisket at Franklin again, with Lena."


class Writer:
    """A model section writer answering with a fixed body (what a condensing call would return)."""

    rewrites_from_sources = False

    def __init__(self, body: str) -> None:
        self.body = body

    async def write_section(self, task: SectionTask, cited: list[MemoryRecord], model_id: str) -> SectionReply:
        return SectionReply(body=self.body, usage=TokenCounts())


class Nothing(BaseModel):
    pass


async def staged_task(engine: AsyncEngine) -> uuid.UUID:
    memory_id = uuid.uuid4()
    await store_memories(engine, SCOPE.tenant, SCOPE.owner, [MemoryIn.model_validate(
        {"id": str(memory_id), "content": "Brisket at Franklin again, with Lena.", "occurred_at": "2026-02-01T12:00:00Z"})])
    plan_id = uuid.uuid4()
    task = SectionTask(page_id=str(uuid.uuid4()), page_title="Franklin Barbecue", page_type="entity", slug="visits",
                       heading="Visits", existing_body=EXISTING, proposed_body=PROPOSED, source_refs=[str(memory_id)])
    async with engine.begin() as conn:
        await stage_plan(conn, plan_id, SCOPE, "run-7", [memory_id],
                         Plan(pageUpdates=[], newPages=[], unresolvedMentions=[], promotions=[]))
        await store_resolution(conn, plan_id, ResolvedPlan(memory_ids=[str(memory_id)], tasks={"t1": task}, pages=[]),
                               Nothing())
    return plan_id


async def written(engine: AsyncEngine, body: str) -> tuple[str, list[dict]]:
    plan_id = await staged_task(engine)
    request = WriteSectionInput(scope=SCOPE, plan_id=plan_id, task_key="t1", model_id="claude-sonnet-4-5")
    await ActivityEnvironment().run(Planning(engine, Writer(body)).write_section, request)  # type: ignore[arg-type]
    async with engine.connect() as conn:
        draft = (await conn.execute(text("SELECT body_md FROM wiki_compile_section_drafts WHERE plan_id = :p"),
                                    {"p": plan_id})).scalar_one()
        return draft, await rejected_claims(conn, SCOPE.tenant, SCOPE.owner)


async def test_a_writer_fold_with_an_invented_name_leaves_the_draft_and_is_recorded(engine):
    honest = "- Earlier: 2 notes, ribs and brisket at Franklin with Lena and Mateo.\n" + PROPOSED
    draft, rejected = await written(engine, honest)
    assert draft == honest and rejected == []

    lying = "- Earlier: 2 notes, brisket at Franklin with Lena and Oriane Blackwood.\n" + PROPOSED
    draft, rejected = await written(engine, lying)
    assert draft == PROPOSED
    assert [(r["text"], r["stage"], r["run_id"]) for r in rejected] == [
        ("- Earlier: 2 notes, brisket at Franklin with Lena and Oriane Blackwood.", "grounding", "run-7")]
    assert "'oriane'" in rejected[0]["reason"] and "section writer" in rejected[0]["reason"]
