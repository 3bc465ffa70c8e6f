"""The aggregation pass (hubs, rollups, section promotion, hubness), against the real Temporal dev
server and Postgres.

The sample tests run the scripted aggregation planner. The apply-rule tests replace it with a
canned planner: a fake activity registered under the real name `aggregation.plan` that stages a
hand-written plan exactly like the real activity does, so resolve/write/apply run for real on a
small hand-made scope (compile once for the leaf pages, then again with the canned plan).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker

from activities.aggregation import Aggregation
from app.worker import WORKFLOWS, activities_for
from domain.aggregation import hubness_score
from domain.memory import MemoryIn
from domain.plan import LinkedPageRef, NewPage, NewSection, ParentSectionUpdate, Plan, SectionPromotion
from domain.render import render_promoted_parent_section, render_rollup_list
from messages.compile import (
    AggregationApplyInput,
    AggregationPlanInput,
    AggregationPlanResult,
    ResolvePlanInput,
    Scope,
    TokenCounts,
)
from planners.scripted.planner import ScriptedPlanner
from runtime.history_events import activity_type_names
from runtime.settings import Settings
from store import plan_staging
from store.memories import Cursor, read_after, store_memories
from tests.compile import helpers
from tests.compile.helpers import (
    compile_scope,
    ledger,
    ledger_total,
    retain_sample,
    running_worker,
    wiki_snapshot,
)

# --------------------------------------------------------------------------- a small hand-made scope

AUSTIN_RESTAURANTS = [
    ("Franklin Barbecue", "900 E 11th St, Austin, TX 78702, USA"),
    ("Home Slice Pizza", "1415 S Congress Ave, Austin, TX 78704, USA"),
    ("Emmer & Rye", "51 Rainey St, Austin, TX 78701, USA"),
    ("Uchi", "801 S Lamar Blvd, Austin, TX 78704, USA"),
    ("Suerte", "1800 E 6th St, Austin, TX 78702, USA"),
    ("Odd Duck", "1201 S Lamar Blvd, Austin, TX 78704, USA"),
    ("Veracruz All Natural", "1704 E Cesar Chavez St, Austin, TX 78702, USA"),
    ("Ramen Tatsu-Ya", "1234 S Lamar Blvd, Austin, TX 78704, USA"),
    ("Matt's El Rancho", "2613 S Lamar Blvd, Austin, TX 78704, USA"),
    ("Loro", "2115 S Lamar Blvd, Austin, TX 78704, USA"),
]
TORONTO_RESTAURANT = ("Momofuku Daishō", "190 University Ave, Toronto, ON M5H 0A3, Canada")
FIRST_DAY = datetime(2026, 3, 1, 12, tzinfo=UTC)
TENANT = "t-agg"


def new_owner() -> str:
    """A scope of its own: the workflow id (the scope lock) is shared by the whole Temporal session."""
    return f"o-{uuid.uuid4().hex[:10]}"


def day_at(n: int) -> datetime:
    return FIRST_DAY + timedelta(days=n)


def city_memory(city: str, day: int) -> MemoryIn:
    return MemoryIn(content=f"Arrived in {city}.", occurred_at=day_at(day),
                    metadata={"entities": [{"name": city, "type": "topic", "kind": "city"}]})


def restaurant_visits(name: str, city: str, address: str, day: int) -> list[MemoryIn]:
    """Two visits: the scripted leaf planner gives a page to what two memories name."""
    metadata = {
        "entities": [{"name": name, "type": "entity", "kind": "restaurant"}],
        "place": {"name": name, "city": city, "address": address, "types": ["restaurant", "food"]},
        "tags": ["food"],
    }
    return [MemoryIn(content=f"{meal} at {name}.", occurred_at=day_at(day) + timedelta(hours=hour), metadata=metadata)
            for meal, hour in (("Lunch", 0), ("Dinner", 6))]


async def retain_austin_scope(engine: AsyncEngine, owner: str, restaurants: int = 4) -> int:
    """Austin (a city topic), `restaurants` Austin restaurants and one Toronto restaurant."""
    memories = [city_memory("Austin", 0)]
    for day, (name, address) in enumerate(AUSTIN_RESTAURANTS[:restaurants], start=1):
        memories += restaurant_visits(name, "Austin", address, day)
    toronto_name, toronto_address = TORONTO_RESTAURANT
    memories += restaurant_visits(toronto_name, "Toronto", toronto_address, 20)
    await store_memories(engine, TENANT, owner, memories)
    return len(memories)


async def retain_another_memory(engine: AsyncEngine, owner: str) -> None:
    """A memory with no entities, so the next compile reads a record and runs the aggregation pass."""
    await store_memories(engine, TENANT, owner, [MemoryIn(content=f"A quiet evening ({uuid.uuid4().hex[:6]}).",
                                                   occurred_at=day_at(40))])


# --------------------------------------------------------------------------- the canned planner


async def stage_plan(engine: AsyncEngine, scope: Scope, plan_id: uuid.UUID, run_id: str,
                     memory_ids: list[uuid.UUID], plan: Plan) -> None:
    """Stage a plan exactly as the real aggregation.plan does."""
    async with engine.begin() as conn:
        await plan_staging.stage_plan(conn, plan_id, scope, run_id, memory_ids, plan)


class CannedAggregationPlanner:
    """Stands in for `aggregation.plan`: stages `canned` for the run's memories, or raises `error`.

    With neither set it has nothing to aggregate (skipped), so a first compile only builds leaves.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.canned: Plan | None = None
        self.error: ApplicationError | None = None

    @activity.defn(name="aggregation.plan")
    async def plan(self, request: AggregationPlanInput) -> AggregationPlanResult:
        if self.error is not None:
            raise self.error
        if self.canned is None:
            return AggregationPlanResult(plan_id=request.plan_id, usage=TokenCounts(), skipped=True)
        scope = request.scope
        async with self.engine.connect() as conn:
            records, _ = await read_after(conn, scope.tenant, scope.owner,
                                          Cursor(request.cursor_from.updated_at, request.cursor_from.record_id),
                                          request.record_count)
        await stage_plan(self.engine, scope, request.plan_id, request.run_id, [r.id for r in records], self.canned)
        return AggregationPlanResult(plan_id=request.plan_id, usage=TokenCounts())


