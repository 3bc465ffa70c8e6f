"""The read surfaces on seeded rows: search ranking, prefixes, aliases, Unicode; a page with its sections
and sources; backlinks; the memory -> sections reverse lookup; scoping and archived pages."""

from __future__ import annotations

import pytest

from store import wiki_reads
from tests.operators import helpers as db

TENANT, OWNER = "reads", "alice"


async def search(engine, query: str, limit: int | None = None, tenant: str = TENANT) -> list[wiki_reads.SearchHit]:
    async with engine.connect() as conn:
        return await wiki_reads.search_pages(conn, tenant, OWNER, query, limit)


def slugs(hits) -> list[str]:
    return [f"{h.type}/{h.slug}" for h in hits]


@pytest.fixture
async def wiki(engine):
    pages = {
        "franklin": await db.page(engine, TENANT, OWNER, "franklin-barbecue", title="Franklin Barbecue",
                                  summary="Brisket in Austin.", body="## Notes\n\nBrisket, ribs and a long line."),
        "la-barbecue": await db.page(engine, TENANT, OWNER, "la-barbecue", title="La Barbecue",
                                     body="Barbecue barbecue barbecue: brisket and more barbecue."),
        "empanadas": await db.page(engine, TENANT, OWNER, "el-gaucho", title="El Gaucho",
                                   body="Empanadas de carne and chimichurri."),
        "cafe": await db.page(engine, TENANT, OWNER, "cafe-ole", title="Café Olé", body="Café con leche on the terrace."),
        "diner": await db.page(engine, TENANT, OWNER, "joes-diner", title="Joe's Diner", body="Pancakes.",
                               days_old=3),
        "archived": await db.page(engine, TENANT, OWNER, "old-barbecue", title="Old Barbecue", status="archived",
                                  body="barbecue"),
    }
    await db.alias(engine, pages["franklin"], "franklin barbecue")
    await db.alias(engine, pages["franklin"], "franklin bbq")
    await db.alias(engine, pages["franklin"], "franklin's")
    await db.alias(engine, pages["cafe"], "cafe ole")
    await db.alias(engine, pages["diner"], "the 50% diner")
    await db.page(engine, "other", OWNER, "franklin-barbecue", title="Franklin Barbecue", body="barbecue")
    return pages


async def test_plain_matches_rank_by_text_relevance(engine, wiki):
    hits = await search(engine, "brisket")  # Franklin says it twice (summary and body), La Barbecue once
    assert slugs(hits) == ["entity/franklin-barbecue", "entity/la-barbecue"]
    assert hits[0].score > hits[1].score > 0
    assert all(h.matched_alias is None for h in hits)


async def test_an_alias_match_earns_the_bonus_and_outranks_text(engine, wiki):
    hits = await search(engine, "franklin bbq")  # "bbq" is in no page's text, only in an alias
    assert slugs(hits) == ["entity/franklin-barbecue"]
    assert hits[0].matched_alias == "franklin bbq" and hits[0].score >= wiki_reads.ALIAS_MATCH_BONUS
    # La Barbecue says "barbecue" five times, Franklin once; Franklin's alias contains it.
    hits = await search(engine, "barbecue")
    assert slugs(hits) == ["entity/franklin-barbecue", "entity/la-barbecue"]
    assert hits[0].matched_alias == "franklin barbecue" and hits[1].matched_alias is None
    assert hits[0].score - wiki_reads.ALIAS_MATCH_BONUS < hits[1].score


async def test_a_page_with_several_matching_aliases_appears_once_with_its_best_alias(engine, wiki):
    hits = await search(engine, "franklin")
    assert slugs(hits) == ["entity/franklin-barbecue"]
    assert hits[0].matched_alias == "franklin's"  # the shortest of the three containing "franklin"


async def test_prefix_input_finds_the_whole_word(engine, wiki):
    assert slugs(await search(engine, "empan")) == ["entity/el-gaucho"]
    assert slugs(await search(engine, "chimi empan")) == ["entity/el-gaucho"]
    assert await search(engine, "empanx") == []


async def test_accented_and_unaccented_queries_both_find_the_page(engine, wiki):
    assert slugs(await search(engine, "Café")) == ["entity/cafe-ole"]
    hits = await search(engine, "cafe")
    assert slugs(hits) == ["entity/cafe-ole"] and hits[0].matched_alias == "cafe ole"


async def test_like_wildcards_in_the_query_are_literal(engine, wiki):
    # "%" would match every alias as a LIKE pattern; it normalises away, and "50" must still match.
    hits = await search(engine, "50%")
    assert slugs(hits) == ["entity/joes-diner"] and hits[0].matched_alias == "the 50% diner"
    assert await search(engine, "%") == []
    assert await search(engine, "_") == []


