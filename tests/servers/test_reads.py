"""The shared read operations (app/reads.py) on a seeded wiki: names resolved, bounded windows,
citations, related pages over real links, changes since a time, scope isolation and bad input."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from app import reads
from app.reads import BadInput, NotFound, ReadScope
from app.retain import parse_memories
from app.search import search
from store.wiki_reads import PageSection, PageView
from tests.operators import helpers as db
from tests.servers.wiki import OWNER, seed_scope

ACME = ReadScope.of("acme", OWNER)
GLOBEX = ReadScope.of("globex", OWNER)


@pytest.fixture
async def wiki(engine):
    seeded = await seed_scope(engine, "acme")
    await seed_scope(engine, "globex")
    return seeded


async def test_search_ranks_alias_matches_first_and_stays_in_scope(engine, wiki):
    result = await search(engine, ACME, "franklin")
    assert [(h.type, h.slug) for h in result.hits][0] == ("entity", "franklin-barbecue")
    assert result.hits[0].matched_alias and "acme" in result.hits[0].summary
    hits = (await search(engine, ACME, "barbecue")).hits
    assert "old-diner" not in {h.slug for h in hits}  # never the archived page
    assert all("globex" not in (h.summary or "") for h in hits)
    assert (await search(engine, ACME, "empty-handed-zzz")).hits == []


@pytest.mark.parametrize("name,how", [
    ("entity/franklin-barbecue", "type/slug"), ("franklin-barbecue", "slug"), ("Franklin's", "alias"),
    ("FRANKLIN BARBECUE", "alias"), ("atx", "alias"), ("Austin, Texas", "alias"), ("Áustin Texas", "alias"),
])
async def test_get_page_resolves_slugs_titles_and_aliases_ignoring_case_and_accents(engine, wiki, name, how):
    page = await reads.get_page(engine, ACME, name)
    assert page.slug in ("franklin-barbecue", "austin-texas") and page.matched_by == how


async def test_get_page_is_markdown_with_section_ids_and_citation_counts(engine, wiki):
    page = await reads.get_page(engine, ACME, "entity/franklin-barbecue")
    assert page.markdown.startswith("# Franklin Barbecue\n")
    assert "## Overview {#overview}" in page.markdown and "## Notes {#notes}" in page.markdown
    assert "_cites 2 memories_" in page.markdown and "_cites 1 memory_" in page.markdown
    assert [(s.id, s.source_count) for s in page.sections] == [("overview", 2), ("notes", 1)]
    assert page.next_offset is None and page.total_chars == len(page.markdown)
    assert "(acme)" in page.markdown and "globex" not in page.markdown


async def test_a_long_page_comes_in_windows_that_add_up_to_the_whole(engine, wiki):
    long_page = await db.page(engine, "acme", OWNER, "long-read", title="Long Read")
    for position in range(1, 9):
        await db.section(engine, long_page, f"part-{position}", f"Paragraph {position}. " * 60, position)
    whole = reads.page_markdown(await _view(engine, "long-read"))
    parts, offset = [], 0
    while offset is not None:
        page = await reads.get_page(engine, ACME, "Long Read", offset=offset, max_chars=1000)
        assert len(page.markdown) <= 1000 and page.total_chars == len(whole)
        parts.append(page.markdown)
        offset = page.next_offset
    assert "".join(parts) == whole and len(parts) > 3
    assert all(part.endswith("\n") for part in parts)  # cut at line ends


async def _view(engine, slug):
    from store.wiki_reads import find_page

    async with engine.connect() as conn:
        return await find_page(conn, "acme", OWNER, "entity", slug)


async def test_sources_are_the_cited_memories_with_text_and_date(engine, wiki):
    result = await reads.get_sources(engine, ACME, "franklin barbecue")
    assert result.total == 2 and not result.truncated
    assert {str(m.id) for m in result.memories} == set(wiki.memories[:2])
    assert all(m.content.startswith("[acme]") and m.occurred_at for m in result.memories)
    line = next(m for m in result.memories if str(m.id) == wiki.memories[1])
    assert line.sections == ["notes", "overview"]
    notes = await reads.get_sources(engine, ACME, "franklin-barbecue", section="notes")
    assert [str(m.id) for m in notes.memories] == [wiki.memories[1]]
    one = await reads.get_sources(engine, ACME, "franklin-barbecue", limit=1)
    assert len(one.memories) == 1 and one.truncated and one.total == 2
    with pytest.raises(NotFound, match="no section 'visits'.*overview, notes"):
        await reads.get_sources(engine, ACME, "franklin-barbecue", section="visits")


async def test_related_walks_links_each_way_and_ranks_every_page_of_the_cone(engine, wiki):
    result = await reads.related(engine, ACME, "entity/franklin-barbecue")
    slugs = [h.slug for h in result.hits]
    assert set(slugs) == {"austin-texas", "sam", "austin-bbq"}  # the archived page is never a candidate
    assert result.cone_size == 3
    sam = next(h for h in result.hits if h.slug == "sam")
    assert sam.direction == "both" and sam.hops == 1  # linked both ways: the cycle is walked without trouble
    assert all(h.influence > 0 for h in result.hits)
    assert result.hits == sorted(result.hits, key=lambda h: -h.score)
    downstream = await reads.related(engine, ACME, "austin-texas", direction="out")
    assert downstream.hits == []
    upstream = await reads.related(engine, ACME, "austin-texas", direction="in", max_hops=1)
    assert [h.slug for h in upstream.hits] == ["franklin-barbecue"]
    two_hops = await reads.related(engine, ACME, "austin-texas", direction="in")
    assert {h.slug for h in two_hops.hits} == {"franklin-barbecue", "sam", "austin-bbq"}
    assert (await reads.related(engine, ACME, "austin-texas", direction="in", limit=1)).hits[0].slug \
        == "franklin-barbecue"


async def test_changes_since_reports_created_and_rewritten_sections_and_new_citations(engine, wiki):
    before = datetime.now(UTC) - timedelta(hours=1)
    result = await reads.changes_since(engine, ACME, before.isoformat())
    assert {p.slug for p in result.pages} == {"austin-texas", "franklin-barbecue", "sam", "austin-bbq"}
    franklin = next(p for p in result.pages if p.slug == "franklin-barbecue")
    assert franklin.change == "created"
    assert [(s.slug, s.change) for s in franklin.sections] == [("overview", "added"), ("notes", "added")]
    assert set(franklin.sections[0].new_source_ids) == set(wiki.memories[:2])
    # A rewrite after a mark shows as an update of that page only.
    mark = (await db.rows(engine, "SELECT now() AS mark"))[0].mark
    await db.execute(engine, "UPDATE wiki_page_sections SET body_md = 'Closed Mondays.', updated_at = now() "
                             "WHERE id = :id", id=wiki.sections["notes"])
    later = await reads.changes_since(engine, ACME, mark.isoformat())
    assert [(p.slug, p.change, [(s.slug, s.change) for s in p.sections]) for p in later.pages] \
        == [("franklin-barbecue", "updated", [("notes", "rewritten")])]
    assert (await reads.changes_since(engine, GLOBEX, mark.isoformat())).pages == []


async def test_changes_page_with_a_cursor_and_accept_a_compile_run_id(engine, wiki):
    since = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    seen, cursor = [], None
    while True:
        page = await reads.changes_since(engine, ACME, since, limit=1, cursor=cursor)
        seen += [p.slug for p in page.pages]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert sorted(seen) == ["austin-bbq", "austin-texas", "franklin-barbecue", "sam"] and len(seen) == 4
    run_id = await db.ledger_row(engine, status="succeeded", days_old=1, tenant="acme", owner=OWNER)
    assert len((await reads.changes_since(engine, ACME, run_id)).pages) == 4
    with pytest.raises(NotFound, match="no compile run"):
        await reads.changes_since(engine, GLOBEX, run_id)  # another scope's run is unknown here


async def test_other_scopes_pages_are_not_found_exactly_like_missing_ones(engine, wiki):
    await db.page(engine, "globex", OWNER, "globex-only", title="Globex Only")
    with pytest.raises(NotFound) as elsewhere:
        await reads.get_page(engine, ACME, "entity/globex-only")
    with pytest.raises(NotFound) as nowhere:
        await reads.get_page(engine, ACME, "entity/nowhere-at-all")
    assert str(elsewhere.value).replace("globex-only", "X") == str(nowhere.value).replace("nowhere-at-all", "X")
    with pytest.raises(NotFound):
        await reads.get_page(engine, ACME, "old-diner")  # archived pages are not read either
    with pytest.raises(NotFound, match="no page entity/atx"):
        await reads.get_page(engine, ACME, "entity/atx")  # TYPE/SLUG is exact: no fallback to the alias
    with pytest.raises(NotFound):
        await reads.related(engine, ACME, "Globex Only")


BAD_CALLS = [
    (lambda e: search(e, ACME, "   "), "query must not be empty"),
    (lambda e: search(e, ACME, "x" * 501), "at most 500"),
    (lambda e: search(e, ACME, "brisket", limit=10_000), "limit must be between 1 and 50"),
    (lambda e: search(e, ACME, "brisket", limit=0), "limit must be between"),
    (lambda e: reads.get_page(e, ACME, "franklin-barbecue", max_chars=10**9), "max_chars"),
    (lambda e: reads.get_page(e, ACME, "franklin-barbecue", offset=10**9), "offset"),
    (lambda e: reads.get_page(e, ACME, "a\x00b"), "NUL"),
    (lambda e: reads.related(e, ACME, "sam", limit=51), "limit"),
    (lambda e: reads.related(e, ACME, "sam", max_hops=99), "max_hops"),
    (lambda e: reads.related(e, ACME, "sam", direction="sideways"), "direction"),
    (lambda e: reads.changes_since(e, ACME, "yesterday"), "ISO-8601"),
    (lambda e: reads.changes_since(e, ACME, "2026-01-01", cursor="%%%"), "cursor"),
    (lambda e: reads.get_sources(e, ACME, "sam", limit=1000), "limit"),
]


async def test_bad_input_is_refused_with_one_sentence(engine, wiki):
    for call, message in BAD_CALLS:  # one seeded wiki for every case: a database per case is slow
        with pytest.raises(BadInput, match=message):
            await call(engine)


async def test_metacharacter_queries_are_plain_text(engine, wiki):
    for query in ["%", "_", "\\", "' OR 1=1 --", "a:* & !b", "(((", "<script>"]:
        assert (await search(engine, ACME, query)).hits == [], query
    # Around words, metacharacters only separate them; they never widen a match.
    assert [h.slug for h in (await search(engine, ACME, "franklin%")).hits][0] == "franklin-barbecue"
    assert [h.slug for h in (await search(engine, ACME, "sam' OR 1=1 --")).hits][0] == "sam"


def test_retain_batches_are_bounded_and_validated():
    with pytest.raises(BadInput, match="empty"):
        parse_memories([])
    with pytest.raises(BadInput, match="at most 100"):
        parse_memories([{"content": f"m{i}"} for i in range(101)])
    with pytest.raises(BadInput, match=r"memories\[1\]\.content.*32768"):
        parse_memories([{"content": "ok"}, {"content": "x" * 40_000}])
    with pytest.raises(BadInput, match=r"memories\[0\]\.tenant"):
        parse_memories([{"content": "ok", "tenant": "globex"}])  # no field can name a scope
    assert len(parse_memories([{"content": "ok", "id": str(uuid.uuid4())}])) == 1


def test_the_page_an_agent_reads_is_safe_whatever_the_rows_hold() -> None:
    # A row stored under an older rule: the address was only put in a code span.
    view = PageView(id=uuid.uuid4(), type="entity", slug="odd-duck", title="Odd Duck", summary="See www.evil.example.",
                    status="active", aliases=[], last_compiled_at=None, updated_at=datetime.now(UTC),
                    sections=[PageSection(slug="notes", heading="Notes", position=1, source_refs=["m1"],
                                          body_md="- Menu: \\[full menu\\](`https://evil.example/phish`) <b>x</b>")])

    markdown = reads.page_markdown(view)

    assert "evil.example" not in markdown and "<b>" not in markdown
    assert "- Menu: \\[full menu\\](`(link removed)`) &lt;b>x&lt;/b>" in markdown
    assert "## Notes {#notes}" in markdown and "_cites 1 memory_" in markdown