def _activity_name(function: Any) -> str:
    return activity._Definition.must_from_callable(function).name


@asynccontextmanager
async def canned_worker(client: Client, engine: AsyncEngine, settings: Settings, planner: CannedAggregationPlanner):
    real = [fn for fn in activities_for(engine, settings) if _activity_name(fn) != "aggregation.plan"]
    async with Worker(client, task_queue=settings.task_queue, workflows=WORKFLOWS, activities=[*real, planner.plan]):
        yield


async def compile_with_plan(client: Client, engine: AsyncEngine, settings: Settings, planner: CannedAggregationPlanner,
                            owner: str, plan: Plan) -> dict[str, Any]:
    """Compile one new memory with `plan` as the aggregation plan; the run's ledger metrics."""
    await retain_another_memory(engine, owner)
    planner.canned = plan
    await compile_scope(client, settings, TENANT, owner)
    last = (await ledger(engine, TENANT, owner))[-1]
    assert last["status"] == "succeeded", last
    return last["metrics"]


def aggregation_plan(*, hubs: Sequence[NewPage] = (), rollups: Sequence[ParentSectionUpdate] = (),
                     promotions: Sequence[SectionPromotion] = ()) -> Plan:
    return Plan(pageUpdates=[], newPages=list(hubs), unresolvedMentions=[], promotions=[],
                parentSectionUpdates=list(rollups), sectionPromotions=list(promotions))


def hub(title: str, slug: str) -> NewPage:
    summary = f"City: {title}."
    return NewPage(type="topic", slug=slug, title=title, summary=summary,
                   sections=[NewSection(slug="summary", heading="Summary", body_md=summary)])


def rollup(parent: Any, section_slug: str, *children: Any, proposed: str = "", refs: Sequence[Any] = ()
           ) -> ParentSectionUpdate:
    """A rollup section on `parent` listing `children` (page rows), in order."""
    return ParentSectionUpdate(
        pageId=str(parent.id), sectionSlug=section_slug, heading=section_slug.replace("-", " ").title(),
        proposed_body_md=proposed or f"{len(children)} places in {parent.title}.",
        linked_page_slugs=[LinkedPageRef(type=child.type, slug=child.slug) for child in children],
        source_refs=[str(ref) for ref in refs], observed_tags=["food"],
    )


