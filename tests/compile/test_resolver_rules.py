"""The resolver's rules hold whatever the model proposes: promotions need repeated, recent evidence, and
a proposed page merges into another only when the names are close enough and the page types agree.

Plans come from the fake Messages API of test_model_path (the real `anthropic` SDK over a fake
transport), so a plan can propose exactly what a model might: an early or a stale promotion, a near
miss of an existing name, the same name under another page type. Temporal, Postgres and the
activities are real; each test checks the wiki the compile leaves behind.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from tests.compile.helpers import compile_scope, ledger
from tests.compile.test_model_path import FakeMessagesApi, Prompt, empty_plan, model_worker, plan_reply
from tests.operators import helpers as db

OWNER = "alice"


def page(page_type: str, title: str, refs: list[str]) -> dict[str, Any]:
    return {"type": page_type, "slug": title.lower().replace(" ", "-"), "title": title, "source_refs": refs,
            "sections": [{"slug": "overview", "heading": "Overview", "body_md": f"Notes on {title}.",
                          "source_refs": refs}]}


def promotion(mention_id: Any, page_type: str, title: str, refs: list[str]) -> dict[str, Any]:
    return {"mentionId": str(mention_id), "reason": "seen again", "type": page_type, "title": title,
            "sections": [{"slug": "overview", "heading": "Overview", "body_md": f"Notes on {title}.",
                          "source_refs": refs}]}


async def pages(engine, tenant: str) -> set[tuple[str, str]]:
    rows = await db.rows(engine, "SELECT type, title FROM wiki_pages WHERE tenant_id = :t AND status = 'active'",
                         t=tenant)
    return {(row.type, row.title) for row in rows}


async def aliases_of(engine, tenant: str, title: str) -> set[str]:
    rows = await db.rows(engine, "SELECT a.alias FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id "
                                 "WHERE p.tenant_id = :t AND p.title = :title", t=tenant, title=title)
    return {row.alias for row in rows}


async def mention_status(engine, tenant: str) -> dict[str, str]:
    rows = await db.rows(engine, "SELECT alias, status FROM wiki_unresolved_mentions WHERE tenant_id = :t", t=tenant)
    return {row.alias: row.status for row in rows}


async def test_a_promotion_needs_three_sightings_the_last_within_thirty_days(client, engine):
    tenant = "t-promote"
    # Three memories compiled earlier: the sightings the open mentions hold.
    earlier = await db.memories(engine, tenant, OWNER, ["Sourdough at the bakery.", "Buns again.", "Coffee there."])
    await db.move_cursor_past_every_memory(engine, tenant, OWNER)
    [today] = await db.memories(engine, tenant, OWNER, ["Walked past three cafés on Congress Avenue."])

    def held(count: int) -> list[dict[str, str]]:
        return [{"quote": "seen", "source_ref": ref, "seen_at": "2026-01-01T00:00:00+00:00"} for ref in earlier[:count]]

    mentions = {
        # Three sightings, the last 29 days ago: enough.
        "Sam's Bakery": await db.mention(engine, tenant, OWNER, "Sam's Bakery", 3, days_ago=29, contexts=held(3)),
        # Two sightings: too early, however recent.
        "Twice Seen Diner": await db.mention(engine, tenant, OWNER, "Twice Seen Diner", 2, contexts=held(2)),
        # Nine sightings, the last 31 days ago: stale.
        "Long Ago Cafe": await db.mention(engine, tenant, OWNER, "Long Ago Cafe", 9, days_ago=31, contexts=held(3)),
        # Two sightings and a third in this batch (cited by the promotion): enough.
        "Almost There": await db.mention(engine, tenant, OWNER, "Almost There", 2, contexts=held(2)),
    }

    def promote_everything(prompt: Prompt) -> dict[str, Any]:
        cites = {"Almost There": [today]}
        return empty_plan(promotions=[promotion(mention_id, "entity", name, cites.get(name, earlier[:2]))
                                      for name, mention_id in mentions.items()])

    api = FakeMessagesApi(default_planner=plan_reply(promote_everything))
    async with model_worker(client, engine, api) as settings:
        await compile_scope(client, settings, tenant, OWNER)

    assert len(api.of_kind("planner")) == 1, "the plan proposing the promotions was not asked for"
    assert await mention_status(engine, tenant) == {
        "Sam's Bakery": "promoted", "Almost There": "promoted", "Twice Seen Diner": "open", "Long Ago Cafe": "open"}
    assert await pages(engine, tenant) == {("entity", "Sam's Bakery"), ("entity", "Almost There")}
    [run] = await ledger(engine, tenant, OWNER)
    assert (run["status"], run["metrics"]["unresolved_promoted"], run["metrics"]["promotions_refused"]) == (
        "succeeded", 2, 2)


async def test_near_miss_names_stay_apart_and_variants_merge_only_within_a_page_type(client, engine):
    tenant = "t-fuzzy"
    first, second = await db.memories(engine, tenant, OWNER, ["A week in Austin.", "Back in Austin."])
    variant = await db.mention(engine, tenant, OWNER, "Elisabeth Ney Museum", 3)
    other_type = await db.mention(engine, tenant, OWNER, "Elisabet Ney Museums", 3)

    def plans(prompt: Prompt) -> dict[str, Any]:
        refs = prompt.memory_ids
        if refs == [first]:
            return empty_plan(newPages=[page("entity", title, refs) for title in (
                "The Driskill", "Hotel San Jose", "Franklin Barbecue", "Barton Springs Pool", "Elisabet Ney Museum")])
        return empty_plan(
            newPages=[
                # Near misses of existing names (trigram similarity 0.77 and 0.79): other places.
                page("entity", "The Driskill Bar", refs),
                page("entity", "Hotel San Jose Bar", refs),
                # A variant of an existing name (0.86): the same place.
                page("entity", "Franklin Barbecue Co", refs),
                # A variant (0.86) of an existing entity, but proposed as a topic: a page of its own.
                page("topic", "Barton Springs Pools", refs),
                # Within one plan: a near miss (0.68) stays apart, a variant (0.89) merges, and a
                # variant (0.94) of another page type stays apart.
                page("entity", "Lady Bird Lake", refs),
                page("entity", "Lady Bird Lake Trail", refs),
                page("entity", "Zilker Botanical Garden", refs),
                page("entity", "Zilker Botanical Gardens", refs),
                page("entity", "Shinjuku Gyoen National Garden", refs),
                page("topic", "Shinjuku Gyoen National Gardens", refs),
            ],
            # Promoted names go through the same lookup: a variant (0.86) of the museum merges into
            # it, the same variant as a topic does not.
            promotions=[promotion(variant, "entity", "Elisabeth Ney Museum", refs),
                        promotion(other_type, "topic", "Elisabet Ney Museums", refs)],
        )

    api = FakeMessagesApi(default_planner=plan_reply(plans))
    async with model_worker(client, engine, api, WIKI_RECORD_PAGE_SIZE=1) as settings:
        await compile_scope(client, settings, tenant, OWNER)

    assert [call.memory_ids for call in api.of_kind("planner")] == [[first], [second]]
    expected = {
        ("entity", "The Driskill"), ("entity", "The Driskill Bar"),
        ("entity", "Hotel San Jose"), ("entity", "Hotel San Jose Bar"),
        ("entity", "Franklin Barbecue"),
        ("entity", "Barton Springs Pool"), ("topic", "Barton Springs Pools"),
        ("entity", "Lady Bird Lake"), ("entity", "Lady Bird Lake Trail"),
        ("entity", "Zilker Botanical Garden"),
        ("entity", "Shinjuku Gyoen National Garden"), ("topic", "Shinjuku Gyoen National Gardens"),
        ("entity", "Elisabet Ney Museum"), ("topic", "Elisabet Ney Museums"),
    }
    found = await pages(engine, tenant)
    assert found == expected, f"merged away: {sorted(expected - found)}; unexpected: {sorted(found - expected)}"
    assert "franklin barbecue co" in await aliases_of(engine, tenant, "Franklin Barbecue")
    assert "zilker botanical gardens" in await aliases_of(engine, tenant, "Zilker Botanical Garden")
    assert "elisabeth ney museum" in await aliases_of(engine, tenant, "Elisabet Ney Museum")
    assert await mention_status(engine, tenant) == {
        "Elisabeth Ney Museum": "promoted", "Elisabet Ney Museums": "promoted"}
    async with engine.connect() as conn:
        merges = (await conn.execute(text(
            "SELECT sum((metrics->>'fuzzy_dedupe_merges')::int) FROM wiki_compile_jobs WHERE tenant_id = :t"),
            {"t": tenant})).scalar_one()
    assert merges == 3
