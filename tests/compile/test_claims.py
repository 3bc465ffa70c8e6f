"""Claims through the gate, resolution and apply, on a real database with hand-built plans.

A planner that invents a line gets it blocked and recorded; a second memory saying the same thing
raises that claim's confidence; a written body is exactly its claims, each citing its own memories.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.claim_gate import gate_plan
from app import reads
from app.reads import BadInput, ReadScope
from domain import ids
from domain.claim_judge import ClaimQuestion, ClaimVerdict
from domain.memory import MemoryIn
from domain.plan import LineSources, NewPage, NewSection, PageUpdate, Plan, SectionUpdate
from domain.pricing import TokenCounts
from domain.resolved_plan import ResolvedPage, ResolvedPlan, SectionTask, WriterSection
from evals.claims_gate import measure
from evals.corpus import generate
from messages.compile import Scope
from planners.port import ClaimJudgeReply
from planners.scripted.planner import ScriptedPlanner
from runtime.database import downgrade, migrate
from store.claims import record_rejected_claims, rejected_claims
from store.memories import store_memories
from store.plan_apply import apply_resolved_plan
from store.plan_resolution import resolve_plan

TENANT, OWNER = "t-claims", "alice"
SCOPE = Scope(tenant=TENANT, owner=OWNER)
NOW = datetime(2026, 3, 1, tzinfo=UTC)
MEMORIES = {
    "m1": ("Dinner at Contramar with Lena: the tuna tostadas.", "2026-02-01T19:00:00Z"),
    "m2": ("Back at Contramar for the tuna tostadas, this time alone.", "2026-02-20T13:00:00Z"),
    "m3": ("Lena booked a table at Contramar for Friday.", "2026-02-22T09:00:00Z"),
}


def mid(handle: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"claims-test/{handle}"))


async def retain_memories(engine: AsyncEngine) -> None:
    await store_memories(engine, TENANT, OWNER, [MemoryIn.model_validate({"id": mid(h), "content": c, "occurred_at": at})
                                         for h, (c, at) in MEMORIES.items()])


@dataclass
class JudgeDouble:
    """A claim judge for the gate's tests: answers each line from `verdicts` (its text -> "supported"
    with the memories that each support it, or "unsupported" with a problem); any other line unsure.
    `asked` records every line it was asked about."""

    verdicts: dict[str, tuple[str, list[str] | str]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    judges_claims: bool = True

    async def judge_claims(self, questions: list[ClaimQuestion], model_id: str) -> ClaimJudgeReply:
        out = []
        for question in questions:
            self.asked.append(question.text)
            cited = {m.id for m in question.memories}
            verdict, detail = self.verdicts.get(question.text, ("unsure", ""))
            if verdict == "supported":
                out.append(ClaimVerdict(key=question.key, verdict="supported",
                                        by=[m for m in detail if m in cited]))
            else:
                out.append(ClaimVerdict(key=question.key, verdict=verdict,  # type: ignore[arg-type]
                                        problem=detail if isinstance(detail, str) else ""))
        return ClaimJudgeReply(verdicts=out, usage=TokenCounts(input_tokens=100, output_tokens=10))


async def compile_plan(engine: AsyncEngine, plan: Plan, batch: list[str], judge: Any = None) -> Plan:
    """Gate, resolve and apply one plan, as a batch does; returns the plan as gated."""
    gate = await gate_plan(engine, judge or ScriptedPlanner(), SCOPE, plan, "claude-sonnet-4-6")
    plan_id = uuid.uuid4()
    async with engine.begin() as conn:
        await record_rejected_claims(conn, TENANT, OWNER, "run-1", plan_id, gate.rejected)
        resolved, _ = await resolve_plan(conn, TENANT, OWNER, plan_id, gate.plan, batch, NOW)
        await apply_resolved_plan(conn, TENANT, OWNER, resolved, {}, deterministic_linking=False, run_id="run-1")
    return gate.plan


async def claims(engine: AsyncEngine, slug: str, section: str) -> list[dict]:
    section_id = ids.section_id(ids.page_id(TENANT, OWNER, "entity", slug), section)
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT c.text, c.kind, c.status, c.confidence, c.corroboration, c.supporters,
                   array_agg(cs.memory_id ORDER BY cs.memory_id) AS refs
            FROM wiki_section_claims c JOIN wiki_claim_sources cs ON cs.claim_id = c.id
            WHERE c.section_id = :s GROUP BY c.id ORDER BY c.position
        """), {"s": section_id})
        body = (await conn.execute(text("SELECT body_md FROM wiki_page_sections WHERE id = :s"),
                                   {"s": section_id})).scalar_one()
    out = [dict(row._mapping) for row in rows]
    assert "\n".join(c["text"] for c in out) == "\n".join(line for line in body.splitlines() if line.strip())
    return out