def promotion(parent: Any, section_slug: str, title: str, highlights: list[str]) -> SectionPromotion:
    summary = f"{title}, now on a page of their own."
    return SectionPromotion(
        pageId=str(parent.id), sectionSlug=section_slug, parentSummary=summary, topHighlights=highlights,
        newPage=NewPage(type="topic", slug="ignored-the-title-decides", title=title, summary=summary,
                        sections=[NewSection(slug="summary", heading="Summary", body_md=summary)]),
    )


# --------------------------------------------------------------------------- reading the wiki


async def rows(engine: AsyncEngine, query: str, **params: Any) -> list[Any]:
    async with engine.connect() as conn:
        return (await conn.execute(text(query), params)).all()


async def page(engine: AsyncEngine, owner: str, title: str, page_type: str | None = None) -> Any:
    found = await rows(engine, """
        SELECT id, type, slug, title, summary, parent_page_id, hubness_score FROM wiki_pages
        WHERE tenant_id = :t AND owner_id = :o AND title = :title AND (CAST(:type AS text) IS NULL OR type = :type)
    """, t=TENANT, o=owner, title=title, type=page_type)
    assert len(found) <= 1, found
    return found[0] if found else None


async def pages_titled(engine: AsyncEngine, owner: str, titles: list[str]) -> list[Any]:
    return [await page(engine, owner, title) for title in titles]


async def section(engine: AsyncEngine, page_id: Any, slug: str) -> Any:
    found = await rows(engine, "SELECT id, heading, body_md, aggregation FROM wiki_page_sections "
                               "WHERE page_id = :p AND section_slug = :s", p=page_id, s=slug)
    return found[0] if found else None


async def children_of(engine: AsyncEngine, linked_page_ids: list[str]) -> list[Any]:
    """The linked pages, in the order the aggregation lists them."""
    found = {str(row.id): row for row in await rows(
        engine, "SELECT id, type, slug, title, summary FROM wiki_pages WHERE id = ANY(CAST(:ids AS uuid[]))",
        ids=linked_page_ids)}
    return [found[page_id] for page_id in linked_page_ids]


async def hubness_by_sql(engine: AsyncEngine, page_id: Any) -> tuple[int, int]:
    """(stored hubness, hubness recomputed from the links, children and section aggregations now)."""
    row = (await rows(engine, """
        SELECT p.hubness_score,
               (SELECT count(*) FROM wiki_page_links l WHERE l.to_page_id = p.id AND l.kind = 'reference') AS inbound,
               (SELECT count(*) FROM wiki_pages c WHERE c.parent_page_id = p.id) AS children,
               (SELECT avg((s.aggregation->>'supporting_record_count')::int) FROM wiki_page_sections s
                WHERE s.page_id = p.id AND s.aggregation ? 'supporting_record_count') AS avg_supporting
        FROM wiki_pages p WHERE p.id = :id
    """, id=page_id))[0]
    average = float(row.avg_supporting) if row.avg_supporting is not None else None
    return row.hubness_score, hubness_score(row.inbound, row.children, average)


async def provenance_count(engine: AsyncEngine, section_id: Any) -> int:
    return (await rows(engine, "SELECT count(*) FROM wiki_section_sources WHERE section_id = :s "
                               "AND source_kind = 'memory_unit'", s=section_id))[0][0]


async def wiki_state(engine: AsyncEngine, owner: str) -> dict[str, list[tuple]]:
    """The wiki snapshot without the cursor, plus what it leaves out: section aggregation and hubness."""
    snapshot = await wiki_snapshot(engine, TENANT, owner)
    del snapshot["cursor"]
    snapshot["aggregation"] = [tuple(row) for row in await rows(engine, """
        SELECT s.id, s.aggregation::text FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.owner_id = :o ORDER BY s.id""", o=owner)]
    snapshot["hubness"] = [tuple(row) for row in await rows(
        engine, "SELECT id, hubness_score FROM wiki_pages WHERE owner_id = :o ORDER BY id", o=owner)]
    return snapshot


