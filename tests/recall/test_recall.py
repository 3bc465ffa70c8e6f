"""recall over a wiki built for each rule: one test per retriever (a question only that retriever can
answer, and the same question with it switched off), the memories behind the claims, bookkeeping
lines, dates, read-your-own-writes, bad input. The budget over the whole body: test_recall_budget.py."""

from __future__ import annotations

import json

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
    assert {"memories", "lexical", "evidence"} <= set(result.results[0].signals)


async def test_names_alone_answer_through_an_alias(engine):
    page = await entity(engine, "Melanie Hart", "melanie hart", "mel")
    other = await entity(engine, "Jonas Berg", "jonas berg")
    await filler(engine, other)
    line = "Took up the cello in 2019."
    await fact(engine, page, line)
    question = "Tell me about Mel."
    found = await recall(engine, SCOPE, question)
    assert texts(found)[0] == line and "names" in found.results[0].signals
    assert "lexical" not in found.results[0].signals and found.results[0].page == "entity/melanie-hart"
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
    assert found.results[0].date == "14 May 2022"


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
    assert (await db.rows(engine, "SELECT count(*) AS n FROM wiki_memory_vectors"))[0].n == 7  # the memories too
    question = "Which dog did they get?"
    found = await recall(engine, SCOPE, question, embedder=static_embedder)
    assert texts(found)[0] == line and set(found.results[0].signals) == {"semantic"}
    assert line not in texts(await recall(engine, SCOPE, question, without=["semantic"], embedder=static_embedder))


async def test_a_condensed_claim_comes_with_the_memory_that_answers(engine):
    page = await entity(engine, "Jonas Berg")
    memories = [await remember(engine, f"Went running along the river, lap {i}.", f"2024-01-{i + 1:02d}")
                for i in range(4)]
    ripe = await remember(engine, "The tomatoes ripened on the balcony in July.", "2024-07-20")
    await db.move_cursor_past_every_memory(engine, TENANT, OWNER)
    await claim(engine, page, "Keeps a busy outdoor life, running and gardening.", [*memories, ripe],
                first="2024-01-01", last="2024-07-20")
    from domain.recall import Tuning

    # Claims weighing as much as memories: the claim leads, with the memory that answers beside it.
    found = await recall(engine, SCOPE, "When did the tomatoes ripen?", tuning=Tuning(claims=2.0))
    best = found.results[0]
    assert best.kind == "claim" and best.text.startswith("Keeps a busy outdoor life")
    assert best.memory is not None and best.memory.id == ripe and best.memory.date == "20 July 2024"
    assert best.memory.text == "The tomatoes ripened on the balcony in July."
    assert best.memories[0] == ripe and best.date == "1 January 2024 to 20 July 2024"
    assert ripe not in [r.id for r in found.results[1:]]  # sent once


async def test_a_memory_cited_by_no_claim_is_recalled(engine):
    page = await entity(engine, "Jonas Berg")
    await filler(engine, page)
    alone = await remember(engine, "The spare key is under the blue flowerpot.", "2024-02-02")
    await db.move_cursor_past_every_memory(engine, TENANT, OWNER)  # compiled, and no claim cites it
    found = await recall(engine, SCOPE, "Where is the spare key?")
    assert found.results[0].kind == "memory" and found.results[0].id == alone
    assert found.results[0].uncompiled is False and found.results[0].date == "2 February 2024"


async def test_a_claim_that_is_an_excerpt_of_its_memory_is_answered_by_the_memory(engine):
    page = await entity(engine, "Jonas Berg")
    memory = await remember(engine, "Moved to Porto in March. The flat has a view of the river and a tiny garden.",
                            "2024-03-05")
    await db.move_cursor_past_every_memory(engine, TENANT, OWNER)
    await claim(engine, page, "- 2024-03-05: Moved to Porto in March.", [memory], first="2024-03-05")
    found = await recall(engine, SCOPE, "What does the flat in Porto have a view of?")
    assert found.results[0].kind == "memory" and found.results[0].id == memory
    assert "view of the river" in found.results[0].text and found.results[0].page == "entity/jonas-berg"
    assert len(found.results) == 1


async def test_bookkeeping_lines_come_only_for_questions_about_counts(engine):
    page = await entity(engine, "Jonas Berg")
    other = await entity(engine, "Melanie Hart")
    memories = [await remember(engine, f"Met Melanie Hart for coffee, time {i}.", f"2024-0{i + 1}-01")
                for i in range(3)]
    await db.move_cursor_past_every_memory(engine, TENANT, OWNER)
    together = "- Often together with: **Melanie Hart** (3)."
    await claim(engine, page, together, memories, kind="derived", first="2024-01-01", last="2024-03-01")
    span = "- 3 memories, 2024-01-01 to 2024-03-01."
    await claim(engine, page, span, memories, kind="derived", first="2024-01-01", last="2024-03-01")
    await fact(engine, other, "Melanie Hart drinks her coffee black.")
    for question in ["What does Melanie Hart drink?", "Tell me about Jonas Berg and Melanie Hart."]:
        said = [r.text for r in (await recall(engine, SCOPE, question, max_tokens=2000)).results]
        assert together not in said and span not in said, question
    said = [r.text for r in (await recall(engine, SCOPE, "How often did Jonas Berg meet Melanie Hart?",
                                          max_tokens=2000)).results]
    assert together in said or span in said


