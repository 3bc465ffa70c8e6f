"""recall over a wiki built for each rule: one test per retriever (a question only that retriever can
answer, and the same question with it switched off), the budget, read-your-own-writes, bad input."""

from __future__ import annotations

import random

import pytest

from activities.claim_vectors import embed_new_claims
from app.reads import BadInput, ReadScope
from app.recall import recall
from messages.compile import Scope
from planners.embeddings import static_embedder
from tests.operators import helpers as db
from tests.recall.wiki import OWNER, TENANT, claim, entity, fact, remember

SCOPE = ReadScope.of(TENANT, OWNER)


def texts(result) -> list[str]:
    return [r.text for r in result.results]


def answer(result, line: str):
    return next(r for r in result.results if r.text == line)


async def filler(engine, page, count: int = 6) -> None:
    for i, line in enumerate(["Bought a red bicycle.", "Works night shifts at the hospital.",
                              "Plays chess on Sundays.", "Grows tomatoes in the garden.",
                              "Reads crime novels before bed.", "Visited her aunt in Porto."][:count]):
        await fact(engine, page, line, when=f"2024-0{1 + i % 8}-1{i}")


async def test_or_semantics_find_a_claim_sharing_only_some_words(engine):
    page = await entity(engine, "Melanie Hart", "melanie hart")
    await filler(engine, page)
    line = "The charity race raised money for mental health."
    await fact(engine, page, line)
    result = await recall(engine, SCOPE, "What did the charity race raise awareness for?")
    assert texts(result)[0] == line
    assert {"lexical", "evidence"} <= set(result.results[0].signals)


async def test_names_alone_answer_through_an_alias(engine):
    page = await entity(engine, "Melanie Hart", "melanie hart", "mel")
    other = await entity(engine, "Jonas Berg", "jonas berg")
    await filler(engine, other)
    line = "Took up the cello in 2019."
    await fact(engine, page, line)
    question = "Tell me about Mel."
    found = await recall(engine, SCOPE, question)
    assert texts(found)[0] == line and "names" in found.results[0].signals
    assert "lexical" not in found.results[0].signals
    assert line not in texts(await recall(engine, SCOPE, question, without=["names", "graph", "semantic"]))


async def test_a_first_name_alone_designates_the_page(engine):
    page = await entity(engine, "Melanie Hart", "melanie hart")
    await filler(engine, await entity(engine, "Jonas Berg"))
    line = "Took up the cello in 2019."
    await fact(engine, page, line)
    found = await recall(engine, SCOPE, "What does Melanie do?")
    assert texts(found)[0] == line


async def test_time_alone_answers_a_dated_question(engine):
    page = await entity(engine, "Jonas Berg")
    await filler(engine, page)
    line = "Adopted a greyhound from the shelter."
    await fact(engine, page, line, when="2022-05-14")
    question = "What happened in May 2022?"
    found = await recall(engine, SCOPE, question)
    assert texts(found)[0] == line and "time" in found.results[0].signals
    assert found.time_window and found.time_window.start.month == 5
    assert line not in texts(await recall(engine, SCOPE, question, without=["time", "semantic"]))


async def test_a_before_phrase_is_dated_by_the_memory_it_names(engine):
    page = await entity(engine, "Jonas Berg")
    await fact(engine, page, "Moved to Lisbon with the whole family.", when="2023-06-01")
    await fact(engine, page, "Started pottery classes downtown.", when="2023-02-01")
    await fact(engine, page, "Opened a bakery near the harbour.", when="2023-09-01")
    found = await recall(engine, SCOPE, "What did he start before the move to Lisbon?", without=["semantic"])
    assert found.time_window and found.time_window.end.month == 6
    assert "Started pottery classes downtown." in texts(found)[:2]


async def test_the_graph_alone_reaches_a_linked_page(engine):
    person = await entity(engine, "Jonas Berg")
    company = await entity(engine, "Northwind Traders")
    await db.link(engine, person, company)
    await filler(engine, await entity(engine, "Melanie Hart"))
    line = "Moved its headquarters to Oslo."
    await fact(engine, company, line)
    question = "Anything new around Jonas Berg?"
    found = await recall(engine, SCOPE, question)
    assert line in texts(found) and "graph" in answer(found, line).signals
    assert line not in texts(await recall(engine, SCOPE, question, without=["graph", "semantic"]))


async def test_meaning_alone_answers_with_embeddings(engine):
    page = await entity(engine, "Jonas Berg")
    await filler(engine, page)
    line = "Adopted a puppy called Rex."
    await fact(engine, page, line)
    assert await embed_new_claims(engine, Scope(tenant=TENANT, owner=OWNER), static_embedder) == 7
    assert await embed_new_claims(engine, Scope(tenant=TENANT, owner=OWNER), static_embedder) == 0  # incremental
    question = "Which dog did they get?"
    found = await recall(engine, SCOPE, question, embedder=static_embedder)
    assert texts(found)[0] == line and set(found.results[0].signals) == {"semantic"}
    assert line not in texts(await recall(engine, SCOPE, question, without=["semantic"], embedder=static_embedder))


async def test_a_condensed_claim_carries_the_memories_that_match(engine):
    page = await entity(engine, "Jonas Berg")
    memories = [await remember(engine, f"Went running along the river, lap {i}.", f"2024-01-{i + 1:02d}")
                for i in range(9)]
    memories.append(await remember(engine, "The tomatoes ripened on the balcony in July.", "2024-07-20"))
    await claim(engine, page, "10 memories about his days.", memories, kind="derived", first="2024-01-01",
                last="2024-07-20")
    found = await recall(engine, SCOPE, "When did the tomatoes ripen?")
    best = found.results[0]
    assert best.claim_kind == "derived" and best.source_count == 10
    assert [m.text for m in best.memories] == ["The tomatoes ripened on the balcony in July."]
    assert best.memories[0].kind == "cited"