# --------------------------------------------------------------------------- the samples, scripted planner


async def test_the_700_memory_sample_grows_city_hubs_whose_rollups_list_their_children(compiled_sample,
                                                                                        compiled_sample_engine):
    """On the session's compile of the sample (tests/compiled_sample.py), with the scripted planner."""
    engine, tenant, owner = compiled_sample_engine, compiled_sample.tenant, compiled_sample.owner
    runs = await ledger(engine, tenant, owner)
    assert not [run["metrics"]["aggregation_error"] for run in runs if "aggregation_error" in run["metrics"]]
    assert ledger_total(runs, "parent_sections_updated") > 0
    # Every run that read memories; a run can read none when the run before it hit a cap on its batch
    # that happened to end exactly at the last memory.
    assert ledger_total(runs, "aggregation_planner_calls") == sum(run["metrics"]["records_read"] > 0 for run in runs)

    city_rollups = await rows(engine, """
        SELECT p.id AS hub_id, p.title AS hub, s.id AS section_id, s.body_md, s.aggregation
        FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.tenant_id = :t AND p.owner_id = :o AND p.type = 'topic' AND p.summary LIKE 'City:%'
          AND s.aggregation->>'promotion_status' <> 'promoted'
          AND jsonb_array_length(s.aggregation->'linked_page_ids') > 0
    """, t=tenant, o=owner)
    assert city_rollups, "the 700-memory sample must yield a city hub with a rollup section"
    for rollup_row in city_rollups:
        metadata = rollup_row.aggregation
        children = await children_of(engine, metadata["linked_page_ids"])
        assert rollup_row.body_md == render_rollup_list(children)
        assert all(rollup_row.hub in f"{child.title} {child.summary}" for child in children), "membership evidence"
        assert metadata["supporting_record_count"] == await provenance_count(engine, rollup_row.section_id) > 0
        assert isinstance(metadata["promotion_score"], float)
        assert metadata["promotion_status"] == ("candidate" if metadata["promotion_score"] >= 0.4 else "none")

    for hub_id in {rollup_row.hub_id for rollup_row in city_rollups}:
        stored, recomputed = await hubness_by_sql(engine, hub_id)
        assert stored == recomputed > 0


# A city's venues, generated: names drawn without replacement from two word lists (no two venues share
# a word, so none is taken for another's variant spelling), visits spread over more than a month.
async def test_with_the_pass_disabled_no_aggregation_activity_runs(client, engine):
    owner = new_owner()
    settings = helpers.test_settings(WIKI_AGGREGATION_PASS_ENABLED="false")
    await retain_sample(engine, TENANT, owner, 150)
    async with running_worker(client, engine, settings):
        await compile_scope(client, settings, TENANT, owner)
    runs = await ledger(engine, TENANT, owner)
    assert ledger_total(runs, "records_read") == 150
    assert ledger_total(runs, "aggregation_planner_calls") == ledger_total(runs, "parent_sections_updated") == 0
    assert not await rows(engine, "SELECT 1 FROM wiki_page_sections WHERE aggregation IS NOT NULL")
    scheduled = set()
    for workflow_id, run_id in await rows(engine, "SELECT workflow_id, run_id FROM wiki_compile_jobs "
                                                  "WHERE tenant_id = :t AND owner_id = :o", t=TENANT, o=owner):
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        scheduled |= activity_type_names(history.events)
    assert "compile.apply_batch" in scheduled
    assert not {name for name in scheduled if name.startswith("aggregation.")}


# --------------------------------------------------------------------------- apply rules, canned planner


@asynccontextmanager
async def austin_wiki(client: Client, engine: AsyncEngine, restaurants: int = 4):
    """A compiled Austin scope (leaf pages only) and a worker whose aggregation planner is canned."""
    owner = new_owner()
    settings = helpers.test_settings()
    planner = CannedAggregationPlanner(engine)
    await retain_austin_scope(engine, owner, restaurants)
    async with canned_worker(client, engine, settings, planner):
        await compile_scope(client, settings, TENANT, owner)
        yield owner, settings, planner


async def compile_leaves(client: Client, engine: AsyncEngine, owner: str) -> None:
    """Compile the scope with an aggregation planner that has nothing to say."""
    settings = helpers.test_settings()
    async with canned_worker(client, engine, settings, CannedAggregationPlanner(engine)):
        await compile_scope(client, settings, TENANT, owner)


