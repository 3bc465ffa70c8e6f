"""The operator's corrections through the real compile: each survives the next compile and the next
`wiki rebuild` (which deletes every page and compiles every memory again)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import text

from app import corrections
from app.operations import OperationRefused, rebuild_scope
from app.reads import BadInput, NotFound, ReadScope
from domain.memory import MemoryIn
from store.memories import store_memories
from tests.compile.helpers import compile_scope, ledger, running_worker, test_settings
from tests.compile.test_aggregation import TENANT as AGG_TENANT
from tests.compile.test_aggregation import page, section
from tests.compile.test_section_promotion import SPAN_DAYS, city_venue_memories, city_venues, venue_visits

TENANT = "t-corrections"
ALEXANDRA = {"name": "Alexandra Reyes", "type": "entity", "kind": "person", "aliases": ["Alex Reyes"]}


def person(content: str, day: int, entity: dict[str, Any] = ALEXANDRA) -> MemoryIn:
    return MemoryIn(id=uuid.uuid5(uuid.NAMESPACE_URL, f"corrections/{content}"), content=content,
                    metadata={"entities": [entity]}, occurred_at=f"2026-03-{day:02d}T10:00:00Z")


BASE = [person("Alexandra Reyes hosted a board game night.", 1), person("Alexandra Reyes baked sourdough.", 2)]


async def one(engine, sql: str, **params) -> Any:
    async with engine.connect() as conn:
        return (await conn.execute(text(sql), params)).all()


async def aliases_of(engine, owner: str, slug: str) -> dict[str, str]:
    found = await one(engine, """SELECT a.alias, a.source FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
                                 WHERE p.tenant_id = :t AND p.owner_id = :o AND p.slug = :s""", t=TENANT, o=owner, s=slug)
    return {row.alias: row.source for row in found}


async def cited_by(engine, owner: str, memory: MemoryIn) -> set[str]:
    found = await one(engine, """SELECT DISTINCT p.slug FROM wiki_section_sources s JOIN wiki_page_sections ps
                                 ON ps.id = s.section_id JOIN wiki_pages p ON p.id = ps.page_id
                                 WHERE p.tenant_id = :t AND p.owner_id = :o AND s.source_ref = :m""",
                      t=TENANT, o=owner, m=str(memory.id))
    return {row.slug for row in found}


async def retained_and_compiled(client, engine, settings, owner: str, memories: list[MemoryIn]) -> None:
    """The memories stored in the corrections tenant, then compiled: how most tests here begin."""
    await store_memories(engine, TENANT, owner, memories)
    await compile_scope(client, settings, TENANT, owner)


async def rebuilt(client, engine, settings, tenant: str, owner: str) -> None:
    _, handle = await rebuild_scope(client, engine, settings, tenant, owner)
    await handle.result()


async def test_an_alias_added_by_hand_brings_its_name_to_the_page_and_survives_compile_and_rebuild(engine, client):
    owner, at = "o-alias", ReadScope.of(TENANT, "o-alias")
    settings = test_settings()
    lexi = person("Lexi brought homemade salsa.", 5, {"name": "Lexi", "type": "entity", "kind": "person"})
    async with running_worker(client, engine, settings):
        await retained_and_compiled(client, engine, settings, owner, BASE)
        done = await corrections.add_alias(engine, at, "Alexandra Reyes", "Lexi")
        assert "'lexi'" in done.done
        await retained_and_compiled(client, engine, settings, owner, [lexi])
        assert await cited_by(engine, owner, lexi) == {"alexandra-reyes"}  # the alias won: no held "Lexi"
        assert not await one(engine, "SELECT 1 FROM wiki_unresolved_mentions WHERE owner_id = :o AND status = 'open'",
                             o=owner)
        assert (await aliases_of(engine, owner, "alexandra-reyes"))["lexi"] == "manual"
        await rebuilt(client, engine, settings, TENANT, owner)
    assert (await aliases_of(engine, owner, "alexandra-reyes"))["lexi"] == "manual"
    with pytest.raises(NotFound):
        await corrections.add_alias(engine, at, "entity/nobody", "Lexi")
    with pytest.raises(BadInput, match="letter or digit"):
        await corrections.add_alias(engine, at, "Alexandra Reyes", "  ...  ")


async def test_an_alias_removed_by_hand_stays_removed_through_compile_and_rebuild(engine, client):
    owner, at = "o-unalias", ReadScope.of(TENANT, "o-unalias")
    settings = test_settings()
    async with running_worker(client, engine, settings):
        await retained_and_compiled(client, engine, settings, owner, BASE)
        assert "alex reyes" in await aliases_of(engine, owner, "alexandra-reyes")
        await corrections.remove_alias(engine, at, "entity/alexandra-reyes", "Alex Reyes")
        assert "alex reyes" not in await aliases_of(engine, owner, "alexandra-reyes")
        await retained_and_compiled(client, engine, settings, owner, [person("Alexandra Reyes ran a half marathon.", 6)])
        assert "alex reyes" not in await aliases_of(engine, owner, "alexandra-reyes")
        await rebuilt(client, engine, settings, TENANT, owner)
    left = await aliases_of(engine, owner, "alexandra-reyes")
    assert "alexandra reyes" in left and "alex reyes" not in left


async def test_an_ignored_name_is_never_promoted_nor_held_open_through_compile_and_rebuild(engine, client):
    owner, at = "o-ignore", ReadScope.of(TENANT, "o-ignore")
    settings = test_settings()
    zorblax = {"name": "Zorblax", "type": "entity", "kind": "project"}
    async with running_worker(client, engine, settings):
        await retained_and_compiled(client, engine, settings, owner, [*BASE, person("Started the Zorblax prototype.", 3, zorblax)])
        assert await one(engine, "SELECT 1 FROM wiki_unresolved_mentions WHERE owner_id = :o AND status = 'open' "
                                 "AND alias_normalized = 'zorblax'", o=owner)
        assert (await corrections.ignore_mention(engine, at, "Zorblax")).changed == 1
        # two more sightings in one batch: enough for a page of its own, and for a promotion (as a name
        # nobody ignored, seen as often in the same batch, shows)
        quillon = {"name": "Quillon", "type": "entity", "kind": "project"}
        await store_memories(engine, TENANT, owner, [person("Zorblax demo went well.", 7, zorblax),
                                                     person("Zorblax needs a new name.", 8, zorblax),
                                                     person("Quillon demo went well.", 7, quillon),
                                                     person("Quillon needs a new name.", 8, quillon)])
        await compile_scope(client, settings, TENANT, owner)
        assert await one(engine, "SELECT 1 FROM wiki_pages WHERE owner_id = :o AND slug = 'quillon'", o=owner)
        for stage in ("compile", "rebuild"):
            pages = await one(engine, "SELECT slug FROM wiki_pages WHERE owner_id = :o AND slug LIKE '%zorblax%'",
                              o=owner)
            open_ = await one(engine, "SELECT 1 FROM wiki_unresolved_mentions WHERE owner_id = :o "
                                      "AND alias_normalized = 'zorblax' AND status = 'open'", o=owner)
            assert (pages, open_) == ([], []), stage
            if stage == "compile":
                await rebuilt(client, engine, settings, TENANT, owner)
    assert (await one(engine, "SELECT mention_count FROM wiki_unresolved_mentions WHERE owner_id = :o "
                              "AND alias_normalized = 'zorblax'", o=owner))[0].mention_count >= 1


async def test_a_paused_scope_stores_retains_and_compiles_nothing_until_resumed(engine, client):
    owner, at = "o-pause", ReadScope.of(TENANT, "o-pause")
    settings = test_settings()
    async with running_worker(client, engine, settings):
        await retained_and_compiled(client, engine, settings, owner, BASE)
        await corrections.set_paused(engine, at, True)
        later = person("Alexandra Reyes adopted a cat.", 9)
        await retained_and_compiled(client, engine, settings, owner, [later])
        assert await cited_by(engine, owner, later) == set()
        assert (await ledger(engine, TENANT, owner))[-1]["metrics"].get("records_processed", 0) == 0
        with pytest.raises(OperationRefused, match="paused"):
            await rebuild_scope(client, engine, settings, TENANT, owner)
        await corrections.set_paused(engine, at, False)
        await compile_scope(client, settings, TENANT, owner)
        assert await cited_by(engine, owner, later) == {"alexandra-reyes"}
        # paused again, the pause holds through a compile and stays set across a rebuild's refusal
        await corrections.set_paused(engine, at, True)
        assert (await corrections.scope_corrections(engine, at)).paused


async def test_rolled_back_deterministic_links_stay_gone_through_compile_and_rebuild(engine, client):
    owner, at = "o-links", ReadScope.of(TENANT, "o-links")
    settings = test_settings()
    uchi = {"name": "Uchi", "type": "entity", "kind": "restaurant"}
    place = {"name": "Uchi", "city": "Austin", "address": "801 S Lamar Blvd, Austin, TX 78704"}
    visits = [MemoryIn(content=f"Dinner at Uchi with Alexandra Reyes, visit {n}.", occurred_at=f"2026-04-0{n}T20:00:00Z",
                       metadata={"entities": [uchi, ALEXANDRA], "place": place}) for n in (1, 2, 3)]
    query = ("SELECT l.context FROM wiki_page_links l JOIN wiki_pages p ON p.id = l.from_page_id WHERE p.owner_id = :o "
             "AND (l.context LIKE 'deterministic:%' OR l.context LIKE 'co!_mention:%' ESCAPE '!')")
    async with running_worker(client, engine, settings):
        await retained_and_compiled(client, engine, settings, owner, [*BASE, *visits[:2]])
        assert await one(engine, query, o=owner), "the corpus makes deterministic links"
        dropped = (await corrections.rollback_deterministic_links(engine, at)).changed
        assert dropped > 0 and not await one(engine, query, o=owner)
        await store_memories(engine, TENANT, owner, visits[2:])
        await compile_scope(client, settings, TENANT, owner)
        assert not await one(engine, query, o=owner)
        await rebuilt(client, engine, settings, TENANT, owner)
    assert not await one(engine, query, o=owner)
    assert await one(engine, "SELECT 1 FROM wiki_pages WHERE owner_id = :o AND slug = 'uchi'", o=owner)


async def test_a_section_kept_on_its_page_is_never_promoted_through_compile_and_rebuild(engine, client):
    seed = 3
    city, region, names = city_venues(seed)
    owner, at = "o-keep", ReadScope.of(AGG_TENANT, "o-keep")
    settings = test_settings()
    more = [*venue_visits(names[0], city, f"100 Main St, {city}, {region}, USA", [SPAN_DAYS + 1]),
            *venue_visits(names[1], city, f"101 Main St, {city}, {region}, USA", [SPAN_DAYS + 1])]
    await store_memories(engine, AGG_TENANT, owner, city_venue_memories(seed, city, region, names))
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, AGG_TENANT, owner)
        hub = await page(engine, owner, city, "topic")
        assert (await section(engine, hub.id, "restaurants")).aggregation["promotion_status"] == "candidate"
        await corrections.keep_section(engine, at, f"topic/{hub.slug}", "restaurants")
        await store_memories(engine, AGG_TENANT, owner, more)  # what promotes the list without the correction
        await compile_scope(client, settings, AGG_TENANT, owner)
        assert await page(engine, owner, f"{city} Restaurants", "topic") is None
        await rebuilt(client, engine, settings, AGG_TENANT, owner)
        await store_memories(engine, AGG_TENANT, owner, [
            *venue_visits(names[0], city, f"100 Main St, {city}, {region}, USA", [SPAN_DAYS + 2]),
            *venue_visits(names[1], city, f"101 Main St, {city}, {region}, USA", [SPAN_DAYS + 2])])
        await compile_scope(client, settings, AGG_TENANT, owner)
    assert await page(engine, owner, f"{city} Restaurants", "topic") is None
    assert sum(run["metrics"].get("sections_promoted", 0) for run in await ledger(engine, AGG_TENANT, owner)) == 0
