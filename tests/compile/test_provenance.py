"""Provenance is exact: a section cites every memory that informed it and nothing else.

Resolution and apply on a real database with hand-built plans: a proposal that changes nothing
still cites its memories, sibling sections do not share one list of citations, and a rollup's
citations replace the ones it had.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from domain import ids
from domain.plan import NewPage, NewSection, PageUpdate, Plan, SectionUpdate
from domain.resolved_plan import DirectSection, ResolvedPage, ResolvedPlan, WriterSection
from store.plan_apply import apply_resolved_plan
from store.plan_resolution import resolve_plan

TENANT, OWNER = "t-prov", "alice"
NOW = datetime(2026, 3, 1, tzinfo=UTC)


def memory_id(n: int) -> str:
    return str(uuid.UUID(int=n))


def page_id(slug: str) -> str:
    return str(ids.page_id(TENANT, OWNER, "entity", slug))


async def apply(engine: AsyncEngine, *pages: ResolvedPage, drafts: dict[str, str] | None = None,
                tasks: dict | None = None) -> None:
    async with engine.begin() as conn:
        await apply_resolved_plan(conn, TENANT, OWNER, ResolvedPlan(memory_ids=[], tasks=tasks or {}, pages=list(pages)),
                                  drafts or {}, deterministic_linking=False)


def uchi(*sections: DirectSection, mode: str = "create") -> ResolvedPage:
    return ResolvedPage(page_id=page_id("uchi"), type="entity", slug="uchi", title="Uchi", summary=None, mode=mode,
                        keep_title=mode != "create", sections=list(sections))


async def sources(engine: AsyncEngine, slug: str, section: str) -> list[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT source_ref FROM wiki_section_sources WHERE section_id = :s "
                                       "ORDER BY source_ref"), {"s": ids.section_id(uuid.UUID(page_id(slug)), section)})
        return [row.source_ref for row in rows]


async def body(engine: AsyncEngine, slug: str, section: str) -> str:
    async with engine.connect() as conn:
        return (await conn.execute(text("SELECT body_md FROM wiki_page_sections WHERE page_id = :p "
                                        "AND section_slug = :s"), {"p": page_id(slug), "s": section})).scalar_one()


async def resolve(engine: AsyncEngine, plan: Plan, batch: list[str]) -> ResolvedPlan:
    async with engine.begin() as conn:
        resolved, _ = await resolve_plan(conn, TENANT, OWNER, uuid.uuid4(), plan, batch, NOW)
    return resolved


async def test_a_cite_only_write_adds_citations_and_keeps_the_body(engine):
    await apply(engine, uchi(DirectSection(slug="notes", heading="Notes", body_md="- Sushi.",
                                           source_refs=[memory_id(1)])))

    await apply(engine, uchi(DirectSection(slug="notes", heading="", body_md="", source_refs=[memory_id(2)],
                                           cite_only=True), mode="update"))

    assert await body(engine, "uchi", "notes") == "- Sushi."
    assert await sources(engine, "uchi", "notes") == [memory_id(1), memory_id(2)]


async def test_replacing_sources_leaves_exactly_the_new_citations(engine):
    await apply(engine, uchi(DirectSection(slug="places", heading="Places", body_md="- A.",
                                           source_refs=[memory_id(1), memory_id(2)])))

    await apply(engine, uchi(DirectSection(slug="places", heading="Places", body_md="- A.\n- B.",
                                           source_refs=[memory_id(2), memory_id(3)], replace_sources=True),
                             mode="update"))

    assert await sources(engine, "uchi", "places") == [memory_id(2), memory_id(3)]


async def test_a_proposal_that_changes_nothing_still_cites_its_memory(engine):
    await apply(engine, uchi(DirectSection(slug="notes", heading="Notes", body_md="- Dinner at Uchi.",
                                           source_refs=[memory_id(1)])))
    plan = Plan(pageUpdates=[PageUpdate(pageId=page_id("uchi"), sections=[
        SectionUpdate(slug="notes", proposed_body_md="- Dinner at Uchi.", source_refs=[memory_id(2)])])],
        newPages=[], unresolvedMentions=[], promotions=[])

    resolved = await resolve(engine, plan, [memory_id(2)])

    [page] = resolved.pages
    [section] = page.sections
    assert isinstance(section, DirectSection) and section.cite_only and section.source_refs == [memory_id(2)]
    assert resolved.tasks == {}
    async with engine.begin() as conn:
        await apply_resolved_plan(conn, TENANT, OWNER, resolved, {}, deterministic_linking=False)
    assert await sources(engine, "uchi", "notes") == [memory_id(1), memory_id(2)]
    assert await body(engine, "uchi", "notes") == "- Dinner at Uchi."


async def test_memories_cited_without_a_rewrite_go_to_a_later_rewrite_of_the_section(engine):
    await apply(engine, uchi(DirectSection(slug="notes", heading="Notes", body_md="- Dinner at Uchi.",
                                           source_refs=[memory_id(1)])))
    plan = Plan(pageUpdates=[PageUpdate(pageId=page_id("uchi"), sections=[
        SectionUpdate(slug="notes", proposed_body_md="- Dinner at Uchi.", source_refs=[memory_id(2)]),
        SectionUpdate(slug="notes", proposed_body_md="- The omakase was long and very good.",
                      source_refs=[memory_id(3)])])],
        newPages=[], unresolvedMentions=[], promotions=[])

    resolved = await resolve(engine, plan, [memory_id(2), memory_id(3)])

    [page] = resolved.pages
    assert [type(s) for s in page.sections] == [WriterSection]
    [task] = resolved.tasks.values()
    assert task.source_refs == [memory_id(2), memory_id(3)]


async def test_sibling_sections_do_not_share_their_citations(engine):
    # Both proposals land on one new page; the second adds a body (and a citation) to "notes" only.
    first = NewPage(type="entity", slug="odd-duck", title="Odd Duck", source_refs=[memory_id(1)], sections=[
        NewSection(slug="overview", heading="Overview", body_md="A restaurant."),
        NewSection(slug="notes", heading="Notes", body_md="- Small plates.")])
    second = NewPage(type="entity", slug="odd-duck", title="Odd Duck", source_refs=[memory_id(1)], sections=[
        NewSection(slug="notes", heading="Notes", body_md="- The pork belly.", source_refs=[memory_id(2)])])
    plan = Plan(pageUpdates=[], newPages=[first, second], unresolvedMentions=[], promotions=[])

    resolved = await resolve(engine, plan, [memory_id(1), memory_id(2)])

    [page] = resolved.pages
    sections = {s.slug: s for s in page.sections}
    assert isinstance(sections["overview"], DirectSection)
    assert sections["overview"].source_refs == [memory_id(1)]
    # Two bodies for one new section go to the writer together, citing what either cites.
    assert isinstance(sections["notes"], WriterSection)
    task = resolved.tasks[sections["notes"].task]
    assert task.existing_body is None and task.source_refs == [memory_id(1), memory_id(2)]
    assert task.proposed_body == "- Small plates.\n\n- The pork belly."
