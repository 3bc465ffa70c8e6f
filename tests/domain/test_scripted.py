"""The scripted planner and section writer: each branch of the plan, and the contract's invariants."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.aliases import normalize_alias
from domain.context import CandidatePage, CandidateSection, MemoryRecord, OpenMention, PlannerContext
from domain.plan import Plan
from planners.scripted.leaf_plan import scripted_plan

UUID_IN_TEXT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
BASE_TIME = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

FRANKLIN_PLACE = {
    "name": "Franklin Barbecue",
    "city": "Austin",
    "address": "900 E 11th St, Austin, TX 78702, USA",
    "types": ["restaurant", "food"],
}


def memory(number: int, content: str, day: int = 0, **metadata: Any) -> MemoryRecord:
    moment = BASE_TIME + timedelta(days=day)
    return MemoryRecord(
        id=uuid.UUID(int=number),
        content=content,
        metadata=metadata,
        created_at=moment,
        updated_at=moment,
    )


def entity(name: str, kind: str = "", type_: str = "entity", aliases: list[str] | None = None) -> dict:
    return {"name": name, "type": type_, "kind": kind, "aliases": aliases or []}


def context(
    memories: list[MemoryRecord],
    pages: list[CandidatePage] | None = None,
    mentions: list[OpenMention] | None = None,
    promotion_candidate_ids: list[uuid.UUID] | None = None,
) -> PlannerContext:
    return PlannerContext(
        tenant_id="tenant-a",
        owner_id="owner-a",
        memories=memories,
        candidate_pages=pages or [],
        open_mentions=mentions or [],
        promotion_candidate_ids=promotion_candidate_ids or [],
    )


def open_mention(alias: str, count: int, last_seen: datetime, **extra: Any) -> OpenMention:
    return OpenMention(
        id=uuid.uuid5(uuid.NAMESPACE_URL, alias),
        alias=alias,
        alias_normalized=normalize_alias(alias),
        mention_count=count,
        last_seen_at=last_seen,
        **extra,
    )


def by_title(plan: Plan) -> dict[str, Any]:
    return {page.title: page for page in plan.newPages}


def links_of(plan: Plan) -> set[tuple[str, str, str, str]]:
    return {(link.fromType, link.fromSlug, link.toType, link.toSlug) for link in plan.pageLinks}


def prose_of(plan: Plan) -> list[str]:
    """Every piece of text the plan would put in front of a reader."""
    texts: list[str] = []
    for page in plan.newPages:
        texts += [page.title, page.summary or "", *page.aliases, *(s.body_md for s in page.sections)]
    for promotion in plan.promotions:
        texts += [promotion.title, promotion.reason, *(s.body_md for s in promotion.sections)]
    for update in plan.pageUpdates:
        texts += [*update.aliases, *(s.proposed_body_md for s in update.sections)]
    for mention in plan.unresolvedMentions:
        texts += [mention.alias, mention.context]
    texts += [link.context or "" for link in plan.pageLinks]
    return texts


def all_sections(plan: Plan) -> list[tuple[str, list[str]]]:
    """(slug, source_refs) of every section of every kind in the plan."""
    sections = [(s.slug, s.source_refs) for page in plan.newPages for s in page.sections]
    sections += [(s.slug, s.source_refs) for promo in plan.promotions for s in promo.sections]
    sections += [(s.slug, s.source_refs) for update in plan.pageUpdates for s in update.sections]
    return sections


def austin_batch() -> list[MemoryRecord]:
    """Two visits to one restaurant (spelled two ways) with Sam, in a trip journal; one lone chef."""
    journal = {"id": "j-austin", "title": "Austin Trip 2026"}
    return [
        memory(
            1,
            "Lunch at Franklin Barbecue with Sam. The brisket was perfect.",
            day=0,
            entities=[
                entity("Franklin Barbecue", "restaurant", aliases=["franklin bbq"]),
                entity("Sam", "person"),
            ],
            place=FRANKLIN_PLACE,
            journal=journal,
        ),
        memory(
            2,
            "Back at Franklin BBQ with Sam; the line was long.",
            day=1,
            entities=[entity("Franklin BBQ", "restaurant"), entity("Sam", "person")],
            place={**FRANKLIN_PLACE, "name": "Franklin BBQ"},
            journal=journal,
        ),
        memory(3, "Chef João cooked dinner at home.", day=2, entities=[entity("Chef João", "person")]),
    ]


# --------------------------------------------------------------------------- new pages and mentions


def test_a_name_seen_in_two_memories_becomes_a_new_page_with_sections_by_type() -> None:
    plan = scripted_plan(context(austin_batch()))

    franklin = by_title(plan)["Franklin Barbecue"]
    assert franklin.type == "entity"
    assert franklin.slug == "franklin-barbecue"
    assert franklin.summary == "Restaurant in Austin, TX."
    assert franklin.source_refs == [str(uuid.UUID(int=1)), str(uuid.UUID(int=2))]
    sections = {s.slug: s for s in franklin.sections}
    assert list(sections) == ["overview", "notes", "visits"]
    # The overview says what the summary (shown above it) does not: the address.
    assert sections["overview"].body_md == "Address: 900 E 11th St, Austin, TX 78702, USA."
    # Condensed: how many memories over which days, who recurs, then the latest lines, newest first.
    assert sections["notes"].body_md == (
        "- 2 memories, 2026-03-01 to 2026-03-02.\n"
        "- Often together with: **Sam** (2).\n"
        "- 2026-03-02: Back at Franklin BBQ with Sam; the line was long.\n"
        "- 2026-03-01: Lunch at Franklin Barbecue with Sam. The brisket was perfect."  # every telling sentence
    )
    assert sections["visits"].body_md == "- Visited 2 times, 2026-03-01 to 2026-03-02.\n- Latest: 2026-03-02, 2026-03-01."
    assert sections["visits"].heading == "Visits & Interactions"
    assert all(s.source_refs == [str(uuid.UUID(int=1)), str(uuid.UUID(int=2))] for s in franklin.sections)


def test_a_name_seen_once_is_held_as_an_unresolved_mention() -> None:
    plan = scripted_plan(context(austin_batch()))

    assert "Chef João" not in by_title(plan)
    [mention] = plan.unresolvedMentions
    assert mention.alias == "Chef João"
    assert mention.suggestedType == "entity"
    assert mention.context == "Chef João cooked dinner at home."
    assert mention.source_ref == str(uuid.UUID(int=3))


def test_variant_spellings_collapse_into_one_subject_titled_by_the_most_common_spelling() -> None:
    memories = [
        memory(1, "Coffee at Cafe Mocha.", entities=[entity("Cafe Mocha", "cafe")]),
        memory(2, "Croissant at Café Mocha.", entities=[entity("Café Mocha", "cafe")]),
        memory(3, "Café Mocha again.", entities=[entity("Café Mocha", "cafe")]),
        # Linked to the others only through a hint alias.
        memory(4, "The Mocha was busy.", entities=[entity("The Mocha", "cafe", aliases=["Cafe Mocha"])]),
    ]

    plan = scripted_plan(context(memories))

    [page] = plan.newPages
    assert page.title == "Café Mocha"
    assert page.slug == "cafe-mocha"
    assert page.aliases == ["The Mocha"]
    assert page.source_refs == [str(uuid.UUID(int=n)) for n in (1, 2, 3, 4)]
    assert plan.unresolvedMentions == []


@pytest.mark.parametrize(
    ("spellings", "title"),
    [
        (["UCHI", "Uchi"], "Uchi"),  # properly cased wins a tie against the first sighting
        (["zilker park", "zilker park", "Zilker Park"], "Zilker Park"),  # and outnumbered
        (["CONTRAMAR", "Contramar", "CONTRAMAR"], "Contramar"),
        (["Café Mocha", "Cafe Mocha", "Cafe Mocha"], "Cafe Mocha"),  # then the most frequent
        (["Cafe Mocha", "Café Mocha"], "Cafe Mocha"),  # ties go to the first seen
        (["UCHI", "uchi", "uchi"], "uchi"),  # none properly cased: the most frequent
    ],
)
def test_titles_take_the_best_attested_spelling(spellings: list[str], title: str) -> None:
    memories = [memory(n, f"Ate at {name}.", day=n, entities=[entity(name, "restaurant")])
                for n, name in enumerate(spellings, start=1)]

    assert scripted_plan(context(memories)).newPages[0].title == title


def test_a_near_variant_of_an_existing_page_updates_that_page() -> None:
    # "Barbeque" is no alias of the candidate, but the resolution ladder reads it as a typo of it.
    candidate = CandidatePage(
        id=uuid.uuid4(),
        type="entity",
        slug="franklin-barbecue",
        title="Franklin Barbecue",
        aliases=["franklin barbecue"],
    )
    memories = [
        memory(1, "Franklin Barbeque was packed.", entities=[entity("Franklin Barbeque", "restaurant")]),
    ]

    plan = scripted_plan(context(memories, pages=[candidate]))

    assert plan.newPages == [] and plan.unresolvedMentions == []
    assert [update.pageId for update in plan.pageUpdates] == [str(candidate.id)]
    assert plan.pageUpdates[0].aliases == ["Franklin Barbeque"]


def test_a_qualified_variant_updates_the_page_of_that_place_only() -> None:
    uchi = CandidatePage(id=uuid.uuid4(), type="entity", slug="uchi", title="Uchi", aliases=["uchi"],
                         summary="Restaurant in Austin, TX.")
    uchiko = CandidatePage(id=uuid.uuid4(), type="entity", slug="uchiko", title="Uchiko", aliases=["uchiko"],
                           summary="Restaurant in Austin, TX.")
    memories = [memory(1, "Dinner at Uchi (Austin).", entities=[entity("Uchi (Austin)", "restaurant")])]

    plan = scripted_plan(context(memories, pages=[uchiko, uchi]))

    assert [update.pageId for update in plan.pageUpdates] == [str(uchi.id)]


def test_a_friend_named_like_the_city_is_not_the_city_page() -> None:
    city = CandidatePage(id=uuid.uuid4(), type="topic", slug="austin", title="Austin", aliases=["austin"],
                         summary="City: Austin.")
    memories = [
        memory(1, "Austin called about the weekend.", entities=[entity("Austin", "person")]),
        memory(2, "Played tennis with Austin.", entities=[entity("Austin", "person")]),
    ]

    plan = scripted_plan(context(memories, pages=[city]))

    assert plan.pageUpdates == []
    assert [(page.type, page.title) for page in plan.newPages] == [("entity", "Austin")]


def test_a_friend_and_the_city_of_one_name_in_one_memory_are_two_subjects() -> None:
    memories = [
        memory(i, f"Lunch with Austin in Austin, day {i}.", entities=[entity("Austin", "person")],
               place={"name": "Cafe", "city": "Austin"})
        for i in (1, 2)
    ]

    plan = scripted_plan(context(memories))

    assert sorted((page.type, page.title) for page in plan.newPages) == [("entity", "Austin"), ("topic", "Austin")]


# --------------------------------------------------------------------------- page updates


def franklin_page(**overrides: Any) -> CandidatePage:
    fields: dict[str, Any] = {
        "id": uuid.UUID(int=900),
        "type": "entity",
        "slug": "franklin-barbecue",
        "title": "Franklin Barbecue",
        "summary": "Restaurant in Austin, TX.",
        "aliases": ["franklin barbecue", "franklin bbq"],
        "sections": [
            CandidateSection(slug="notes", heading="Notes", body_md="- Lunch at Franklin Barbecue with Sam.")
        ],
    }
    return CandidatePage(**(fields | overrides))


def test_a_candidate_matched_by_alias_gets_an_update_with_only_new_lines_and_new_aliases() -> None:
    memories = [
        memory(
            1,
            "Lunch at Franklin Barbecue with Sam. The brisket was perfect.",
            entities=[entity("Franklin Barbecue", "restaurant")],
            place=FRANKLIN_PLACE,
        ),
        memory(
            2,
            "Franklin's had a new sausage.",
            day=3,
            entities=[entity("Franklin BBQ", "restaurant", aliases=["Franklin's"])],
            place={**FRANKLIN_PLACE, "name": "Franklin BBQ"},
        ),
    ]

    plan = scripted_plan(context(memories, pages=[franklin_page()]))

    # The only new page is the city topic, and the matched page links to it by its stored slug.
    assert [page.title for page in plan.newPages] == ["Austin"] and plan.unresolvedMentions == []
    assert links_of(plan) == {("entity", "franklin-barbecue", "topic", "austin")}
    [update] = plan.pageUpdates
    assert update.pageId == str(uuid.UUID(int=900))
    assert update.aliases == ["Franklin's"]
    sections = {s.slug: s for s in update.sections}
    # Every memory about the page is proposed and cited, the first one too although the stored notes
    # already say what it says: the writer rebuilds the section from all it cites.
    assert sections["notes"].proposed_body_md == (
        "- 2 new memories.\n- 2026-03-04: Franklin's had a new sausage.\n"
        "- 2026-03-01: Lunch at Franklin Barbecue with Sam. The brisket was perfect."
    )
    assert sections["notes"].source_refs == [str(uuid.UUID(int=1)), str(uuid.UUID(int=2))]
    assert sections["visits"].proposed_body_md == "- 2 new memories.\n- Visited on 2026-03-04.\n- Visited on 2026-03-01."
    assert sections["visits"].source_refs == [str(uuid.UUID(int=1)), str(uuid.UUID(int=2))]


@pytest.mark.parametrize(
    ("page_type", "section_slug"),
    [("entity", "notes"), ("topic", "highlights"), ("decision", "consequences")],
)
def test_an_update_appends_to_the_section_of_the_page_type(page_type: str, section_slug: str) -> None:
    page = CandidatePage(id=uuid.UUID(int=901), type=page_type, slug="subject", title="Subject")
    memories = [memory(1, "Subject came up again.", entities=[entity("subject", type_=page_type)])]

    [update] = scripted_plan(context(memories, pages=[page])).pageUpdates

    assert [s.slug for s in update.sections] == [section_slug]
    assert update.aliases == []  # "subject" normalises like the title


def test_a_memory_whose_line_the_page_already_has_is_still_proposed_and_cited() -> None:
    memories = [memory(1, "Lunch at Franklin Barbecue with Sam.", entities=[entity("Franklin Barbecue")])]

    plan = scripted_plan(context(memories, pages=[franklin_page()]))

    [update] = plan.pageUpdates
    [notes] = update.sections
    assert notes.source_refs == [str(uuid.UUID(int=1))]
    assert plan.newPages == [] and plan.unresolvedMentions == []


def test_a_page_stored_in_the_wrong_case_is_offered_its_properly_cased_title() -> None:
    page = franklin_page(title="FRANKLIN BARBECUE")
    memories = [memory(1, "Lunch at Franklin Barbecue.", entities=[entity("Franklin Barbecue", "restaurant")])]

    [update] = scripted_plan(context(memories, pages=[page])).pageUpdates

    assert update.aliases == ["Franklin Barbecue"]


# --------------------------------------------------------------------------- promotions


def test_an_open_mention_seen_twice_is_promoted_on_its_third_sighting() -> None:
    mention = open_mention("Chef João", 2, BASE_TIME - timedelta(days=5), suggested_type="entity")
    memories = [memory(7, "Chef Joao made caldo verde.", entities=[entity("Chef Joao", "person")])]

    plan = scripted_plan(context(memories, mentions=[mention]))

    assert plan.unresolvedMentions == [] and plan.newPages == []
    [promotion] = plan.promotions
    assert promotion.mentionId == str(mention.id)
    assert promotion.type == "entity"
    assert promotion.title == "Chef João"  # the held spelling outnumbers the batch's
    assert promotion.slug == "chef-joao"
    assert {s.slug: s.body_md for s in promotion.sections} == {
        "overview": "A person.",
        "notes": "- 2026-03-01: Chef Joao made caldo verde.",
    }
    assert all(s.source_refs == [str(uuid.UUID(int=7))] for s in promotion.sections)


def test_a_promoted_page_is_written_from_and_cites_the_held_sightings_too() -> None:
    held = [memory(1, "Chef João cooked feijoada.", day=-9, entities=[entity("Chef João", "person")]),
            memory(2, "CHEF JOÃO brought bread.", day=-4, entities=[entity("CHEF JOÃO", "person")])]
    mention = open_mention("Chef João", 2, BASE_TIME - timedelta(days=4), suggested_type="entity",
                           sample_contexts=[{"quote": "CHEF JOÃO brought bread.", "source_ref": str(held[1].id)},
                                            {"quote": "Chef João cooked feijoada.", "source_ref": str(held[0].id)}])
    memories = [memory(7, "Chef Joao made caldo verde.", entities=[entity("Chef Joao", "person")])]
    ctx = context(memories, mentions=[mention]).model_copy(update={"held_memories": held})

    [promotion] = scripted_plan(ctx).promotions

    assert promotion.title == "Chef João"
    notes = next(s for s in promotion.sections if s.slug == "notes")
    assert notes.source_refs == [str(uuid.UUID(int=n)) for n in (1, 2, 7)]
    assert notes.body_md.startswith("- 3 memories, 2026-02-20 to 2026-03-01.")
    assert "2026-02-20: Chef João cooked feijoada." in notes.body_md


def test_no_promotion_when_the_mention_was_last_seen_more_than_30_days_before_the_batch() -> None:
    mention = open_mention("Chef João", 2, BASE_TIME - timedelta(days=31))
    memories = [memory(7, "Chef Joao made caldo verde.", entities=[entity("Chef Joao", "person")])]

    plan = scripted_plan(context(memories, mentions=[mention]))

    assert plan.promotions == [] and plan.newPages == []
    assert [(m.alias, m.source_ref) for m in plan.unresolvedMentions] == [
        ("Chef Joao", str(uuid.UUID(int=7)))
    ]


def test_a_mention_below_three_sightings_stays_held() -> None:
    mention = open_mention("Biscuit", 1, BASE_TIME)
    memories = [memory(1, "Walked Biscuit.", entities=[entity("Biscuit", "pet")])]

    plan = scripted_plan(context(memories, mentions=[mention]))

    assert plan.promotions == [] and plan.newPages == []
    assert [(m.alias, m.suggestedType) for m in plan.unresolvedMentions] == [("Biscuit", "entity")]


def test_a_lint_compile_with_no_memories_promotes_the_flagged_mentions() -> None:
    flagged = open_mention(
        "Taberna dos Mercadores",
        3,
        BASE_TIME,
        suggested_type="entity",
        sample_contexts=[
            {"quote": "Taberna dos Mercadores again, best cod.", "source_ref": "m-3"},
            {"quote": "Dinner at Taberna dos Mercadores. Tiny place.", "source_ref": "m-1"},
        ],
    )
    too_few = open_mention("Chef João", 2, BASE_TIME)
    not_flagged = open_mention("Lisbon", 5, BASE_TIME)

    plan = scripted_plan(
        context(
            [], mentions=[flagged, too_few, not_flagged], promotion_candidate_ids=[flagged.id, too_few.id]
        )
    )

    [promotion] = plan.promotions
    assert promotion.mentionId == str(flagged.id)
    assert (promotion.title, promotion.slug, promotion.type) == (
        "Taberna dos Mercadores",
        "taberna-dos-mercadores",
        "entity",
    )
    [notes] = promotion.sections
    assert notes.slug == "notes"
    assert notes.body_md == "- Dinner at Taberna dos Mercadores.\n- Taberna dos Mercadores again, best cod."
    assert notes.source_refs == ["m-1", "m-3"]
    Plan.model_validate(plan.model_dump())


def test_a_lint_candidate_whose_name_already_has_a_page_is_promoted_into_that_page() -> None:
    # Its held sightings are about the page: promoting it there cites them and closes the mention.
    flagged = open_mention(
        "Lisbon", 4, BASE_TIME, sample_contexts=[{"quote": "Lisbon again.", "source_ref": "m-1"}]
    )
    page = CandidatePage(id=uuid.uuid4(), type="topic", slug="lisbon", title="Lisbon", aliases=["lisbon"])

    plan = scripted_plan(context([], pages=[page], mentions=[flagged], promotion_candidate_ids=[flagged.id]))

    [promotion] = plan.promotions
    assert (promotion.title, promotion.slug, promotion.type) == ("Lisbon", "lisbon", "topic")
    assert [(s.slug, s.body_md, s.source_refs) for s in promotion.sections] == [
        ("highlights", "- Lisbon again.", ["m-1"])]


def test_a_held_name_seen_again_once_its_page_exists_is_promoted_into_the_page() -> None:
    mention = open_mention("Zilker Park", 2, BASE_TIME - timedelta(days=3), suggested_type="entity")
    page = CandidatePage(id=uuid.UUID(int=910), type="entity", slug="zilker-metropolitan-park",
                         title="Zilker Metropolitan Park", aliases=["zilker metropolitan park", "zilker park"])
    memories = [memory(1, "Walked Biscuit in Zilker Park.", entities=[entity("Zilker Park", "park")])]

    plan = scripted_plan(context(memories, pages=[page], mentions=[mention]))

    [update] = plan.pageUpdates
    assert update.pageId == str(page.id)
    [promotion] = plan.promotions
    assert (promotion.mentionId, promotion.title, promotion.slug) == (
        str(mention.id), "Zilker Metropolitan Park", "zilker-metropolitan-park")
    assert plan.unresolvedMentions == []


# --------------------------------------------------------------------------- decisions


def test_a_decision_gets_a_page_from_a_single_memory() -> None:
    memories = [
        memory(
            1,
            "We will store the wiki in Postgres. We chose it because pg_trgm gives fuzzy alias matching.",
            entities=[entity("Use Postgres for the wiki", "decision", type_="decision")],
        )
    ]

    plan = scripted_plan(context(memories))

    [page] = plan.newPages
    assert page.type == "decision"
    assert page.summary == "Decision: Use Postgres for the wiki."
    assert {s.slug: s.body_md for s in page.sections} == {
        "context": "- 2026-03-01: We will store the wiki in Postgres. We chose it because pg_trgm gives fuzzy alias "
                   "matching.",
        "decision": "Use Postgres for the wiki.",
        "rationale": "- 2026-03-01: Because pg_trgm gives fuzzy alias matching.",
    }
    assert plan.unresolvedMentions == []


# --------------------------------------------------------------------------- topics and links


def test_city_and_journal_topics_are_created_and_linked_from_places_and_people() -> None:
    plan = scripted_plan(context(austin_batch()))

    pages = by_title(plan)
    assert pages["Austin"].type == "topic" and pages["Austin"].summary == "City: Austin."
    assert pages["Austin Trip 2026"].summary == "Trip: Austin Trip 2026."
    assert [s.slug for s in pages["Austin"].sections] == ["highlights"]  # the summary is not repeated as a section
    assert links_of(plan) == {
        ("entity", "franklin-barbecue", "topic", "austin"),
        ("entity", "franklin-barbecue", "topic", "austin-trip-2026"),
        ("entity", "sam", "topic", "austin-trip-2026"),
        ("entity", "sam", "entity", "franklin-barbecue"),
    }
    assert len(plan.pageLinks) == len(links_of(plan))  # no duplicate links


def test_links_point_at_candidate_pages_by_their_stored_slug_and_skip_held_names() -> None:
    austin = CandidatePage(
        id=uuid.uuid4(), type="topic", slug="austin-tx", title="Austin", aliases=["austin"]
    )
    memories = [
        memory(
            1,
            "Tacos at Veracruz.",
            entities=[entity("Veracruz", "restaurant")],
            place={"name": "Veracruz", "city": "austin"},
        ),
        memory(
            2,
            "Veracruz again.",
            entities=[entity("Veracruz", "restaurant")],
            place={"name": "Veracruz", "city": "Austin"},
        ),
        memory(
            3,
            "Ramen at Ramen Tatsu-ya.",
            entities=[entity("Ramen Tatsu-ya", "restaurant")],
            place={"name": "Ramen Tatsu-ya", "city": "Austin"},
        ),
    ]

    plan = scripted_plan(context(memories, pages=[austin]))

    # Ramen Tatsu-ya is held as a mention, so it has no page to link from.
    assert links_of(plan) == {("entity", "veracruz", "topic", "austin-tx")}
    assert by_title(plan)["Veracruz"].summary == "Restaurant in Austin."
    [austin_update] = plan.pageUpdates
    assert austin_update.pageId == str(austin.id)
    assert [s.slug for s in austin_update.sections] == ["highlights"]


def test_a_city_seen_once_is_held_like_any_other_name() -> None:
    memories = [
        memory(1, "Tacos at Veracruz.", entities=[entity("Veracruz", "restaurant")], place={"city": "Austin"})
    ]

    plan = scripted_plan(context(memories))

    assert plan.newPages == [] and plan.pageLinks == []
    assert sorted(m.alias for m in plan.unresolvedMentions) == ["Austin", "Veracruz"]


# --------------------------------------------------------------------------- contract invariants

