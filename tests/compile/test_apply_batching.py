"""Applying a resolved plan in a few multi-row statements gives what applying it item by item gives.

`apply_resolved_plan` writes each kind of row in one statement, so whatever an earlier item of the
plan changes for a later one is worked out before the write. These tests apply hand-built resolved
plans (`domain.resolved_plan.ResolvedPlan`, what `plan_resolution` stores) straight to a fresh
database and check those cases: section positions, a section or a mention seen twice, links proposed
twice or by two linkers, and that the number of statements does not grow with the batch.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from domain import ids
from domain.plan import PageLink
from domain.resolved_plan import (
    DirectSection,
    MentionPromotion,
    MentionSighting,
    PageMode,
    ResolvedPage,
    ResolvedPlan,
)
from messages.compile import ApplyBatchResult
from store.plan_apply import apply_resolved_plan

TENANT, OWNER = "t-apply", "alice"


def page_id(slug: str, page_type: str = "entity") -> str:
    return str(ids.page_id(TENANT, OWNER, page_type, slug))


def page(slug: str, *sections: DirectSection, mode: PageMode = "create", aliases: list[str] | None = None,
         page_type: str = "entity") -> ResolvedPage:
    return ResolvedPage(page_id=page_id(slug, page_type), type=page_type, slug=slug, title=slug.title(),
                        summary=None, mode=mode, keep_title=mode != "create", aliases=aliases or [],
                        sections=list(sections))


def section(slug: str, body: str, refs: list[str] | None = None) -> DirectSection:
    return DirectSection(slug=slug, heading=f"{slug.title()} heading", body_md=body, source_refs=refs or [])


def mention(alias: str, context: str, suggested_type: str | None = None) -> MentionSighting:
    return MentionSighting(alias=alias, alias_normalized=alias.lower(), suggested_type=suggested_type,
                           context=context, source_ref=None)


def link(from_slug: str, to_slug: str, context: str) -> PageLink:
    return PageLink(fromType="entity", fromSlug=from_slug, toType="entity", toSlug=to_slug, context=context)


def document(*pages: ResolvedPage, mentions=(), promotions=(), links=()) -> ResolvedPlan:
    return ResolvedPlan(memory_ids=[], tasks={}, pages=list(pages), mentions=list(mentions),
                        promotions=list(promotions), links=list(links))


async def apply(engine: AsyncEngine, doc: ResolvedPlan, *, linking: bool = False) -> ApplyBatchResult:
    async with engine.begin() as conn:
        return await apply_resolved_plan(conn, TENANT, OWNER, doc, {}, deterministic_linking=linking)


async def rows(engine: AsyncEngine, query: str, **params) -> list[Any]:
    async with engine.connect() as conn:
        return list(await conn.execute(text(query), params))


async def sections_of(engine: AsyncEngine, slug: str) -> list[Any]:
    return await rows(engine, "SELECT id, section_slug, heading, body_md, position FROM wiki_page_sections "
                              "WHERE page_id = :p ORDER BY position", p=page_id(slug))


async def test_new_sections_go_after_the_existing_ones_in_write_order(engine):
    await apply(engine, document(page("uchi", section("overview", "Sushi."), section("menu", "Omakase."))))
    before = {row.section_slug: row for row in await sections_of(engine, "uchi")}

    result = await apply(engine, document(page("uchi", section("visits", "Twice."), section("overview", "Great sushi."),
                                               section("prices", "Pricey."), mode="update")))

    assert [(row.section_slug, row.position) for row in await sections_of(engine, "uchi")] == [
        ("overview", 1), ("menu", 2), ("visits", 3), ("prices", 4)]
    overview = next(row for row in await sections_of(engine, "uchi") if row.section_slug == "overview")
    assert (overview.id, overview.heading, overview.body_md) == (before["overview"].id, "Overview heading",
                                                                 "Great sushi.")
    assert (result.sections_written, result.pages_upserted, result.pages_created) == (3, 1, 0)


async def test_a_section_written_twice_in_one_plan_keeps_the_last_body_and_every_citation(engine):
    memory_a, memory_b = str(uuid.uuid4()), str(uuid.uuid4())
    result = await apply(engine, document(page("odd-duck", section("notes", "First.", [memory_a]),
                                               section("visits", "Once."), section("notes", "Second.", [memory_b]))))

    assert [(row.section_slug, row.heading, row.body_md, row.position) for row in await sections_of(engine, "odd-duck")] \
        == [("notes", "Notes heading", "Second.", 1), ("visits", "Visits heading", "Once.", 2)]
    cited = await rows(engine, "SELECT source_ref FROM wiki_section_sources WHERE section_id = :s ORDER BY source_ref",
                       s=ids.section_id(uuid.UUID(page_id("odd-duck")), "notes"))
    assert [row.source_ref for row in cited] == sorted([memory_a, memory_b])
    assert result.sections_written == 3


async def test_two_sightings_of_one_alias_in_one_plan_make_one_row(engine):
    result = await apply(engine, document(mentions=[mention("Blue Door", "first"),
                                                    mention("Blue Door", "second", "entity")]))

    found = await rows(engine, "SELECT id, mention_count, suggested_type, sample_contexts FROM wiki_unresolved_mentions "
                               "WHERE alias_normalized = 'blue door'")
    assert len(found) == 1
    assert found[0].id == ids.mention_id(TENANT, OWNER, "blue door", 0)
    assert (found[0].mention_count, found[0].suggested_type) == (2, "entity")
    assert [c["quote"] for c in found[0].sample_contexts] == ["second", "first"]
    assert result.unresolved_upserted == 2

    # Four more sightings of the open row: counted, newest first, the samples capped, the type kept.
    await apply(engine, document(mentions=[mention("Blue Door", f"again {n}") for n in range(4)]))
    again = (await rows(engine, "SELECT mention_count, suggested_type, sample_contexts FROM wiki_unresolved_mentions "
                                "WHERE alias_normalized = 'blue door'"))[0]
    assert (again.mention_count, again.suggested_type) == (6, "entity")
    assert [c["quote"] for c in again.sample_contexts] == ["again 3", "again 2", "again 1", "again 0", "second"]


async def test_a_promoted_alias_retires_its_open_row_and_later_sightings_start_a_new_generation(engine):
    await apply(engine, document(page("blue-door"), mentions=[mention("Blue Door", "first")]))
    first = ids.mention_id(TENANT, OWNER, "blue door", 0)
    promote = MentionPromotion(mention_id=str(first), alias_normalized="blue door", page_id=page_id("blue-door"))
    assert (await apply(engine, document(promotions=[promote]))).unresolved_promoted == 1

    await apply(engine, document(mentions=[mention("Blue Door", "seen again")]))
    second = ids.mention_id(TENANT, OWNER, "blue door", 1)
    result = await apply(engine, document(promotions=[promote.model_copy(update={"mention_id": str(second)})]))

    assert result.unresolved_promoted == 1
    assert [(row.id, row.status) for row in await rows(
        engine, "SELECT id, status FROM wiki_unresolved_mentions WHERE alias_normalized = 'blue door'")] == [
        (first, "promoted")]


async def test_a_link_proposed_twice_is_written_once_with_its_first_context(engine):
    result = await apply(engine, document(page("suerte"), page("loro"), links=[
        link("suerte", "loro", "first"), link("suerte", "suerte", "self"), link("suerte", "nowhere", "missing"),
        link(" suerte", "loro ", "second")]))

    assert (result.links_upserted, result.dropped_invalid_ids) == (1, 1)
    assert [(row.from_page_id, row.to_page_id, row.context) for row in await rows(
        engine, "SELECT from_page_id, to_page_id, context FROM wiki_page_links")] == [
        (uuid.UUID(page_id("suerte")), uuid.UUID(page_id("loro")), "first")]
    # Linking pages already in the scope (no page written in the batch): found by (type, slug).
    assert (await apply(engine, document(links=[link("suerte", "loro", "again"), link("loro", "suerte", "back")]))
            ).links_upserted == 1


async def test_a_pair_is_counted_by_the_first_kind_of_link_that_writes_it(engine):
    memory = str(uuid.uuid4())
    result = await apply(engine, document(page("suerte", section("visits", "Dinner.", [memory])),
                                          page("loro", section("visits", "Drinks after.", [memory])),
                                          links=[link("suerte", "loro", "planner")]), linking=True)

    # The co-mention linker also pairs suerte -> loro; the planner wrote it first, so it counts there.
    assert (result.links_upserted, result.links_written_co_mention) == (1, 1)
    assert {(row.from_page_id, row.context) for row in await rows(
        engine, "SELECT from_page_id, context FROM wiki_page_links")} == {
        (uuid.UUID(page_id("suerte")), "planner"), (uuid.UUID(page_id("loro")), f"co_mention:{memory}")}


async def test_the_statements_of_an_apply_do_not_grow_with_the_batch(engine):
    def plan(pages: int) -> ResolvedPlan:
        slugs = [f"place-{pages}-{n}" for n in range(pages)]
        memory = str(uuid.uuid4())
        return document(*[page(slug, section("overview", "Visited.", [memory]), section("notes", "Noted."),
                               aliases=[slug.replace("-", " ")]) for slug in slugs],
                        mentions=[mention(f"Someone {pages} {n}", "met") for n in range(pages)],
                        links=[link(a, b, "planner") for a, b in zip(slugs, slugs[1:], strict=False)])

    async def statements(doc: ResolvedPlan) -> int:
        executed: list[str] = []

        def listener(conn, cursor, statement, *_):
            executed.append(statement)

        event.listen(engine.sync_engine, "before_cursor_execute", listener)
        try:
            result = await apply(engine, doc, linking=True)
        finally:
            event.remove(engine.sync_engine, "before_cursor_execute", listener)
        assert result.pages_created == len(doc.pages)
        return len(executed)

    small, large = await statements(plan(2)), await statements(plan(40))
    assert small == large <= 25
