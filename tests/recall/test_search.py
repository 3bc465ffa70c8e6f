"""Search is recall's ranking grouped by page: the same words rank the same texts alike on both
surfaces; pages the words name come first; a word may be cut short; stop words alone find nothing."""

from __future__ import annotations

import random

from app.reads import ReadScope
from app.recall import recall
from app.search import search
from tests.operators import helpers as db
from tests.recall.wiki import OWNER, TENANT, entity, fact, remember

SCOPE = ReadScope.of(TENANT, OWNER)


async def slugs(engine, query: str) -> list[str]:
    return [h.slug for h in (await search(engine, SCOPE, query, 10)).hits]


async def test_a_question_finds_the_pages_holding_its_answer(engine):
    await fact(engine, await entity(engine, "Spring fundraiser"), "The charity race raised money for the shelter.")
    await fact(engine, await entity(engine, "Awareness week"), "Posters about health went up everywhere.")
    await fact(engine, await entity(engine, "Garden"), "Tomatoes and basil on the balcony.")
    found = await slugs(engine, "What did the charity race raise awareness for?")
    assert found[0] == "spring-fundraiser" and "garden" not in found


async def test_stop_words_alone_match_nothing(engine):
    await fact(engine, await entity(engine, "Notes"), "What did they do there and then?")
    assert await slugs(engine, "what did the") == []


async def test_a_page_the_words_name_comes_first_with_its_alias(engine):
    named = await entity(engine, "Melanie Hart", "melanie hart", "mel")
    await fact(engine, named, "Paints on Sundays.")
    await fact(engine, await entity(engine, "Painting class"), "Painting class for painters who paint, painting.")
    hits = (await search(engine, SCOPE, "Where does Mel go painting?", 10)).hits
    assert [h.slug for h in hits[:2]] == ["melanie-hart", "painting-class"] and hits[0].matched_alias == "mel"


async def test_a_word_may_be_cut_short(engine):
    await fact(engine, await entity(engine, "El Gaucho"), "Empanadas de carne and chimichurri.")
    assert await slugs(engine, "empan") == ["el-gaucho"]


async def test_a_page_citing_a_memory_that_answers_is_found_through_it(engine):
    page = await db.page(engine, TENANT, OWNER, "franklin-barbecue", title="Franklin Barbecue")
    await db.section(engine, page, "notes", "Notes.", 1, sources=[await remember(engine, "Had brisket with Sam.")])
    await db.page(engine, TENANT, OWNER, "garden", title="Garden")
    assert await slugs(engine, "brisket") == ["franklin-barbecue"]


async def test_search_ranks_pages_as_recall_ranks_their_answers(engine):
    rng = random.Random(5)
    words = ["river", "garden", "violin", "market", "harbour", "bakery", "museum", "tram", "orchard"]
    for i in range(8):
        page = await entity(engine, f"Place {i}")
        for _ in range(rng.randint(1, 3)):
            await fact(engine, page, " ".join(rng.sample(words, rng.randint(2, 5))).capitalize() + f" {i}.")
    for _ in range(10):
        query = " ".join(rng.sample(words, 2))
        answers = (await recall(engine, SCOPE, query, max_tokens=2000)).results
        hits = (await search(engine, SCOPE, query, 10)).hits
        pages = [f"{h.type}/{h.slug}" for h in hits]
        assert bool(answers) == bool(hits), query
        if answers:  # the best answer's page is found, and the best page holds an answer
            assert answers[0].page in pages and pages[0] in {a.page for a in answers}, query
