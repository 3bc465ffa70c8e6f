"""Titles on a real database: a page takes the best-attested spelling of its name among the memories
it cites, batch after batch, without its slug or id moving (store/page_titles.py)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from domain import ids
from domain.memory import MemoryIn
from domain.resolved_plan import DirectSection, ResolvedPage, ResolvedPlan
from store.memories import store_memories
from store.plan_apply import apply_resolved_plan

OWNER = "alice"
DAY = datetime(2026, 3, 1, tzinfo=UTC)


def tenant() -> str:
    return f"t-titles-{uuid.uuid4().hex[:8]}"


async def memories(engine: AsyncEngine, scope: str, *spellings: str | tuple[str, str]) -> list[str]:
    """One memory per spelling, a day apart, naming it as an entity ((spelling, type) for another type)."""
    rows = []
    for day, spelling in enumerate(spellings):
        name, page_type = spelling if isinstance(spelling, tuple) else (spelling, "entity")
        rows.append(MemoryIn(id=uuid.uuid4(), content=f"Lunch at {name}.", occurred_at=DAY + timedelta(days=day),
                             metadata={"entities": [{"name": name, "type": page_type, "kind": "restaurant"}]}))
    await store_memories(engine, scope, OWNER, rows)
    return [str(row.id) for row in rows]


def page(scope: str, slug: str, title: str, refs: list[str], aliases: list[str], mode: str = "create") -> ResolvedPage:
    return ResolvedPage(page_id=str(ids.page_id(scope, OWNER, "entity", slug)), type="entity", slug=slug, title=title,
                        summary=None, mode=mode, keep_title=mode != "create", aliases=aliases,
                        sections=[DirectSection(slug="notes", heading="Notes", body_md="- Lunch.", source_refs=refs,
                                                cite_only=mode != "create")])


async def apply(engine: AsyncEngine, scope: str, entry: ResolvedPage) -> None:
    async with engine.begin() as conn:
        await apply_resolved_plan(conn, scope, OWNER, ResolvedPlan(memory_ids=[], tasks={}, pages=[entry]), {},
                                  deterministic_linking=False)


async def stored(engine: AsyncEngine, scope: str) -> list[tuple[str, str, str]]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT id, slug, title FROM wiki_pages WHERE tenant_id = :t ORDER BY slug"),
                                  {"t": scope})
        return [(str(r.id), r.slug, r.title) for r in rows]


async def test_a_title_follows_the_spelling_later_memories_write_most_often(engine):
    scope = tenant()
    first = await memories(engine, scope, "Franklin Barbecue, Charlotte")
    aliases = ["franklin barbecue charlotte", "franklin barbecue"]
    await apply(engine, scope, page(scope, "franklin-barbecue-charlotte", "Franklin Barbecue, Charlotte", first, aliases))
    [(page_id, slug, title)] = await stored(engine, scope)
    assert title == "Franklin Barbecue, Charlotte"

    later = await memories(engine, scope, "Franklin Barbecue", "FRANKLIN BARBECUE", "Franklin Barbecue")
    await apply(engine, scope, page(scope, slug, title, later, [], mode="update"))

    # Two memories write "Franklin Barbecue", one the qualified form; the shouted one is no title.
    assert await stored(engine, scope) == [(page_id, "franklin-barbecue-charlotte", "Franklin Barbecue")]


async def test_equal_counts_go_to_the_spelling_seen_first_and_shouting_never_wins(engine):
    scope = tenant()
    refs = await memories(engine, scope, "The Ivy Hotel", "Ivy Hotel", "IVY HOTEL", "IVY HOTEL", "IVY HOTEL")
    await apply(engine, scope, page(scope, "ivy-hotel", "Ivy Hotel", refs, ["ivy hotel", "the ivy hotel"]))

    assert [title for _, _, title in await stored(engine, scope)] == ["The Ivy Hotel"]


async def test_only_the_pages_own_names_of_its_own_type_count(engine):
    scope = tenant()
    # "Uchiko" is another page's name; "Uchi (Austin)" as a topic is not this entity.
    refs = await memories(engine, scope, "Uchi", "Uchiko", "Uchiko", ("Uchi (Austin)", "topic"),
                          ("Uchi (Austin)", "topic"))
    await apply(engine, scope, page(scope, "uchi", "UCHI", refs, ["uchi", "uchi austin"]))

    assert [title for _, _, title in await stored(engine, scope)] == ["Uchi"]


async def test_a_page_whose_memories_name_nothing_keeps_its_planners_title(engine):
    scope = tenant()
    refs = [str(uuid.uuid4())]
    await store_memories(engine, scope, OWNER, [MemoryIn(id=uuid.UUID(refs[0]), content="Dinner at Odd Duck.", occurred_at=DAY)])
    await apply(engine, scope, page(scope, "odd-duck", "Odd Duck", refs, ["odd duck"]))

    assert [title for _, _, title in await stored(engine, scope)] == ["Odd Duck"]
