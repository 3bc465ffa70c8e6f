"""The read and page commands of the `wiki` CLI on a compiled wiki (real Postgres and Temporal): search,
page show / backlinks / archive / restore / delete, memory pages; archive -> compile -> resurrect;
delete cascades; bad arguments."""

from __future__ import annotations

import json
import re
import uuid

import pytest

from domain.memory import MemoryIn
from store.memories import store_memories
from tests.compile.helpers import compile_scope, running_worker
from tests.operators import helpers as db
from tests.operators.cli import one_error_line, scope, wiki

TENANT = "readcli"


def franklin(content: str, day: int) -> MemoryIn:
    return MemoryIn(content=content, occurred_at=f"2026-03-{day:02d}T12:00:00Z", metadata={
        "entities": [{"name": "Franklin Barbecue", "type": "entity", "kind": "restaurant",
                      "aliases": ["franklin bbq"]}],
        "place": {"name": "Franklin Barbecue", "city": "Austin", "types": ["restaurant"]},
    })


async def retain_franklin(engine, *contents: str, first_day: int = 1) -> list[str]:
    memories = [franklin(content, first_day + n) for n, content in enumerate(contents)]
    result = await store_memories(engine, TENANT, "alice", memories)
    return [str(m) for m in result.inserted]


@pytest.fixture
async def compiled(settings, client, engine):
    memory_ids = await retain_franklin(engine, "Brisket at Franklin Barbecue with Sam.",
                                       "Back at Franklin Barbecue for beef ribs.")
    async with running_worker(client, engine, settings) as worker:
        await compile_scope(client, settings, TENANT, "alice")
        yield memory_ids, worker


async def test_search_show_backlinks_and_memory_pages(compiled):
    memory_ids, _ = compiled
    found = await wiki("search", "brisk", *scope(TENANT), "--json")
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)
    # "brisk" is a prefix of "Brisket", in Franklin's notes and in Austin's highlights.
    assert {(h["type"], h["slug"]) for h in hits} == {("entity", "franklin-barbecue"), ("topic", "austin")}
    by_alias = json.loads((await wiki("search", "franklin bbq", *scope(TENANT), "--json")).stdout)
    assert by_alias[0]["matched_alias"] == "franklin bbq"
    assert "entity/franklin-barbecue" in (await wiki("search", "franklin", *scope(TENANT))).stdout
    assert "no page of readcli/alice matches 'zebra'" in (await wiki("search", "zebra", *scope(TENANT))).stdout
    # A query too short to search is answered as HTTP and MCP answer it: no hits, not an error.
    short = await wiki("search", "a !", *scope(TENANT))
    assert short.exit_code == 0 and "a search word needs at least 2 letters or digits" in short.stdout

    shown = await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT), "--sources")
    assert shown.exit_code == 0, shown.output
    markdown = shown.stdout
    assert markdown.startswith("# Franklin Barbecue\n")
    assert "entity/franklin-barbecue · active · aliases: " in markdown
    headings = [line for line in markdown.splitlines() if line.startswith("## ")]
    page = json.loads((await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT), "--json")).stdout)
    assert headings == [f"## {s['heading']}" for s in page["sections"]]
    assert [s["position"] for s in page["sections"]] == sorted(s["position"] for s in page["sections"])
    cited = {ref for s in page["sections"] for ref in s["source_refs"]}
    assert cited == set(memory_ids)
    # Each source with its date, its id (for `wiki memory show`) and its first line.
    brisket, ribs = memory_ids
    assert f"- 2026-03-01 {brisket}: Brisket at Franklin Barbecue with Sam.\n" in markdown
    assert f"- 2026-03-02 {ribs}: Back at Franklin Barbecue for beef ribs.\n" in markdown
    # Once for the page: each memory listed once however many sections cite it.
    assert markdown.count("sources (2; `wiki memory show ID` shows one whole):") == 1
    assert markdown.count(f"{brisket}: Brisket") == 1
    per_section = (await wiki("page", "show", "Franklin BBQ", *scope(TENANT), "--sources", "--per-section")).stdout
    assert per_section.count("`wiki memory show ID` shows one whole):") == sum(
        1 for s in page["sections"] if s["source_refs"])
    # Named by title, alias or slug as MCP and HTTP name it, as well as by TYPE/SLUG.
    for name in ("Franklin Barbecue", "franklin bbq", "franklin-barbecue"):
        assert (await wiki("page", "show", name, *scope(TENANT))).stdout.startswith("# Franklin Barbecue\n")
    assert "sources" not in (await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT))).stdout
    with_sources = json.loads((await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT), "--sources",
                                          "--json")).stdout)
    assert {source["id"]: source["content"] for cited in with_sources["sources"].values() for source in cited} == {
        brisket: "Brisket at Franklin Barbecue with Sam.", ribs: "Back at Franklin Barbecue for beef ribs."}

    backlinks = json.loads((await wiki("page", "backlinks", "topic/austin", *scope(TENANT), "--json")).stdout)
    assert [(b["from_type"], b["from_slug"]) for b in backlinks] == [("entity", "franklin-barbecue")]
    assert "entity/franklin-barbecue" in (await wiki("page", "backlinks", "topic/austin", *scope(TENANT))).stdout

    citing = json.loads((await wiki("memory", "pages", memory_ids[0], *scope(TENANT), "--json")).stdout)
    assert ("entity", "franklin-barbecue") in {(c["page_type"], c["page_slug"]) for c in citing}
    assert all(c["page_slug"] for c in citing)

    shown = await wiki("memory", "show", brisket, *scope(TENANT))
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith(f"# Memory {brisket}\n\nreadcli/alice · dated 2026-03-01 12:00 UTC · ")
    assert "\nBrisket at Franklin Barbecue with Sam.\n" in shown.stdout
    assert '"city": "Austin"' in shown.stdout  # the metadata, whole
    assert "- entity/franklin-barbecue (Franklin Barbecue): " in shown.stdout
    as_json = json.loads((await wiki("memory", "show", brisket, *scope(TENANT), "--json")).stdout)
    assert (as_json["content"], as_json["metadata"]["place"]["city"]) == ("Brisket at Franklin Barbecue with Sam.",
                                                                          "Austin")
    assert as_json["dated"].startswith("2026-03-01T12:00:00") and as_json["cited_by"] == citing


