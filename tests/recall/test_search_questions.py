"""Search accepts questions: OR semantics with stop words left out, ranked by the share of the
question's words a page holds; exact names and aliases still come first."""

from __future__ import annotations

from app.pages import search
from tests.operators import helpers as db
from tests.recall.wiki import OWNER, TENANT


async def hits(engine, query: str) -> list[str]:
    async with engine.connect() as conn:
        return [h.slug for h in await search(conn, TENANT, OWNER, query, 10)]


async def test_a_question_finds_pages_sharing_some_of_its_words(engine):
    await db.page(engine, TENANT, OWNER, "spring-fundraiser", title="Spring fundraiser",
                  body="The charity race raised money for the shelter.")
    await db.page(engine, TENANT, OWNER, "awareness-week", title="Awareness week", body="Posters about health.")
    await db.page(engine, TENANT, OWNER, "garden", title="Garden", body="Tomatoes and basil.")
    found = await hits(engine, "What did the charity race raise awareness for?")
    assert found[0] == "spring-fundraiser" and "awareness-week" in found and "garden" not in found


async def test_stop_words_alone_match_nothing(engine):
    await db.page(engine, TENANT, OWNER, "what-we-did", title="Notes", body="What did they do there and then?")
    assert await hits(engine, "what did the") == []


async def test_an_exact_alias_in_a_question_comes_first(engine):
    named = await db.page(engine, TENANT, OWNER, "melanie-hart", title="Melanie Hart", body="Painter.")
    await db.alias(engine, named, "mel")
    await db.page(engine, TENANT, OWNER, "painting-class", title="Painting class",
                  body="Painting painting painting class for painters who paint.")
    found = await hits(engine, "Where does Mel go painting?")
    assert found[:2] == ["melanie-hart", "painting-class"]
