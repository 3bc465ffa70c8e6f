"""`llm.write_section` checks a model writer's draft before storing it (activities/writer_gate.py): on a
real database, a writer that condenses honestly keeps its lines, one that invents a name in a fold has
that line dropped from the stored draft and recorded among the scope's rejected claims with the run; the
writer's own grounded lines go to the claim judge, which drops an unsupported one and vouches for the
rest in the stored draft."""

from __future__ import annotations

import uuid

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import ActivityEnvironment

from activities.planning import Planning
from domain.claim_judge import ClaimQuestion, ClaimVerdict
from domain.claim_text import claim_key
from domain.context import MemoryRecord
from domain.memory import MemoryIn
from domain.plan import Plan
from domain.pricing import TokenCounts
from domain.resolved_plan import ResolvedPlan, SectionTask
from messages.compile import Scope, WriteSectionInput
from planners.port import ClaimJudgeReply, SectionReply
from store.claims import rejected_claims
from store.memories import store_memories
from store.plan_staging import stage_plan, store_resolution

SCOPE = Scope(tenant="t-writer", owner="alice")
EXISTING = "- 2026-01-10: Ribs at Franklin with Lena.\n- 2026-01-24: Brisket at Franklin with Mateo."
PROPOSED = "- 2026-02-01: Brisket at Franklin again, with Lena."


class Writer:
    """A model section writer answering with a fixed body (what a condensing call would return), and a
    claim judge answering from `verdicts` (a line's text -> "supported" or a problem); unsure otherwise."""

    rewrites_from_sources = False
    judges_claims = True

    def __init__(self, body: str, verdicts: dict[str, str] | None = None) -> None:
        self.body = body
        self.verdicts = verdicts or {}
        self.asked: list[str] = []

    async def write_section(self, task: SectionTask, cited: list[MemoryRecord], model_id: str) -> SectionReply:
        return SectionReply(body=self.body, usage=TokenCounts())

    async def judge_claims(self, questions: list[ClaimQuestion], model_id: str) -> ClaimJudgeReply:
        out = []
        for question in questions:
            self.asked.append(question.text)
            answer = self.verdicts.get(question.text)
            if answer == "supported":
                out.append(ClaimVerdict(key=question.key, verdict="supported", by=[question.memories[0].id]))
            elif answer is not None:
                out.append(ClaimVerdict(key=question.key, verdict="unsupported", problem=answer))
        return ClaimJudgeReply(verdicts=out, usage=TokenCounts(input_tokens=50, output_tokens=5))


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


async def written(engine: AsyncEngine, body: str, writer: Writer | None = None) -> tuple[str, list[dict]]:
    plan_id = await staged_task(engine)
    request = WriteSectionInput(scope=SCOPE, plan_id=plan_id, task_key="t1", model_id="claude-sonnet-4-5")
    await ActivityEnvironment().run(Planning(engine, writer or Writer(body)).write_section,  # type: ignore[arg-type]
                                    request)
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


async def test_a_writers_own_lines_go_to_the_judge_and_its_word_is_kept_with_the_draft(engine):
    summary = "- Lena comes back to Franklin for the brisket."
    habit = "- Lena goes to Franklin every week."
    writer = Writer("\n".join([summary, habit, PROPOSED]), verdicts={summary: "supported", habit: "generalisation"})
    draft, rejected = await written(engine, "", writer)
    # the writer's own lines were judged; the proposal's line (checked by the plan's gate) was not
    assert writer.asked == [summary, habit]
    assert draft == f"{summary}\n{PROPOSED}"
    assert [(r["text"], r["stage"], r["verdict"]) for r in rejected] == [
        (habit, "judge", {"verdict": "unsupported", "problem": "generalisation"})]
    async with engine.connect() as conn:
        claims = (await conn.execute(text("SELECT line_claims FROM wiki_compile_section_drafts"))).scalar_one()
    [(key, judged)] = claims.items()
    assert key == claim_key(summary) and judged["judged_by"] and judged["status"] == "verified"