async def test_archive_hides_restore_shows_and_a_compile_resurrects(compiled, client, engine, settings):
    archived = await wiki("page", "archive", "entity/franklin-barbecue", *scope(TENANT))
    assert archived.exit_code == 0 and "archived entity/franklin-barbecue" in archived.stdout
    async def franklin_found() -> bool:
        hits = json.loads((await wiki("search", "franklin", *scope(TENANT), "--json")).stdout)
        return "franklin-barbecue" in {h["slug"] for h in hits}

    assert not await franklin_found()
    shown = await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT))
    assert "entity/franklin-barbecue · archived" in shown.stdout  # operators can still read it
    # Its link to Austin is kept, but an archived page is no backlink.
    assert json.loads((await wiki("page", "backlinks", "topic/austin", *scope(TENANT), "--json")).stdout) == []

    assert (await wiki("page", "restore", "entity/franklin-barbecue", *scope(TENANT))).exit_code == 0
    assert await franklin_found()

    assert (await wiki("page", "archive", "entity/franklin-barbecue", *scope(TENANT))).exit_code == 0
    new_ids = await retain_franklin(engine, "Franklin Barbecue sold out by noon.", "Franklin Barbecue again.",
                                    first_day=10)
    await compile_scope(client, settings, TENANT, "alice")
    page = json.loads((await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT), "--json")).stdout)
    assert page["status"] == "active"
    assert set(new_ids) <= {ref for s in page["sections"] for ref in s["source_refs"]}
    pages = await db.rows(engine, "SELECT count(*) AS n FROM wiki_pages WHERE tenant_id = :t AND slug = "
                                  "'franklin-barbecue'", t=TENANT)
    assert pages[0].n == 1  # resurrected, not duplicated


