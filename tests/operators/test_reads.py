"""The read surfaces on seeded rows: a page with its sections and sources; backlinks; the memory ->
sections reverse lookup; scoping and archived pages (search: tests/recall/test_search.py)."""

from __future__ import annotations

from store import wiki_reads
from tests.operators import helpers as db

TENANT, OWNER = "reads", "alice"


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