async def test_the_budget_is_never_exceeded_and_says_what_it_left_out(engine):
    rng = random.Random(31)
    page = await entity(engine, "Jonas Berg")
    words = ["river", "garden", "violin", "market", "harbour", "train", "bakery", "museum"]
    for i in range(30):
        line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 40))) + f" note {i}."
        await fact(engine, page, line.capitalize())
    for _ in range(25):
        budget = rng.randint(20, 400)
        question = " ".join(rng.sample(words, 3))
        found = await recall(engine, SCOPE, question, max_tokens=budget, without=["semantic"])
        chars = sum(len(r.text) + len(r.page.title) + len(r.heading) + sum(len(m.text) for m in r.memories)
                    if r.kind == "claim" else len(r.text) for r in found.results)
        chars += sum(len(p.title) + len(p.summary) for p in found.pages)
        assert chars <= budget * 4 and found.tokens_used <= budget
        if found.left_out.answers:
            assert found.left_out.best and found.left_out.best_tokens


async def test_a_budget_smaller_than_the_best_claim_still_names_it(engine):
    page = await entity(engine, "Jonas Berg")
    line = "The charity race in the old harbour raised money for the children's hospital wing. " * 3
    await fact(engine, page, line.strip())
    found = await recall(engine, SCOPE, "What did the charity race raise money for?", max_tokens=20)
    assert found.results == [] and found.tokens_used == 0
    assert found.left_out.answers == 1 and found.left_out.best == line.strip()
    assert found.left_out.best_tokens > 20


async def test_a_memory_retained_a_second_ago_is_found_before_any_compile(engine):
    await remember(engine, "Parked the car on level 3, spot 41.")
    found = await recall(engine, SCOPE, "Where did I park the car?")
    assert found.results[0].kind == "uncompiled" and found.results[0].text.startswith("Parked the car")
    await db.move_cursor_past_every_memory(engine, TENANT, OWNER)  # as once compiled
    assert [r for r in (await recall(engine, SCOPE, "Where did I park the car?")).results if r.kind == "uncompiled"] == []


async def test_another_scope_is_never_recalled(engine):
    page = await entity(engine, "Jonas Berg", tenant="globex")
    await fact(engine, page, "Keeps bees on the roof.")
    await remember(engine, "Keeps bees on the roof.", tenant="globex")
    assert (await recall(engine, SCOPE, "Who keeps bees on the roof?")).results == []


@pytest.mark.parametrize("arguments, message", [
    ({"question": "  "}, "question must not be empty"),
    ({"question": "x" * 1001}, "question must be at most 1000"),
    ({"question": "bees", "max_tokens": 0}, "max_tokens must be between 20 and 8000"),
    ({"question": "bees", "max_tokens": 9000}, "max_tokens must be between 20 and 8000"),
    ({"question": "bees", "min_confidence": 2.0}, "min_confidence must be a number from 0 to 1"),
    ({"question": "bees", "as_of": "yesterday-ish"}, "as_of must be an ISO-8601 time"),
    ({"question": "bees", "without": ["lexical", "vibes"]}, "unknown retriever vibes"),
])
async def test_bad_input_is_one_sentence(engine, arguments, message):
    with pytest.raises(BadInput, match=message):
        await recall(engine, SCOPE, **arguments)


async def test_the_kept_index_follows_retains_and_deletions(engine):
    first = await remember(engine, "Parked the car on level 3.")
    assert [r.text for r in (await recall(engine, SCOPE, "Where is the car parked?")).results] == [
        "Parked the car on level 3."]
    await remember(engine, "Parked the bike by the car wash.")  # read incrementally by the next call
    assert len((await recall(engine, SCOPE, "Where is the car parked?")).results) == 2
    await db.execute(engine, "DELETE FROM memory_units WHERE id = CAST(:id AS uuid)", id=first)  # a rebuild
    assert [r.text for r in (await recall(engine, SCOPE, "Where is the car parked?")).results] == [
        "Parked the bike by the car wash."]


def test_a_tsvector_reads_back_as_lexeme_frequencies():
    from domain.text_index import parse_tsvector

    assert parse_tsvector("'car':2,5 'park':1 'o''neil':3 'bare'") == {"car": 2, "park": 1, "o'neil": 1, "bare": 1}


async def test_context_puts_sure_corroborated_recent_claims_first_within_the_budget(engine):
    from app.context import context

    page = await entity(engine, "Jonas Berg")
    old = await fact(engine, page, "Once owned a canoe and paddled it on the lake every summer.", when="2015-01-01")
    memories = [await remember(engine, f"Works at the harbour office, day {i}.", f"2026-11-0{i + 1}") for i in range(4)]
    await db.move_cursor_past_every_memory(engine, TENANT, OWNER)
    sure = await claim(engine, page, "Works at the harbour office.", memories, first="2026-11-01", last="2026-11-04")
    assert old and sure
    found = await context(engine, SCOPE, max_tokens=200)
    assert [r.text for r in found.results][:2] == ["Works at the harbour office.", "Once owned a canoe and paddled it on the lake every summer."]
    assert found.results[0].source_count == 4 and len(found.results[0].sources) == 4
    tight = await context(engine, SCOPE, max_tokens=20)
    assert [r.text for r in tight.results] == ["Works at the harbour office."] and tight.tokens_used <= 20
    assert tight.left_out.answers == 1 and tight.left_out.best == "Once owned a canoe and paddled it on the lake every summer."