def contramar(*lines: tuple[str, list[str]]) -> NewPage:
    return NewPage(type="entity", slug="contramar", title="Contramar", source_refs=[], sections=[
        NewSection(slug="notes", heading="Notes", body_md="\n".join(t for t, _ in lines),
                   source_refs=list(dict.fromkeys(r for _, refs in lines for r in refs)),
                   line_sources=[LineSources(text=t, refs=refs) for t, refs in lines])])


async def test_an_invented_claim_is_blocked_recorded_and_never_applied(engine):
    await retain_memories(engine)
    honest = "- Tuna tostadas at Contramar with Lena."
    invented = "- Chef Bartholomew cooked 14 courses at Contramar with Lena."
    plan = Plan(pageUpdates=[], newPages=[contramar((honest, [mid("m1")]), (invented, [mid("m1")]))],
                unresolvedMentions=[], promotions=[])

    gated = await compile_plan(engine, plan, [mid("m1")])

    assert gated.newPages[0].sections[0].body_md == honest
    assert [c["text"] for c in await claims(engine, "contramar", "notes")] == [honest]
    async with engine.connect() as conn:
        [rejected] = await rejected_claims(conn, TENANT, OWNER)
    assert rejected["text"] == invented and rejected["stage"] == "grounding"
    assert "'bartholomew'" in rejected["reason"] and "'14'" in rejected["reason"]


async def test_a_section_whose_every_line_is_rejected_is_not_written(engine):
    await retain_memories(engine)
    invented = "- Chef Bartholomew cooked 14 courses at Contramar."
    await compile_plan(engine, Plan(pageUpdates=[], newPages=[contramar((invented, [mid("m1")]))],
                                    unresolvedMentions=[], promotions=[]), [mid("m1")])
    async with engine.connect() as conn:
        bodies = (await conn.execute(text("SELECT s.body_md FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id "
                                          "WHERE p.tenant_id = :t"), {"t": TENANT})).scalars().all()
    assert all("Bartholomew" not in body for body in bodies)
    assert all(body.strip() for body in bodies)


async def test_a_second_memory_saying_the_same_raises_the_claim_confidence(engine):
    await retain_memories(engine)
    line = "- Back at Contramar for the tuna tostadas, this time alone."
    await compile_plan(engine, Plan(pageUpdates=[], newPages=[contramar((line, [mid("m2")]))],
                                    unresolvedMentions=[], promotions=[]), [mid("m2")])
    [first] = await claims(engine, "contramar", "notes")
    assert (first["status"], first["supporters"], first["confidence"], first["refs"]) == (
        "quoted", 1, Decimal("0.70"), [mid("m2")])

    await store_memories(engine, TENANT, OWNER, [MemoryIn.model_validate(
        {"id": mid("m4"), "content": "Back at Contramar for the tuna tostadas, this time alone. Loved it.",
         "occurred_at": "2026-02-25T13:00:00Z"})])
    page = str(ids.page_id(TENANT, OWNER, "entity", "contramar"))
    again = Plan(pageUpdates=[PageUpdate(pageId=page, sections=[SectionUpdate(
        slug="notes", proposed_body_md=line, source_refs=[mid("m4")])])], newPages=[], unresolvedMentions=[],
        promotions=[])
    await compile_plan(engine, again, [mid("m4")])

    [second] = await claims(engine, "contramar", "notes")
    assert (second["status"], second["supporters"], second["confidence"]) == ("quoted", 2, Decimal("0.80"))
    assert second["refs"] == sorted([mid("m2"), mid("m4")])


async def test_each_line_cites_only_the_memories_that_vouch_for_it(engine):
    await retain_memories(engine)
    refs = [mid("m1"), mid("m3")]
    plan = Plan(pageUpdates=[], newPages=[contramar(("- Tuna tostadas at Contramar.", refs),
                                                    ("- Lena booked a table for Friday.", refs))],
                unresolvedMentions=[], promotions=[])

    await compile_plan(engine, plan, refs)

    assert [(c["text"], c["refs"]) for c in await claims(engine, "contramar", "notes")] == [
        ("- Tuna tostadas at Contramar.", sorted(refs)),  # its one name, Contramar, is in both
        ("- Lena booked a table for Friday.", [mid("m3")]),
    ]