async def topic_titles(engine: AsyncEngine, owner: str) -> set[str]:
    return {row.title for row in await rows(engine, "SELECT title FROM wiki_pages WHERE owner_id = :o "
                                                    "AND type = 'topic'", o=owner)}


async def test_a_toronto_restaurant_never_lands_in_austins_restaurants(client, engine):
    async with austin_wiki(client, engine) as (owner, settings, planner):
        austin = await page(engine, owner, "Austin")
        austin_places = await pages_titled(engine, owner, ["Franklin Barbecue", "Home Slice Pizza", "Emmer & Rye"])
        toronto_place = await page(engine, owner, "Momofuku Daishō")
        assert toronto_place.summary == "Restaurant in Toronto, ON."
        plan = aggregation_plan(rollups=[rollup(austin, "restaurants", austin_places[0], toronto_place,
                                                *austin_places[1:])])
        metrics = await compile_with_plan(client, engine, settings, planner, owner, plan)

    assert metrics["rollup_children_rejected"] == 1
    assert metrics["parent_sections_updated"] == 1
    restaurants = await section(engine, austin.id, "restaurants")
    assert restaurants.body_md == render_rollup_list(austin_places)
    assert restaurants.aggregation["linked_page_ids"] == [str(p.id) for p in austin_places]
    assert not await rows(engine, "SELECT 1 FROM wiki_page_links WHERE from_page_id = :a AND to_page_id = :m",
                          a=austin.id, m=toronto_place.id)


async def test_a_hub_never_duplicates_a_page_by_slug_or_exact_title(client, engine):
    async with austin_wiki(client, engine) as (owner, settings, planner):
        austin = await page(engine, owner, "Austin")
        leaf_topics = await topic_titles(engine, owner)
        plan = aggregation_plan(hubs=[
            hub("Austin Texas", slug=austin.slug),  # the planner names the existing hub's slug
            hub("AUSTIN", slug="austin-city"),  # its title slugifies to the existing hub's slug
            hub("Franklin Barbecue", slug="franklin-barbecue-hub"),  # an entity's exact title
            hub("Texas Hill Country", slug="texas-hill-country"),  # new: created
        ])
        metrics = await compile_with_plan(client, engine, settings, planner, owner, plan)

    assert await topic_titles(engine, owner) - leaf_topics == {"Texas Hill Country"}
    assert metrics["duplicate_candidates_cross_type"] == 1
    assert metrics["duplicate_candidates_count"] == 0


async def test_a_child_is_listed_only_in_the_first_section_of_a_parent_that_claims_it(client, engine):
    async with austin_wiki(client, engine) as (owner, settings, planner):
        austin = await page(engine, owner, "Austin")
        franklin, home_slice, emmer, uchi = await pages_titled(
            engine, owner, ["Franklin Barbecue", "Home Slice Pizza", "Emmer & Rye", "Uchi"])
        plan = aggregation_plan(rollups=[
            rollup(austin, "restaurants", franklin, home_slice, emmer),
            rollup(austin, "favorites", emmer, uchi, franklin),
        ])
        metrics = await compile_with_plan(client, engine, settings, planner, owner, plan)

    assert metrics["parent_sections_updated"] == 2
    assert (await section(engine, austin.id, "restaurants")).body_md == render_rollup_list([franklin, home_slice,
                                                                                            emmer])
    favorites = await section(engine, austin.id, "favorites")
    assert favorites.body_md == render_rollup_list([uchi])
    assert favorites.aggregation["linked_page_ids"] == [str(uchi.id)]


