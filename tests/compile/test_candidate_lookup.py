"""The candidate reads find what the resolution ladder would merge, in a scope of many other pages."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import text

from domain.context import MemoryRecord
from domain.ids import page_id
from store.page_matching import candidates_by_keys
from store.scope_reads import candidate_pages, names_in_batch

TENANT, OWNER = "t-lookup", "alice"


async def add_page(conn, title: str, aliases: list[str], page_type: str = "entity", tenant: str = TENANT) -> str:
    slug = title.lower().replace(" ", "-").replace("(", "").replace(")", "")
    pid = str(page_id(tenant, OWNER, page_type, slug))
    await conn.execute(text("""
        INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title, last_compiled_at)
        VALUES (:id, :t, :o, :type, :slug, :title, now())
    """), {"id": pid, "t": tenant, "o": OWNER, "type": page_type, "slug": slug, "title": title})
    for alias in aliases:
        await conn.execute(text("INSERT INTO wiki_page_aliases (id, page_id, alias) VALUES (:id, :page, :alias)"),
                           {"id": str(uuid.uuid4()), "page": pid, "alias": alias})
    return pid


async def crowded_scope(conn) -> dict[str, str]:
    for number in range(40):
        await add_page(conn, f"Filler Place {number}", [f"filler place {number}"])
    return {
        "uchi": await add_page(conn, "Uchi (Austin)", ["uchi austin"]),
        "driskill": await add_page(conn, "The Driskill", ["the driskill"]),
        "marguerite": await add_page(conn, "Marguerite", ["marguerite"]),
        "elsewhere": await add_page(conn, "Uchi", ["uchi"], tenant="t-other"),
    }


def memory(content: str, *names: str) -> MemoryRecord:
    now = datetime.now(UTC)
    return MemoryRecord(id=uuid.uuid4(), content=content, created_at=now, updated_at=now,
                        metadata={"entities": [{"name": name} for name in names]})


async def test_the_planner_is_shown_the_pages_a_variant_names_however_many_pages_there_are(engine):
    async with engine.begin() as conn:
        pages = await crowded_scope(conn)
        names = names_in_batch([memory("Dinner at Uchi, then the Driskill; Margeurite came.",
                                       "Uchi", "Driskill", "Margeurite")])
        shown = await candidate_pages(conn, TENANT, OWNER, names, limit=5)
    assert {str(page.id) for page in shown} >= {pages["uchi"], pages["driskill"], pages["marguerite"]}
    assert pages["elsewhere"] not in {str(page.id) for page in shown}


async def test_the_resolver_reads_candidates_by_core_prefix_suffix_and_trigram(engine):
    async with engine.begin() as conn:
        pages = await crowded_scope(conn)
        found = await candidates_by_keys(conn, TENANT, OWNER, [("Uchi",), ("Driskill",), ("Margeurite",),
                                                               ("Uchiko",)])
    assert pages["uchi"] in [c.id for c in found[("Uchi",)]]
    assert pages["driskill"] in [c.id for c in found[("Driskill",)]]
    assert pages["marguerite"] in [c.id for c in found[("Margeurite",)]]
    # A candidate is only something to compare with: "Uchiko" finds Uchi, and the ladder keeps them apart.
    assert all(c.id != pages["elsewhere"] for found_pages in found.values() for c in found_pages)


async def test_the_resolver_merges_proposals_by_the_ladder_and_keeps_traps_apart(engine):
    from datetime import UTC, datetime

    from domain.plan import Plan
    from store.page_matching import Judgement
    from store.plan_resolution import resolve_plan

    async with engine.begin() as conn:
        pages = await crowded_scope(conn)
        hotel = await add_page(conn, "Hotel San José", ["hotel san jose"])
        pool = await add_page(conn, "Barton Springs Pool", ["barton springs pool"])

        def proposal(title: str, summary: str = "A place.") -> dict:
            return {"type": "entity", "slug": title.lower().replace(" ", "-"), "title": title, "summary": summary,
                    "sections": [{"slug": "overview", "body_md": summary}]}

        plan = Plan.model_validate({"pageUpdates": [], "unresolvedMentions": [], "promotions": [], "newPages": [
            proposal("The Hotel San José"), proposal("Barton Spring Pool"), proposal("Margeurite", "A person."),
            proposal("Uchiko", "Restaurant in Austin."), proposal("Uchi (Houston)", "Restaurant in Houston."),
            proposal("Uchi", "Restaurant in Austin.")]})
        judgement = Judgement()
        resolved, result = await resolve_plan(conn, TENANT, OWNER, uuid.uuid4(), plan, [], datetime.now(UTC),
                                              judgement)
    landed = {page.title: (page.page_id, page.mode) for page in resolved.pages}
    assert landed["Hotel San José"] == (hotel, "merge")  # leading article
    assert landed["Barton Springs Pool"] == (pool, "merge")  # one letter off
    assert landed["Marguerite"] == (pages["marguerite"], "merge")  # transposition
    assert landed["Uchiko"][1] == "create"  # a short name is never a typo of another
    assert landed["Uchi (Houston)"][1] == "create"  # two qualifiers: two places
    assert landed["Uchi"][1] == "create"  # "Uchi (Austin)" is ambiguous, and nobody judged it: no merge
    # Asked of the judge: "Uchi" against the stored "Uchi (Austin)", then against "Uchi (Houston)" of this plan.
    assert [asked.candidate_page_id for asked in judgement.asked] == [pages["uchi"], landed["Uchi (Houston)"][0]]
    # "Springs" / "Spring" is one letter off a six-letter word: the trigram rung (0.857), not the typo rung.
    assert (result.ladder_merges, result.fuzzy_dedupe_merges) == (2, 1)
    assert (result.unjudged_merge_pairs, result.new_pages_planned) == (2, 3)


async def test_the_planner_is_shown_every_open_mention_it_names_and_only_a_few_others(engine):
    from store.scope_reads import MAX_MENTION_PADDING, PADDING_SIGHTINGS_SHOWN, open_mentions
    from tests.operators.helpers import mention

    tenant = "t-mentions"
    sightings = [{"quote": f"Sighting {n}.", "source_ref": str(uuid.uuid4())} for n in range(3)]  # newest first
    for number in range(MAX_MENTION_PADDING + 10):
        await mention(engine, tenant, OWNER, f"Held Place {number}", count=2 + number % 5, contexts=sightings)
    named = await mention(engine, tenant, OWNER, "Rare Cafe", count=1, contexts=sightings)
    required = await mention(engine, tenant, OWNER, "Lint Candidate", count=1, contexts=sightings)
    async with engine.connect() as conn:
        shown = await open_mentions(conn, tenant, OWNER, ["rare cafe"], 100, [required])
    assert [m.id for m in shown[:2]] == [required, named]  # what the batch names or lint asks about first
    assert len(shown) == 2 + MAX_MENTION_PADDING  # then the most seen, up to the padding
    counts = sorted((2 + n % 5 for n in range(MAX_MENTION_PADDING + 10)), reverse=True)
    assert [m.mention_count for m in shown[2:]] == counts[:MAX_MENTION_PADDING]
    # What a plan may promote keeps every sighting it cites; a padding name shows its newest only.
    assert [m.sample_contexts for m in shown[:2]] == [sightings, sightings]
    assert all(m.sample_contexts == sightings[:PADDING_SIGHTINGS_SHOWN] for m in shown[2:])


async def test_pages_matched_only_by_their_text_are_shown_within_a_budget_whatever_the_scope_holds(engine):
    from store.scope_reads import MATCHES_PER_NAME, MAX_RECENT_PADDING, WEAK_MATCH_BUDGET

    tenant, people = "t-weak", ["Lena Park", "Mateo Ruiz", "Priya Shah", "Tomas Berg"]
    async with engine.begin() as conn:
        named = await add_page(conn, "Lena Park", ["lena park"], tenant=tenant)
        texts = []
        for number in range(len(people) * MATCHES_PER_NAME + 6):  # more than the names may bring each
            pid = await add_page(conn, f"Cafe Number {number}", [f"cafe number {number}"], tenant=tenant)
            await conn.execute(text("UPDATE wiki_pages SET summary = :s, last_compiled_at = now() - interval '1 day' "
                                    "WHERE id = :id"), {"s": f"Coffee with {people[number % len(people)]}.", "id": pid})
            texts.append(pid)
        for number in range(MAX_RECENT_PADDING):  # the recent padding: pages compiled since
            await add_page(conn, f"Recent Place {number}", [f"recent place {number}"], tenant=tenant)
        names = names_in_batch([memory(" and ".join(people) + ".", *people)])
        shown = [str(page.id) for page in await candidate_pages(conn, tenant, OWNER, names, limit=200)]
    assert shown[0] == named  # the page the batch names is always there, first
    assert len([pid for pid in shown if pid in texts]) == WEAK_MATCH_BUDGET < len(people) * MATCHES_PER_NAME