async def test_condensing_lines_keeps_their_citations(engine):
    await retain_memories(engine)
    tostadas, booking = "- Tuna tostadas at Contramar.", "- Lena booked a table for Friday."
    await compile_plan(engine, Plan(pageUpdates=[], newPages=[contramar((tostadas, [mid("m1")]),
                                                                       (booking, [mid("m3")]))],
                                    unresolvedMentions=[], promotions=[]), [mid("m1"), mid("m3")])
    page = str(ids.page_id(TENANT, OWNER, "entity", "contramar"))
    folded = "- Tuna tostadas, and Lena booked a table for Friday."
    task = SectionTask(page_id=page, page_title="Contramar", page_type="entity", slug="notes", heading="Notes",
                       existing_body=f"{tostadas}\n{booking}", proposed_body="", source_refs=[])
    resolved = ResolvedPlan(memory_ids=[], tasks={"t1": task}, pages=[ResolvedPage(
        page_id=page, type="entity", slug="contramar", title="Contramar", summary=None, mode="update",
        keep_title=True, sections=[WriterSection(slug="notes", task="t1")])])
    async with engine.begin() as conn:
        await apply_resolved_plan(conn, TENANT, OWNER, resolved, {"t1": folded}, deterministic_linking=False)

    [claim] = await claims(engine, "contramar", "notes")
    assert (claim["text"], claim["kind"], claim["refs"]) == (folded, "fact", sorted([mid("m1"), mid("m3")]))


async def test_a_lying_model_gets_no_lie_served_as_quoted_and_every_invented_name_blocked(client, engine):
    # A corpus nobody here wrote for this rule (the eval's generator), compiled through the SDK and the
    # simulator while it makes a tenth of its plan lines lies of six kinds (claude_sim/lies.py).
    tenant = generate(7919, 40, tenants=("acme",)).tenants[0]
    memories = [MemoryIn.model_validate(m) for m in tenant.memories]
    run = await measure(client, engine, "generated", memories, tenant.owner, 0.1, seed=7919)

    told = sum(result.told for result in run.kinds.values())
    assert told > 0 and {kind for kind, result in run.kinds.items() if result.told} >= {"invented", "number"}
    assert all(result.outcomes.get("quoted", 0) == 0 for result in run.kinds.values()), {
        "served": run.lies_served_examples}
    invented = run.kinds["invented"]
    assert invented.told and invented.share("blocked") == 1.0
    assert run.honest_rejected_share <= 0.01, run.honest_rejected_examples


async def test_reads_give_each_claim_and_filter_by_confidence(engine):
    await retain_memories(engine)
    twice, once = "- Contramar serves tuna tostadas.", "- Lena booked a table at Contramar for Friday."
    unread, counted = "- Lena likes Contramar.", "- 3 new memories."
    every = [mid("m1"), mid("m2"), mid("m3")]
    plan = Plan(pageUpdates=[], newPages=[contramar((twice, every), (once, every), (unread, every), (counted, every))],
                unresolvedMentions=[], promotions=[])
    judge = JudgeDouble(verdicts={twice: ("supported", [mid("m1"), mid("m2")])})
    await compile_plan(engine, plan, every, judge)
    assert judge.asked == [twice, unread]  # a quote and a recount need no judge
    scope = ReadScope.of(TENANT, OWNER)

    whole = await reads.get_page(engine, scope, "entity/contramar")
    [notes] = whole.sections
    assert [(c.text, c.confidence, c.status, c.sources) for c in notes.claims] == [
        (twice, 0.8, "verified", sorted([mid("m1"), mid("m2")])), (once, 0.7, "quoted", [mid("m3")]),
        # the line cites the memories holding its names, Lena and Contramar
        (unread, None, "unverified", sorted([mid("m1"), mid("m3")])), (counted, None, "derived", sorted(every))]
    assert notes.claims[0].first_seen < notes.claims[0].last_seen
    sure = await reads.get_page_by_key(engine, scope, "entity", "contramar", min_confidence=0.8)
    assert [c.text for c in sure.sections[0].claims] == [twice]
    assert twice in sure.markdown and once not in sure.markdown
    some = await reads.get_page_by_key(engine, scope, "entity", "contramar", min_confidence=0.01)
    assert [c.text for c in some.sections[0].claims] == [twice, once]  # no confidence is below any floor
    for bad in (1.5, -0.1, float("nan")):
        with pytest.raises(BadInput, match="min_confidence"):
            await reads.get_page(engine, scope, "entity/contramar", min_confidence=bad)