async def test_a_rollup_without_children_goes_through_the_section_writer(client, engine):
    async with austin_wiki(client, engine) as (owner, settings, planner):
        austin = await page(engine, owner, "Austin")
        getting_around = "Austin is easiest by bike along Lady Bird Lake."
        broken_spoke = SimpleNamespace(type="entity", slug="the-broken-spoke", title="The Broken Spoke")
        plan = aggregation_plan(rollups=[
            rollup(austin, "getting-around", proposed=getting_around),
            # Proposed children that all fail to resolve: no rollup, and no prose about them either.
            rollup(austin, "nightlife", broken_spoke, proposed="The Broken Spoke, a honky-tonk."),
        ])
        metrics = await compile_with_plan(client, engine, settings, planner, owner, plan)

    assert metrics["section_writer_calls"] == 1  # the run's one new memory names nothing: no leaf writes
    written = await section(engine, austin.id, "getting-around")
    assert written.body_md == getting_around  # the scripted writer keeps the proposal on an empty section
    assert written.aggregation["linked_page_ids"] == []
    assert await section(engine, austin.id, "nightlife") is None
    assert metrics["parent_sections_updated"] == 1


async def test_a_rollup_section_is_promoted_only_when_ready_and_only_once(client, engine):
    async with austin_wiki(client, engine, restaurants=10) as (owner, settings, planner):
        austin = await page(engine, owner, "Austin")
        places = await pages_titled(engine, owner, [name for name, _ in AUSTIN_RESTAURANTS])
        await compile_with_plan(client, engine, settings, planner, owner,
                                aggregation_plan(rollups=[rollup(austin, "restaurants", *places)]))
        grown = await section(engine, austin.id, "restaurants")
        # The rollup cites its ten members' memories (twenty visits): a candidate, not promote_ready yet.
        assert grown.aggregation["supporting_record_count"] == 20
        assert grown.aggregation["promotion_status"] == "candidate"
        top = [place.title for place in places[:3]]

        # Below the threshold: refused, nothing written.
        before = await wiki_state(engine, owner)
        await compile_with_plan(client, engine, settings, planner, owner, aggregation_plan(
            promotions=[promotion(austin, "restaurants", "Austin Restaurants", top)]))
        assert await page(engine, owner, "Austin Restaurants") is None
        assert await wiki_state(engine, owner) == before

        # Thirty supporting records over thirty days: promote_ready (10 children, 0.575 and more).
        ready = {**grown.aggregation, "supporting_record_count": 30,
                 "first_source_at": day_at(0).isoformat(), "last_source_at": day_at(30).isoformat()}
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE wiki_page_sections SET aggregation = CAST(:a AS jsonb) WHERE id = :id"),
                               {"a": json.dumps(ready), "id": grown.id})
        metrics = await compile_with_plan(client, engine, settings, planner, owner, aggregation_plan(
            promotions=[promotion(austin, "restaurants", "Austin Restaurants", top)]))
        assert metrics["sections_promoted"] == 1
        child = await page(engine, owner, "Austin Restaurants", "topic")
        assert child is not None and child.slug == "austin-restaurants" and child.parent_page_id == austin.id
        links = {tuple(row) for row in await rows(engine, """
            SELECT from_page_id, to_page_id, kind FROM wiki_page_links WHERE kind IN ('parent_of', 'child_of')""")}
        assert links == {(austin.id, child.id, "parent_of"), (child.id, austin.id, "child_of")}
        promoted = await section(engine, austin.id, "restaurants")
        assert promoted.body_md == render_promoted_parent_section(  # stored bodies are stripped
            "Austin Restaurants, now on a page of their own.", top, "Austin Restaurants", "topic",
            "austin-restaurants").strip()
        assert promoted.body_md.rstrip().endswith("See: [Austin Restaurants](/wiki/topic/austin-restaurants)")
        assert promoted.aggregation["promotion_status"] == "promoted"
        assert promoted.aggregation["promoted_page_id"] == str(child.id)
        stored, recomputed = await hubness_by_sql(engine, austin.id)
        assert stored == recomputed >= 2  # a promoted child counts twice

        # Promoted is sticky: the same section is never promoted again.
        metrics = await compile_with_plan(client, engine, settings, planner, owner, aggregation_plan(
            promotions=[promotion(austin, "restaurants", "Austin Eateries", top)]))
        assert metrics["sections_promoted"] == 0
        assert await page(engine, owner, "Austin Eateries") is None
        again = await section(engine, austin.id, "restaurants")
        assert (again.body_md, again.aggregation) == (promoted.body_md, promoted.aggregation)


