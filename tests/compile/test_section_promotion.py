"""Section promotion through the real compile, on generated city venues built for the rule: a rollup
that crosses the promotion rule becomes its own topic page; one short of it stays on its hub."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import timedelta

import pytest

from domain.aggregation import DEFAULT_PROMOTION_THRESHOLDS, MIN_LINKED_PAGES_TO_PROMOTE
from domain.memory import MemoryIn
from domain.render import render_promoted_parent_section, render_rollup_list
from store.memories import store_memories
from tests.compile import helpers
from tests.compile.helpers import (
    compile_scope,
    ledger,
    ledger_total,
    running_worker,
)
from tests.compile.test_aggregation import (
    TENANT,
    city_memory,
    day_at,
    hubness_by_sql,
    new_owner,
    page,
    pages_titled,
    rows,
    section,
)

VENUE_FIRST_WORDS = ["Marigold", "Juniper", "Copper", "Saffron", "Thistle", "Harbor", "Lantern", "Orchard",
                     "Cobalt", "Willow", "Ember", "Quarry", "Fennel", "Magpie", "Tamarind", "Basalt"]
VENUE_SECOND_WORDS = ["Kitchen", "Tavern", "Table", "Bistro", "Canteen", "Grill", "Cantina", "Eatery",
                      "Brasserie", "Diner", "Trattoria", "Smokehouse", "Noodle Bar", "Taqueria", "Chophouse", "Oyster Room"]
PROMOTION_CITIES = [("Austin", "TX 78704"), ("Portland", "OR 97214"), ("Denver", "CO 80205")]
SPAN_DAYS = 34
MEALS = ("Breakfast", "Lunch", "Dinner")


def venue_visits(name: str, city: str, address: str, days: Sequence[int]) -> list[MemoryIn]:
    metadata = {
        "entities": [{"name": name, "type": "entity", "kind": "restaurant"}],
        "place": {"name": name, "city": city, "address": address, "types": ["restaurant", "food"]},
        "tags": ["food"],
    }
    return [MemoryIn(content=f"{MEALS[visit % 3]} at {name}.", metadata=metadata,
                     occurred_at=day_at(day) + timedelta(hours=visit)) for visit, day in enumerate(days)]


def city_venues(seed: int, count: int | None = None) -> tuple[str, str, list[str]]:
    """A city, its region, and `count` restaurant names (11 to 13 when not given)."""
    rng = random.Random(seed)
    city, region = rng.choice(PROMOTION_CITIES)
    count = count or rng.randint(11, 13)
    names = [f"{first} {second}" for first, second in zip(rng.sample(VENUE_FIRST_WORDS, count),
                                                          rng.sample(VENUE_SECOND_WORDS, count), strict=True)]
    return city, region, names


def city_venue_memories(seed: int, city: str, region: str, names: list[str], visits: int = 3,
                        span_days: int = SPAN_DAYS) -> list[MemoryIn]:
    """The city, then `visits` visits to each venue between day 0 and day `span_days`. At the defaults:
    enough linked pages, supporting records and time span for the rollup of the city's restaurants to
    cross the promotion rule."""
    rng = random.Random(seed)
    days = [0, span_days, *(rng.randint(0, span_days) for _ in range(visits * len(names) - 2))]
    rng.shuffle(days)
    memories = [city_memory(city, 0)]
    for index, name in enumerate(names):
        memories += venue_visits(name, city, f"{100 + index} Main St, {city}, {region}, USA",
                                 days[visits * index:visits * (index + 1)])
    return memories


@pytest.mark.parametrize("seed", [3, 11])
async def test_a_rollup_that_crosses_the_promotion_rule_becomes_its_own_page_through_the_compile(client, engine, seed):
    """The scripted planners end to end: the leaf compile makes the venues' pages, its aggregation pass
    lists them under the city, the next pass that sees the city promotes that list into a topic page
    of its own, and later passes leave the parent's section as it was left and grow the promoted page."""
    city, region, names = city_venues(seed)
    owner = new_owner()
    settings = helpers.test_settings()
    await store_memories(engine, TENANT, owner, city_venue_memories(seed, city, region, names))
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, TENANT, owner)
        hub_page = await page(engine, owner, city, "topic")
        venues = await pages_titled(engine, owner, sorted(names, key=str.casefold))
        listed = await section(engine, hub_page.id, "restaurants")
        assert listed.body_md == render_rollup_list(venues)
        assert listed.aggregation["promotion_status"] == "candidate"  # scored promote_ready, promoted next pass
        assert listed.aggregation["supporting_record_count"] == 3 * len(names)
        assert (await ledger(engine, TENANT, owner))[-1]["metrics"].get("sections_promoted", 0) == 0

        # Two more visits in the city (two records about a place make it a hub candidate again) bring the
        # hub and its rollup back before the aggregation planner.
        await store_memories(engine, TENANT, owner, [
            *venue_visits(names[0], city, f"100 Main St, {city}, {region}, USA", [SPAN_DAYS + 1]),
            *venue_visits(names[1], city, f"101 Main St, {city}, {region}, USA", [SPAN_DAYS + 1])])
        await compile_scope(client, settings, TENANT, owner)
        assert (await ledger(engine, TENANT, owner))[-1]["metrics"]["sections_promoted"] == 1
        title = f"{city} Restaurants"
        child = await page(engine, owner, title, "topic")
        assert child is not None and child.parent_page_id == hub_page.id
        links = {tuple(row) for row in await rows(engine, """
            SELECT from_page_id, to_page_id, kind FROM wiki_page_links
            WHERE kind IN ('parent_of', 'child_of') AND (from_page_id = :c OR to_page_id = :c)""", c=child.id)}
        assert links == {(hub_page.id, child.id, "parent_of"), (child.id, hub_page.id, "child_of")}
        promoted = await section(engine, hub_page.id, "restaurants")
        top = [venue.title for venue in venues[:3]]
        assert promoted.body_md == render_promoted_parent_section(
            f"Restaurants in {city}: {len(venues)} pages, now listed on their own page.", top, title, "topic",
            child.slug).strip()
        assert promoted.aggregation["promotion_status"] == "promoted"
        assert promoted.aggregation["promoted_page_id"] == str(child.id)
        assert (await section(engine, child.id, "highlights")).body_md == render_rollup_list(venues)
        stored, recomputed = await hubness_by_sql(engine, hub_page.id)
        assert stored == recomputed >= 2  # a promoted child counts twice

        # Promoted is sticky: a new venue in the city joins the promoted page's list, never the parent's
        # section, and nothing is promoted again.
        newcomer = "Zinnia Supper Club"
        await store_memories(engine, TENANT, owner, venue_visits(newcomer, city, f"1 Elm St, {city}, {region}, USA",
                                                         [SPAN_DAYS + 2, SPAN_DAYS + 3]))
        await compile_scope(client, settings, TENANT, owner)
    runs = await ledger(engine, TENANT, owner)
    assert runs[-1]["metrics"].get("sections_promoted", 0) == 0 and ledger_total(runs, "sections_promoted") == 1
    again = await section(engine, hub_page.id, "restaurants")
    assert (again.body_md, again.aggregation["promotion_status"], again.aggregation["promoted_page_id"]) == (
        promoted.body_md, "promoted", str(child.id))
    grown = await pages_titled(engine, owner, sorted([*names, newcomer], key=str.casefold))
    assert (await section(engine, child.id, "highlights")).body_md == render_rollup_list(grown)
    assert [row.title for row in await rows(engine, "SELECT title FROM wiki_pages WHERE owner_id = :o AND "
                                                    "parent_page_id IS NOT NULL", o=owner)] == [title]


