"""Page names on a real database: a title stored in the wrong case takes its properly cased form, and a
name in bold links to its page by alias as well as by exact title."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from domain import ids
from domain.plan import PageUpdate, Plan, SectionUpdate
from domain.resolved_plan import DirectSection, ResolvedPage, ResolvedPlan
from store.plan_apply import apply_resolved_plan
from store.plan_resolution import resolve_plan

TENANT, OWNER = "t-names", "alice"


def page(slug: str, title: str, *sections: DirectSection, aliases: list[str] | None = None,
         page_type: str = "entity", mode: str = "create") -> ResolvedPage:
    return ResolvedPage(page_id=str(ids.page_id(TENANT, OWNER, page_type, slug)), type=page_type, slug=slug,
                        title=title, summary=None, mode=mode, keep_title=mode != "create", aliases=aliases or [],
                        sections=list(sections))


async def apply(engine: AsyncEngine, *pages: ResolvedPage) -> None:
    async with engine.begin() as conn:
        await apply_resolved_plan(conn, TENANT, OWNER, ResolvedPlan(memory_ids=[], tasks={}, pages=list(pages)), {},
                                  deterministic_linking=False)


async def value(engine: AsyncEngine, query: str, **params) -> str:
    async with engine.connect() as conn:
        return (await conn.execute(text(query), params)).scalar_one()


async def test_a_shouted_title_takes_the_properly_cased_form_a_proposal_writes(engine):
    await apply(engine, page("contramar", "CONTRAMAR", aliases=["contramar"]))
    page_id = str(ids.page_id(TENANT, OWNER, "entity", "contramar"))
    memory = str(uuid.uuid4())
    plan = Plan(pageUpdates=[PageUpdate(pageId=page_id, aliases=["Contramar", "Contra Mar"], sections=[
        SectionUpdate(slug="notes", proposed_body_md="- Tuna tostadas.", source_refs=[memory])])],
        newPages=[], unresolvedMentions=[], promotions=[])
    async with engine.begin() as conn:
        resolved, _ = await resolve_plan(conn, TENANT, OWNER, uuid.uuid4(), plan, [memory], datetime.now(UTC))
        await apply_resolved_plan(conn, TENANT, OWNER, resolved, {"s1": "- Tuna tostadas."},
                                  deterministic_linking=False)

    assert await value(engine, "SELECT title FROM wiki_pages WHERE id = :id", id=page_id) == "Contramar"


async def test_a_properly_cased_title_is_kept_whatever_a_proposal_writes(engine):
    await apply(engine, page("uchi", "Uchi", aliases=["uchi"]))
    page_id = str(ids.page_id(TENANT, OWNER, "entity", "uchi"))
    plan = Plan(pageUpdates=[PageUpdate(pageId=page_id, aliases=["UCHI", "uchi"], sections=[])],
                newPages=[], unresolvedMentions=[], promotions=[])
    async with engine.begin() as conn:
        resolved, _ = await resolve_plan(conn, TENANT, OWNER, uuid.uuid4(), plan, [], datetime.now(UTC))
        await apply_resolved_plan(conn, TENANT, OWNER, resolved, {}, deterministic_linking=False)

    assert await value(engine, "SELECT title FROM wiki_pages WHERE id = :id", id=page_id) == "Uchi"


async def test_a_variant_in_bold_links_to_its_page_by_alias(engine):
    await apply(engine, page("shinjuku-gyoen-national-garden", "Shinjuku Gyoen National Garden",
                             aliases=["shinjuku gyoen national garden", "shinjuku gyoen national gardens"]),
            page("tokyo", "Tokyo", aliases=["tokyo"], page_type="topic"))
    # Two pages answer to "park": an ambiguous name stays plain.
    await apply(engine, page("park-a", "Park A", aliases=["park"]), page("park-b", "Park B", aliases=["park"]))

    await apply(engine, page("tokyo", "Tokyo", DirectSection(
        slug="highlights", heading="Highlights", source_refs=[],
        body_md="- **Shinjuku Gyoen National Gardens**: a walk.\n- **Tokyo**: home.\n- **park**: a bench."),
        page_type="topic", mode="update"))

    body = await value(engine, "SELECT s.body_md FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id "
                               "WHERE p.slug = 'tokyo' AND s.section_slug = 'highlights'")
    assert body == ("- [**Shinjuku Gyoen National Gardens**](/wiki/entity/shinjuku-gyoen-national-garden): a walk.\n"
                    "- [**Tokyo**](/wiki/topic/tokyo): home.\n- **park**: a bench.")