async def test_an_aggregation_failure_is_recorded_and_the_leaf_pages_stay(client, engine):
    owner = new_owner()
    settings = helpers.test_settings()
    planner = CannedAggregationPlanner(engine)
    planner.error = ApplicationError("the aggregation planner is down", type="PlannerDown", non_retryable=True)
    retained = await retain_austin_scope(engine, owner)
    async with canned_worker(client, engine, settings, planner):
        await compile_scope(client, settings, TENANT, owner)
    (run,) = await ledger(engine, TENANT, owner)
    assert run["status"] == "succeeded" and run["error"] is None
    assert run["metrics"]["aggregation_error"].endswith("the aggregation planner is down")
    assert run["metrics"]["records_read"] == retained
    titles = {row.title for row in await rows(engine, "SELECT title FROM wiki_pages WHERE owner_id = :o", o=owner)}
    assert {"Austin", "Franklin Barbecue", "Momofuku Daishō"} <= titles
    assert ledger_total([run], "pages_created") == len(titles)


# --------------------------------------------------------------------------- replay idempotency


async def test_applying_a_plan_twice_changes_nothing_and_support_is_never_double_counted(client, engine):
    owner = new_owner()
    scope = Scope(tenant=TENANT, owner=owner)
    await retain_austin_scope(engine, owner)
    await compile_leaves(client, engine, owner)
    austin = await page(engine, owner, "Austin")
    places = await pages_titled(engine, owner, ["Franklin Barbecue", "Home Slice Pizza", "Emmer & Rye", "Uchi"])
    memory_ids = [row.id for row in await rows(engine, "SELECT id FROM memory_units WHERE owner_id = :o", o=owner)]
    cited = [row.id for row in await rows(  # the visits of the first three restaurants
        engine, "SELECT id FROM memory_units WHERE owner_id = :o AND metadata->'place'->>'name' = ANY(:names)",
        o=owner, names=[place.title for place in places[:3]])]
    assert len(cited) == 6
    aggregation = Aggregation(engine, ScriptedPlanner())
    environment = ActivityEnvironment()

    async def run_pass(plan: Plan) -> tuple[Any, Any]:
        plan_id = uuid.uuid4()
        await stage_plan(engine, scope, plan_id, "direct", memory_ids, plan)
        await environment.run(aggregation.resolve, ResolvePlanInput(scope=scope, plan_id=plan_id))
        request = AggregationApplyInput(scope=scope, plan_id=plan_id)
        return await environment.run(aggregation.apply, request), request

    first, request = await run_pass(aggregation_plan(rollups=[rollup(austin, "restaurants", *places[:3],
                                                                     refs=cited)]))
    assert first.parent_sections_updated == 1 and not first.already_applied
    applied = await wiki_state(engine, owner)
    replayed = await environment.run(aggregation.apply, request)
    assert replayed.already_applied
    assert replayed.model_copy(update={"already_applied": False}) == first
    assert await wiki_state(engine, owner) == applied
    assert (await section(engine, austin.id, "restaurants")).aggregation["supporting_record_count"] == len(cited)

    # A second pass with the same rollup: nothing meaningful to change, so nothing is counted again.
    same = await run_pass(aggregation_plan(rollups=[rollup(austin, "restaurants", *places[:3], refs=cited)]))
    assert same[0].parent_sections_updated == 0
    assert await wiki_state(engine, owner) == applied
    # A pass that re-renders the rollup (one more child): counted once. Whatever the plan cites, a
    # rollup cites its members' memories: now those of the fourth child too.
    grown, _ = await run_pass(aggregation_plan(rollups=[rollup(austin, "restaurants", *places, refs=cited)]))
    assert grown.parent_sections_updated == 1
    restaurants = await section(engine, austin.id, "restaurants")
    assert restaurants.body_md == render_rollup_list(places)
    members = [row.id for row in await rows(
        engine, "SELECT id FROM memory_units WHERE owner_id = :o AND metadata->'place'->>'name' = ANY(:names)",
        o=owner, names=[place.title for place in places])]
    assert len(members) == 8
    assert restaurants.aggregation["supporting_record_count"] == len(members)
    cited_now = await rows(engine, "SELECT source_ref FROM wiki_section_sources WHERE section_id = :s", s=restaurants.id)
    assert sorted(row.source_ref for row in cited_now) == sorted(str(m) for m in members)