async def test_archived_pages_and_other_scopes_never_match(engine, wiki):
    assert "entity/old-barbecue" not in slugs(await search(engine, "old barbecue"))
    other = await search(engine, "barbecue", tenant="other")
    assert slugs(other) == ["entity/franklin-barbecue"] and other[0].page_id != wiki["franklin"]


async def test_empty_or_one_letter_queries_return_nothing(engine, wiki):
    assert await search(engine, "   ") == []
    assert await search(engine, "a") == []


async def test_the_limit_is_at_most_fifty(engine):
    for n in range(55):
        await db.page(engine, TENANT, OWNER, f"taco-{n:02d}", title=f"Taco Stand {n}", body="tacos", days_old=n)
    assert len(await search(engine, "taco")) == 20
    assert len(await search(engine, "taco", limit=3)) == 3
    hits = await search(engine, "taco", limit=500)
    assert len(hits) == 50
    # Equal scores: the most recently compiled first.
    assert slugs(hits[:2]) == ["entity/taco-00", "entity/taco-01"]


async def test_a_page_reads_with_sections_in_order_and_their_sources(engine):
    memory_ids = await db.memories(engine, TENANT, OWNER, ["First visit.", "Second visit.", "Third visit."])
    page_id = await db.page(engine, TENANT, OWNER, "franklin-barbecue", title="Franklin Barbecue", summary="Brisket.")
    await db.section(engine, page_id, "visits", "- Second visit.", 2, sources=memory_ids[1:2])
    await db.section(engine, page_id, "overview", "Brisket.", 1, sources=memory_ids[:1])
    await db.section(engine, page_id, "notes", "No sources here.", 3)
    await db.alias(engine, page_id, "franklin bbq")
    async with engine.connect() as conn:
        page = await wiki_reads.find_page(conn, TENANT, OWNER, "entity", "franklin-barbecue")
        citing = await wiki_reads.sections_citing(conn, TENANT, OWNER, memory_ids[0])
        uncited = await wiki_reads.sections_citing(conn, TENANT, OWNER, memory_ids[2])
        elsewhere = await wiki_reads.find_page(conn, "other", OWNER, "entity", "franklin-barbecue")
    assert [s.slug for s in page.sections] == ["overview", "visits", "notes"]
    assert page.sections[1].source_refs == memory_ids[1:2] and page.sections[2].source_refs == []
    assert page.aliases == ["franklin bbq"] and page.status == "active"
    assert [(c.page_slug, c.section_slug) for c in citing] == [("franklin-barbecue", "overview")]
    assert uncited == [] and elsewhere is None


async def test_archived_pages_are_hidden_unless_asked_for(engine):
    memory_ids = await db.memories(engine, TENANT, OWNER, ["A memory."])
    page_id = await db.page(engine, TENANT, OWNER, "gone", status="archived")
    await db.section(engine, page_id, "notes", "Kept.", 1, sources=memory_ids)
    async with engine.connect() as conn:
        assert await wiki_reads.find_page(conn, TENANT, OWNER, "entity", "gone") is None
        shown = await wiki_reads.find_page(conn, TENANT, OWNER, "entity", "gone", include_archived=True)
        assert shown.status == "archived" and shown.sections[0].source_refs == memory_ids
        assert await wiki_reads.sections_citing(conn, TENANT, OWNER, memory_ids[0]) == []


async def test_backlinks_come_from_active_pages_of_the_scope_references_first(engine):
    target = await db.page(engine, TENANT, OWNER, "austin", title="Austin")
    franklin = await db.page(engine, TENANT, OWNER, "franklin-barbecue", title="Franklin Barbecue")
    zilker = await db.page(engine, TENANT, OWNER, "zilker-park", title="Zilker Park")
    hidden = await db.page(engine, TENANT, OWNER, "old", status="archived")
    await db.link(engine, zilker, target, kind="child_of")
    await db.link(engine, franklin, target, context="Located in Austin.")
    await db.link(engine, hidden, target)
    await db.link(engine, target, franklin)  # outgoing: not a backlink
    async with engine.connect() as conn:
        links = await wiki_reads.backlinks(conn, TENANT, OWNER, target)
        other_scope = await wiki_reads.backlinks(conn, "other", OWNER, target)
    assert [(b.kind, b.from_slug, b.context) for b in links] == [
        ("reference", "franklin-barbecue", "Located in Austin."), ("child_of", "zilker-park", None)]
    assert other_scope == []