async def test_a_relative_day_is_dated_for_a_question_about_when(engine):
    memory = await remember(engine, "Caroline: I went to the support group yesterday, it was powerful.",
                            "2023-05-08")
    found = await recall(engine, SCOPE, "When did Caroline go to the support group?")
    assert found.results[0].id == memory
    assert "yesterday [7 May 2023]" in found.results[0].text
    plain = await recall(engine, SCOPE, "What did Caroline think of the support group?")
    assert "[7 May 2023]" not in plain.results[0].text


async def test_the_reply_to_a_question_is_found_through_its_neighbour(engine):
    from domain.recall import Tuning

    asked = await remember(engine, "Maria: How often do you get to see sunsets like that one?", "2023-06-01T10:00:00")
    reply = await remember(engine, "John: At least once a week, it helps me find peace.", "2023-06-01T10:00:30")
    await remember(engine, "John: I painted the garage door green.", "2023-06-09T09:00:00")
    found = await recall(engine, SCOPE, "How often does John see sunsets?", tuning=Tuning(neighbours=0.5))
    assert [r.id for r in found.results[:2]] == [asked, reply]
    alone = await recall(engine, SCOPE, "How often does John see sunsets?", tuning=Tuning(neighbours=0.0))
    assert [r.id for r in alone.results[:2]] != [asked, reply]  # the shorter unrelated line comes first


async def test_a_memory_retained_a_second_ago_is_found_before_any_compile(engine):
    await remember(engine, "Parked the car on level 3, spot 41.")
    found = await recall(engine, SCOPE, "Where did I park the car?")
    assert found.results[0].uncompiled and found.results[0].text.startswith("Parked the car")
    await db.move_cursor_past_every_memory(engine, TENANT, OWNER)  # as once compiled: still recalled
    assert [r.uncompiled for r in (await recall(engine, SCOPE, "Where did I park the car?")).results] == [False]


async def test_another_scope_is_never_recalled(engine):
    page = await entity(engine, "Jonas Berg", tenant="globex")
    theirs = await remember(engine, "Keeps bees on the roof.", tenant="globex")
    await claim(engine, page, "Keeps bees on the roof.", [theirs])
    assert (await recall(engine, SCOPE, "Who keeps bees on the roof?")).results == []


@pytest.mark.parametrize("arguments, message", [
    ({"question": "  "}, "question must not be empty"),
    ({"question": "x" * 1001}, "question must be at most 1000"),
    ({"question": "bees", "max_tokens": 0}, "max_tokens must be between 50 and 8000"),
    ({"question": "bees", "max_tokens": 49}, "max_tokens must be between 50 and 8000"),
    ({"question": "bees", "max_tokens": 9000}, "max_tokens must be between 50 and 8000"),
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
    await claim(engine, page, "- 4 memories, 2026-11-01 to 2026-11-04.", memories, first="2026-11-01")
    assert old and sure
    found = await context(engine, SCOPE, max_tokens=200)
    assert [r.text for r in found.results] == ["Works at the harbour office.",
                                               "Once owned a canoe and paddled it on the lake every summer."]
    assert found.results[0].source_count == 4 and len(found.results[0].memories) == 3
    assert len(found.body) <= 800 and json.loads(found.body)["tokens_used"] == found.tokens_used
    tight = await context(engine, SCOPE, max_tokens=100)
    assert [r.text for r in tight.results] == ["Works at the harbour office."] and len(tight.body) <= 400
    assert tight.left_out == 1


async def test_the_kept_indexes_follow_the_scope_revision_alone(engine):
    """The one cache rule: recall's indexes are served under the scope's revision. A row written with
    the revision's triggers off is not seen (nothing else says the scope changed); the next write
    that moves the revision brings it in."""
    def vans(result) -> list[str]:
        return [r.text for r in result.results if "van" in r.text]

    await remember(engine, "Parked the car on level 3.")
    assert vans(await recall(engine, SCOPE, "Where is the car parked?")) == []
    async with engine.begin() as conn:
        from sqlalchemy import text

        await conn.execute(text("SET LOCAL session_replication_role = replica"))  # triggers off
        await conn.execute(text("""
            INSERT INTO memory_units (id, tenant_id, owner_id, content) VALUES (gen_random_uuid(), :t, :o, :c)
        """), {"t": TENANT, "o": OWNER, "c": "Parked the van by the car wash."})
    assert vans(await recall(engine, SCOPE, "Where is the car parked?")) == []
    await remember(engine, "Bought a new umbrella.")  # moves the revision
    assert vans(await recall(engine, SCOPE, "Where is the car parked?")) == ["Parked the van by the car wash."]