@pytest.mark.parametrize(("seed", "venues", "visits", "span_days"), [
    (5, MIN_LINKED_PAGES_TO_PROMOTE - 1, 4, SPAN_DAYS),  # a promote_ready score, one child short of the floor
    (7, MIN_LINKED_PAGES_TO_PROMOTE, 2, 1),  # enough children, too little support and time span
])
async def test_a_rollup_short_of_the_promotion_rule_stays_on_its_hub_through_the_compile(
        client, engine, seed, venues, visits, span_days):
    """Either half of the rule missing: the rollup is listed and rescored on every pass that sees its
    hub, and never promoted."""
    city, region, names = city_venues(seed, venues)
    owner = new_owner()
    settings = helpers.test_settings()
    await store_memories(engine, TENANT, owner, city_venue_memories(seed, city, region, names, visits, span_days))
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, TENANT, owner)
        await store_memories(engine, TENANT, owner, [
            *venue_visits(names[0], city, f"100 Main St, {city}, {region}, USA", [span_days]),
            *venue_visits(names[1], city, f"101 Main St, {city}, {region}, USA", [span_days])])
        await compile_scope(client, settings, TENANT, owner)
    hub_page = await page(engine, owner, city, "topic")
    listed = await section(engine, hub_page.id, "restaurants")
    assert listed.body_md == render_rollup_list(await pages_titled(engine, owner, sorted(names, key=str.casefold)))
    ready = listed.aggregation["promotion_score"] >= DEFAULT_PROMOTION_THRESHOLDS.promote_ready
    assert ready == (venues < MIN_LINKED_PAGES_TO_PROMOTE)  # each case misses exactly one half of the rule
    assert listed.aggregation["promotion_status"] == "candidate"
    assert ledger_total(await ledger(engine, TENANT, owner), "sections_promoted") == 0
    assert await page(engine, owner, f"{city} Restaurants") is None
