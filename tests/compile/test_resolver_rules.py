"""The resolver's rules hold whatever the model proposes: promotions need repeated, recent evidence, and
a proposed page merges into another only when the names are close enough and the page types agree.

Plans come through the real `anthropic` SDK over loopback HTTP from the Claude simulator (claude_sim),
as in test_model_path, each test scripting the simulator's answer to the prompt the compile sent (read
back, and answered in its handles, as a model would): so a plan can propose exactly what a model
might: an early or a stale promotion, a near miss of an existing name, the same name under another
page type. Temporal, Postgres and the activities are real; each test checks the wiki the compile
leaves behind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from tests.compile.helpers import compile_scope, ledger
from tests.compile.test_model_path import model_worker
from tests.operators import helpers as db
from tests.sim_helpers import shown

OWNER = "alice"
TODAY = "Walked past three cafés on Congress Avenue."
FIRST, SECOND = "A week in Austin.", "Back in Austin."


def empty_plan(**arrays: list[Any]) -> dict[str, Any]:
    return {"pageUpdates": [], "newPages": [], "unresolvedMentions": [], "promotions": [], "pageLinks": [],
            **arrays}


@dataclass
class Shown:
    """What a leaf prompt shows, by handle (the prompt names nothing by id): the batch's memories
    (handle, text) in order, and each open mention's handle and its sightings' memory handles by alias."""

    memories: list[tuple[str, str]]
    mentions: dict[str, str]
    sightings: dict[str, list[str]]

    @classmethod
    def read(cls, user: str) -> Shown:
        request = shown(user)
        return cls(memories=[(m.handle, m.text) for m in request.memories],
                   mentions={m.alias: m.handle for m in request.mentions},
                   sightings={m.alias: [s.handle for s in m.sightings if s.handle] for m in request.mentions})

    @property
    def memory_handles(self) -> list[str]:
        return [handle for handle, _ in self.memories]


def page(page_type: str, title: str, refs: list[str], aliases: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": page_type, "slug": title.lower().replace(" ", "-"), "title": title, "source_refs": refs,
            "aliases": list(aliases),
            "sections": [{"slug": "overview", "heading": "Overview", "body_md": f"Notes on {title}.",
                          "source_refs": refs}]}


def promotion(mention: str, page_type: str, title: str, refs: list[str], body: str | None = None) -> dict[str, Any]:
    return {"mentionId": mention, "reason": "seen again", "type": page_type, "title": title,
            "sections": [{"slug": "overview", "heading": "Overview", "body_md": body or f"Notes on {title}.",
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


async def test_a_promotion_needs_three_sightings_the_last_within_thirty_days(client, engine, sim):
    tenant = "t-promote"
    # Three memories compiled earlier: the sightings the open mentions hold.
    earlier = await db.memories(engine, tenant, OWNER, ["Sourdough at the bakery.", "Buns again.", "Coffee there."])
    await db.move_cursor_past_every_memory(engine, tenant, OWNER)
    await db.memories(engine, tenant, OWNER, [TODAY])

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

    prompts: list[Shown] = []

    def promote_everything(user: str) -> dict[str, Any]:
        shown = Shown.read(user)
        prompts.append(shown)
        # Each promotion cites two of its sightings, except Almost There: this batch's memory, its third.
        # Each section quotes the memory it cites first, so the claim judge has a line it can read.
        cites = {"Almost There": shown.memory_handles}
        said = {"Almost There": TODAY}
        return empty_plan(promotions=[promotion(handle, "entity", name, cites.get(name, shown.sightings[name][:2]),
                                                said.get(name, "Sourdough at the bakery."))
                                      for name, handle in shown.mentions.items()])

    sim.answer_next("planner", promote_everything)
    async with model_worker(client, engine, "anthropic") as settings:
        await compile_scope(client, settings, tenant, OWNER)

    assert [call.memory_texts for call in sim.of_kind("planner")] == [[TODAY]], (
        "the plan proposing the promotions was not asked for, or not only once")
    assert [set(shown.mentions) for shown in prompts] == [set(mentions)], "the prompt did not show every open mention"
    assert await mention_status(engine, tenant) == {
        "Sam's Bakery": "promoted", "Almost There": "promoted", "Twice Seen Diner": "open", "Long Ago Cafe": "open"}
    assert await pages(engine, tenant) == {("entity", "Sam's Bakery"), ("entity", "Almost There")}
    [run] = await ledger(engine, tenant, OWNER)
    assert (run["status"], run["metrics"]["unresolved_promoted"], run["metrics"]["promotions_refused"]) == (
        "succeeded", 2, 2)


async def test_near_miss_names_stay_apart_and_variants_merge_only_within_a_page_type(client, engine, sim):
    tenant = "t-fuzzy"
    await db.memories(engine, tenant, OWNER, [FIRST, SECOND])
    await db.mention(engine, tenant, OWNER, "Elisabeth Ney Museum", 3)
    await db.mention(engine, tenant, OWNER, "Elisabet Ney Museums", 3)

    def plans(user: str) -> dict[str, Any]:
        shown = Shown.read(user)
        refs = shown.memory_handles
        if [text for _, text in shown.memories] == [FIRST]:
            return empty_plan(newPages=[page("entity", title, refs) for title in (
                "The Driskill", "Hotel San Jose", "Franklin Barbecue", "Barton Springs Pool", "Elisabet Ney Museum",
                "Austin Public Library Central")])
        return empty_plan(
            newPages=[
                # Near misses of existing names (trigram similarity 0.77 and 0.79): other places.
                page("entity", "The Driskill Bar", refs),
                page("entity", "Hotel San Jose Bar", refs),
                # Another branch of the library: similar names (trigram similarity 0.71), another place.
                page("entity", "Austin Public Library Cedar", refs),
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
                # Within one plan, even the exact same name (an alias here) under another type stays apart.
                page("entity", "Mueller Lake Park", refs, aliases=("Mueller Park",)),
                page("topic", "Mueller Park", refs),
            ],
            # Promoted names go through the same lookup: a variant (0.86) of the museum merges into
            # it, the same variant as a topic does not.
            promotions=[promotion(shown.mentions["Elisabeth Ney Museum"], "entity", "Elisabeth Ney Museum", refs),
                        promotion(shown.mentions["Elisabet Ney Museums"], "topic", "Elisabet Ney Museums", refs)],
        )

    judged: list[str] = []

    def judge(user: str) -> dict[str, Any]:
        # "Franklin Barbecue Co" is "Franklin Barbecue" on the ladder (the name key drops a legal form),
        # so it never reaches the judge; were it asked, it would say they are one. Every other pair it
        # is asked about stays apart.
        pairs = re.split(r"^### Pair (p\d+)$", user, flags=re.MULTILINE)[1:]
        decisions = []
        for pair, body in zip(pairs[::2], pairs[1::2], strict=True):
            judged.append(body)
            decisions.append({"pair": pair, "same": "Franklin Barbecue Co" in body, "reason": "scripted"})
        return {"decisions": decisions}

    # One memory a batch: the first plan creates the pages, the second proposes against them.
    sim.answer_next("planner", plans)
    sim.answer_next("planner", plans)
    sim.answer_next("judge", judge)
    async with model_worker(client, engine, "anthropic", WIKI_RECORD_PAGE_SIZE=1) as settings:
        await compile_scope(client, settings, tenant, OWNER)

    assert [call.memory_texts for call in sim.of_kind("planner")] == [[FIRST], [SECOND]]
    assert not sim.scripts["planner"], "the scripted plans were not the ones the compile used"
    expected = {
        ("entity", "The Driskill"), ("entity", "The Driskill Bar"),
        ("entity", "Hotel San Jose"), ("entity", "Hotel San Jose Bar"),
        ("entity", "Austin Public Library Central"), ("entity", "Austin Public Library Cedar"),
        ("entity", "Mueller Lake Park"), ("topic", "Mueller Park"),
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
            "SELECT sum((metrics->>'fuzzy_dedupe_merges')::int) AS similar, sum((metrics->>'ladder_merges')::int)"
            " AS ladder, sum((metrics->>'judged_merges')::int) AS judged FROM wiki_compile_jobs WHERE tenant_id = :t"),
            {"t": tenant})).one()
    # All three merge on the ladder's own rungs: "Co" is a legal form the name key drops.
    assert (merges.similar + merges.ladder, merges.judged) == (3, 0), merges
    assert judged and not [body for body in judged if "Franklin Barbecue Co" in body], \
        "a legal form is not a question for the judge"