async def test_delete_asks_first_then_cascades(settings, engine):
    memory_ids = await db.memories(engine, TENANT, "alice", ["One.", "Two."])
    page_id = await db.page(engine, TENANT, "alice", "doomed", title="Doomed")
    keeper = await db.page(engine, TENANT, "alice", "keeper", title="Keeper")
    await db.section(engine, page_id, "overview", "Doomed.", 1, sources=memory_ids)
    await db.section(engine, page_id, "notes", "More.", 2, sources=memory_ids[:1])
    await db.alias(engine, page_id, "doomed")
    await db.link(engine, page_id, keeper)
    await db.link(engine, keeper, page_id)
    await db.execute(engine, "UPDATE wiki_unresolved_mentions SET promoted_page_id = NULL")  # none yet
    mention = await db.mention(engine, TENANT, "alice", "Doomed", 3, status="promoted")
    await db.execute(engine, "UPDATE wiki_unresolved_mentions SET promoted_page_id = :p WHERE id = :id",
                     p=page_id, id=mention)

    declined = await wiki("page", "delete", "entity/doomed", *scope(TENANT), stdin="n\n")
    one_error_line(declined, 1, "cancelled: nothing was changed")
    assert len(await db.rows(engine, "SELECT id FROM wiki_pages WHERE id = :id", id=page_id)) == 1

    deleted = await wiki("page", "delete", "entity/doomed", *scope(TENANT), "--yes")
    assert deleted.exit_code == 0, deleted.output
    assert ("deleted entity/doomed of readcli/alice with 2 sections, 1 aliases, 2 links and 3 section sources"
            in deleted.stdout)
    for table, column in (("wiki_page_sections", "page_id"), ("wiki_page_aliases", "page_id"),
                          ("wiki_page_links", "from_page_id"), ("wiki_page_links", "to_page_id")):
        assert await db.rows(engine, f"SELECT 1 FROM {table} WHERE {column} = :id", id=page_id) == []
    assert await db.rows(engine, "SELECT 1 FROM wiki_section_sources") == []
    assert len(await db.rows(engine, "SELECT id FROM wiki_pages WHERE id = :id", id=keeper)) == 1
    assert (await db.rows(engine, "SELECT promoted_page_id FROM wiki_unresolved_mentions WHERE id = :id",
                          id=mention))[0].promoted_page_id is None
    one_error_line(await wiki("page", "delete", "entity/doomed", *scope(TENANT), "--yes"), 1,
                   "no page entity/doomed in readcli/alice")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        # Anything that is not TYPE/SLUG is a name (slug, title or alias), as MCP and HTTP read it.
        (["page", "show", "bogus/x"], 1, "no page named 'bogus/x' in readcli/alice; `wiki search` finds pages"),
        (["page", "show", "entity"], 1, "no page named 'entity' in readcli/alice"),
        (["page", "backlinks", "entity/"], 1, "no page named 'entity/' in readcli/alice"),
        (["page", "archive", "topic"], 1, "no page named 'topic' in readcli/alice"),
        (["page", "show", " "], 2, "page name must not be empty"),
        (["memory", "pages", "not-a-uuid"], 2, "memory id must be a UUID (got 'not-a-uuid')"),
        (["search", "x", "--limit", "51"], 2, "limit must be between 1 and 50 (got 51)"),
        (["search", "x", "--limit", "0"], 2, "limit must be between 1 and 50 (got 0)"),
        (["page", "show", "entity/nope"], 1, "no page entity/nope in readcli/alice"),
        (["page", "backlinks", "entity/nope"], 1, "no page entity/nope in readcli/alice"),
        (["page", "restore", "entity/nope"], 1, "no page entity/nope in readcli/alice"),
        (["memory", "pages", str(uuid.UUID(int=7))], 1, f"no memory {uuid.UUID(int=7)} in readcli/alice"),
        (["memory", "show", str(uuid.UUID(int=7))], 1, f"no memory {uuid.UUID(int=7)} in readcli/alice"),
        (["memory", "show", "nope"], 2, "memory id must be a UUID (got 'nope')"),
        (["search", ""], 2, "query must not be empty"),
        (["search", "x" * 600], 2, "query must be at most"),
    ],
)
async def test_bad_arguments_and_missing_things(settings, args, code, message):
    one_error_line(await wiki(*args, *scope(TENANT)), code, message)


async def test_page_show_marks_claims_and_the_claim_commands_list_them(compiled):
    memory_ids, _ = compiled
    shown = await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT), "--json")
    assert shown.exit_code == 0, shown.output
    page = json.loads(shown.stdout)
    claims = [claim for section in page["claims"].values() for claim in section]
    assert claims and all(set(c["sources"]) <= set(memory_ids) and c["sources"] for c in claims)
    assert {"text", "sources", "confidence", "status", "first_seen", "last_seen"} <= set(claims[0])
    for section in page["sections"]:
        assert [c["text"] for c in page["claims"][section["slug"]]] == [
            line.strip() for line in section["body_md"].splitlines() if line.strip()]
    markdown = await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT))
    # offline: no judge, so a line is quoted (with its confidence), derived or unverified (with none)
    assert "verified ·" not in markdown.stdout.replace("unverified ·", "")
    assert "`[derived · " in markdown.stdout and re.search(r"`\[0\.\d0 quoted · \d+ mem\]`", markdown.stdout)
    assert {c["status"] for c in claims} <= {"quoted", "derived", "unverified"}
    assert all((c["confidence"] is None) == (c["status"] != "quoted") for c in claims)
    # and says what each status it shows means, one line each
    for status in {c["status"] for c in claims}:
        assert f"- {status}: {page['statuses'][status]}" in markdown.stdout
    listed = json.loads((await wiki("page", "list", *scope(TENANT), "--json")).stdout)
    assert ("entity", "franklin-barbecue") in {(p["type"], p["slug"]) for p in listed}
    assert sum(p["claims"] for p in listed) >= len(claims)
    rejected = await wiki("claims", "rejected", *scope(TENANT))
    assert rejected.exit_code == 0 and "no claim of readcli/alice was rejected" in rejected.stdout
    bad = await wiki("page", "show", "entity/franklin-barbecue", *scope(TENANT), "--min-confidence", "2")
    one_error_line(bad, 2, "min-confidence must be between 0 and 1 (got 2.0)")