async def test_the_migration_turns_each_existing_line_into_a_claim(engine):
    await retain_memories(engine)
    body = "- 2026-02-01: Dinner at Contramar with Lena: the tuna tostadas.\n- Lena booked a table for Friday.\n" \
           "- 3 memories, 2026-02-01 to 2026-02-22."
    await compile_plan(engine, Plan(pageUpdates=[], newPages=[contramar((body, [mid("m1"), mid("m2"), mid("m3")]))],
                                    unresolvedMentions=[], promotions=[]), [mid("m1"), mid("m2"), mid("m3")])
    await downgrade(engine, "0004_message_batches")  # wherever the merge chains it, 0005_claims is after it
    await migrate(engine)

    assert [(c["text"], c["kind"], c["refs"]) for c in await claims(engine, "contramar", "notes")] == [
        ("- 2026-02-01: Dinner at Contramar with Lena: the tuna tostadas.", "fact", [mid("m1")]),
        ("- Lena booked a table for Friday.", "fact", [mid("m3")]),
        ("- 3 memories, 2026-02-01 to 2026-02-22.", "derived", sorted([mid("m1"), mid("m2"), mid("m3")])),
    ]


PEOPLE = ["Caroline", "Melanie", "Lena", "Tomasz", "Aiko", "Mateo", "Ruth", "Ingrid"]
GROUPS = ["the LGBTQ support group", "the pottery class", "the climbing gym", "the book club"]


@pytest.mark.parametrize("seed", range(3))
async def test_each_kind_of_lie_is_blocked_by_the_gate_and_never_served_as_quoted(engine, seed):
    rng = random.Random(seed)
    a, b, stranger = rng.sample(PEOPLE, 3)
    group, other = rng.sample(GROUPS, 2)
    said = {"k1": (f"{a} went with {b} to {group} on Friday.", "2026-02-06T18:00:00Z"),
            "k2": (f"{b} painted a sunrise with her kids at {other}.", "2026-02-08T10:00:00Z")}
    await store_memories(engine, TENANT, OWNER, [MemoryIn.model_validate({"id": mid(f"{seed}{h}"), "content": c,
                                                                          "occurred_at": at})
                                                 for h, (c, at) in said.items()])
    both = [mid(f"{seed}k1"), mid(f"{seed}k2")]
    lies = {
        "negation": f"- {a} did not go to {group}.",
        "actor": f"- {b} went to {group} on Friday.",
        "date": f"- 2026-03-{rng.randint(10, 28)}: {a} went with {b} to {group} on Friday.",
        "number": f"- {a} went to {group} {rng.randint(4, 9)} times.",
        "invented": f"- {a} went with {stranger} to {group} on Friday.",
        "merged": f"- {a} painted a sunrise at {group}.",
        "generalisation": f"- {a} goes to {group} every Friday.",
    }
    honest = f"- 2026-02-06: {said['k1'][0]}"
    judge = JudgeDouble(verdicts={line: ("unsupported", kind) for kind, line in lies.items()})
    lines = [(honest, both), *((line, both) for line in lies.values())]
    plan = Plan(pageUpdates=[], newPages=[contramar(*lines)], unresolvedMentions=[], promotions=[])

    gated = await compile_plan(engine, plan, both, judge)

    served = {c["text"]: c for c in await claims(engine, "contramar", "notes")}
    assert list(served) == [honest] and served[honest]["status"] == "quoted"
    assert served[honest]["refs"] == [mid(f"{seed}k1")]
    assert honest not in judge.asked  # a quote needs no judge
    async with engine.connect() as conn:
        rejected = {r["text"]: r for r in await rejected_claims(conn, TENANT, OWNER)}
    for kind, line in lies.items():
        assert line in rejected, (kind, line)
        # each lie either fails the grounding rule or reaches the judge, which names its kind
        assert rejected[line]["stage"] == "grounding" or (line in judge.asked and kind in rejected[line]["reason"])
    assert {lies[k] for k in ("negation", "actor", "merged", "generalisation")} <= set(judge.asked)
    assert all(s.status != "quoted" for s in gated.newPages[0].sections[0].line_sources if s.text in lies.values())


async def test_offline_no_line_is_verified_and_an_unsure_or_failed_judge_leaves_it_unverified(engine):
    await retain_memories(engine)
    line = "- Lena likes the tuna tostadas at Contramar."
    plan = Plan(pageUpdates=[], newPages=[contramar((line, [mid("m1")]))], unresolvedMentions=[], promotions=[])
    gated = await compile_plan(engine, plan, [mid("m1")])  # the scripted planner: no judge
    assert gated.newPages[0].sections[0].line_sources[0].status == "unverified"
    [claim] = await claims(engine, "contramar", "notes")
    assert (claim["status"], claim["confidence"], claim["supporters"]) == ("unverified", None, 0)
