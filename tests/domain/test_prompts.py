"""Prompts of the leaf planner, the section writer and the aggregation planner."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from uuid import UUID

from domain.aggregation import SectionAggregation
from domain.context import CandidatePage, CandidateSection, MemoryRecord, OpenMention, PlannerContext
from domain.parents import ParentCandidate
from domain.plan import Plan
from planners.prompts import (
    AGGREGATION_REPLY_SCHEMA,
    AGGREGATION_SYSTEM,
    NONE_LINE,
    PLANNER_REPLY_SCHEMA,
    PLANNER_SYSTEM,
    SECTION_WRITER_SYSTEM,
    AggregationPage,
    AggregationSection,
    build_aggregation_prompt,
    build_planner_prompt,
    build_section_writer_prompt,
    compact_metadata,
    force_aggregation_arrays,
    truncate,
)
from planners.templates import PAGE_TEMPLATES, UNKNOWN_SECTION_PURPOSE

WHEN = datetime(2026, 4, 27, 10, 30, tzinfo=UTC)
RECORD_ID = UUID("11111111-1111-4111-8111-111111111111")
PAGE_ID = UUID("22222222-2222-4222-8222-222222222222")
MENTION_ID = UUID("33333333-3333-4333-8333-333333333333")
OTHER_MENTION_ID = UUID("44444444-4444-4444-8444-444444444444")


def record(content: str = "Lunch at Franklin Barbecue.", metadata: dict | None = None) -> MemoryRecord:
    return MemoryRecord(
        id=RECORD_ID, content=content, metadata=metadata or {}, created_at=WHEN, updated_at=WHEN
    )


def page() -> CandidatePage:
    return CandidatePage(
        id=PAGE_ID,
        type="entity",
        slug="franklin-barbecue",
        title="Franklin Barbecue",
        summary="BBQ joint in Austin, TX.",
        aliases=[f"alias {n}" for n in range(10)],
        sections=[CandidateSection(slug="overview", heading="Overview", body_md="Brisket.")],
    )


def mention(mention_id: UUID = MENTION_ID, count: int = 3) -> OpenMention:
    return OpenMention(
        id=mention_id,
        alias="Chef João",
        alias_normalized="chef joao",
        mention_count=count,
        suggested_type="entity",
        last_seen_at=WHEN,
        sample_contexts=[
            {"quote": "cooked by Chef João", "source_ref": "r-1", "seen_at": "2026-04-20"},
            {"quote": "Chef João again", "source_ref": "r-2", "seen_at": "2026-04-21"},
            {"quote": "João's new menu", "source_ref": "r-3", "seen_at": "2026-04-22"},
            {"quote": "a fourth sighting", "source_ref": "r-4", "seen_at": "2026-04-23"},
        ],
    )


def context(**overrides) -> PlannerContext:
    values = {
        "tenant_id": "t1",
        "owner_id": "o1",
        "memories": [record()],
        "candidate_pages": [page()],
        "open_mentions": [mention()],
    }
    return PlannerContext(**(values | overrides))


# --- leaf planner: stable / batch split -----------------------------------------------------------


def test_candidate_pages_and_mentions_are_the_stable_part_and_records_the_batch_part() -> None:
    prompt = build_planner_prompt(context())

    assert prompt.system == PLANNER_SYSTEM
    assert f"id={PAGE_ID}" in prompt.stable_user
    assert f"id={MENTION_ID}" in prompt.stable_user
    assert str(RECORD_ID) not in prompt.stable_user
    assert f"- id={RECORD_ID} when=2026-04-27T10:30:00+00:00" in prompt.batch_user
    assert str(PAGE_ID) not in prompt.batch_user
    assert prompt.user_text() == f"{prompt.stable_user}\n\n{prompt.batch_user}"


def test_the_stable_part_does_not_depend_on_the_batch() -> None:
    first = build_planner_prompt(context(memories=[record("one")]))
    second = build_planner_prompt(context(memories=[record("two")], promotion_candidate_ids=[MENTION_ID]))

    assert first.stable_user == second.stable_user
    assert first.batch_user != second.batch_user


def test_candidate_page_line_shows_summary_first_8_aliases_and_section_slugs() -> None:
    stable = build_planner_prompt(context()).stable_user
    expected_aliases = json.dumps([f"alias {n}" for n in range(8)], separators=(",", ":"))

    assert (
        f'- id={PAGE_ID} type=entity slug=franklin-barbecue title="Franklin Barbecue" '
        f'summary="BBQ joint in Austin, TX." aliases={expected_aliases} sections=["overview"]'
    ) in stable


def test_mention_line_shows_alias_count_type_and_last_seen() -> None:
    stable = build_planner_prompt(context()).stable_user

    assert f'- id={MENTION_ID} alias="Chef João" count=3 suggestedType=entity lastSeen=2026-04-27' in stable


def test_empty_sections_say_none() -> None:
    prompt = build_planner_prompt(context(memories=[], candidate_pages=[], open_mentions=[]))

    assert prompt.stable_user == (
        f"## Candidate pages already in this scope\n\n{NONE_LINE}\n\n"
        f"## Open unresolved mentions in this scope\n\n{NONE_LINE}"
    )
    assert prompt.batch_user.startswith(f"## Memory records in this batch\n\n{NONE_LINE}\n\n")


def test_record_text_is_truncated_at_800_characters() -> None:
    batch = build_planner_prompt(context(memories=[record("x" * 801)])).batch_user

    assert f"  text: {'x' * 800}…\n" in batch
    assert "x" * 801 not in batch
    assert truncate("y" * 800, 800) == "y" * 800


def test_record_without_useful_metadata_has_no_metadata_part() -> None:
    batch = build_planner_prompt(
        context(memories=[record(metadata={"raw": {"a": 1}, "photos": []})])
    ).batch_user

    assert f"- id={RECORD_ID} when=2026-04-27T10:30:00+00:00\n" in batch
    assert "metadata=" not in batch


def test_record_metadata_is_compact_json() -> None:
    metadata = {"place": {"name": "Café Lusitano", "city": "Lisbon"}, "tags": ["food"]}
    batch = build_planner_prompt(context(memories=[record(metadata=metadata)])).batch_user

    assert 'metadata={"place":{"name":"Café Lusitano","city":"Lisbon"},"tags":["food"]}' in batch


def test_compact_metadata_rules() -> None:
    long_text = "z" * 401
    metadata = {
        "photos": ["p1"],
        "raw": {"anything": 1},
        "missing": None,
        "note": long_text,
        "short": "z" * 400,
        "tags": ["a", long_text],
        "place": {"photos": [1], "raw": 2, "address": long_text, "city": "Austin", "zip": None},
        "count": 0,
    }

    assert compact_metadata(metadata) == {
        "short": "z" * 400,
        "tags": ["a", long_text],  # arrays are kept as they are
        "place": {"city": "Austin", "zip": None},  # nested nulls are kept
        "count": 0,
    }


def test_promotion_candidates_get_their_own_section_with_accumulated_contexts() -> None:
    ctx = context(
        open_mentions=[mention(), mention(OTHER_MENTION_ID, count=1)],
        promotion_candidate_ids=[MENTION_ID],
    )
    batch = build_planner_prompt(ctx).batch_user

    section = batch.split("## Mentions that crossed the promotion threshold", 1)[1]
    assert "at least 3 times" in section
    assert f"- id={MENTION_ID} alias=" in section
    assert '    context: "cooked by Chef João" source_ref=r-1' in section
    assert '"João\'s new menu"' in section
    assert "a fourth sighting" not in section  # three contexts at most
    assert str(OTHER_MENTION_ID) not in section


def test_no_promotion_section_without_promotion_candidates() -> None:
    assert "promotion threshold" not in build_planner_prompt(context()).batch_user


def test_planner_system_prompt_states_the_rules_and_the_output_shape() -> None:
    for rule in (
        "MUST carry source_refs",
        "Never invent ids",
        "[[wikilink]]",
        "at least two",
        "3 times",
        "JSON only",
    ):
        assert rule in PLANNER_SYSTEM
    for template in PAGE_TEMPLATES.values():
        for section in template.sections:
            assert f'`{section.slug}` "{section.heading}"' in PLANNER_SYSTEM
    for array in ("pageUpdates", "newPages", "unresolvedMentions", "promotions", "pageLinks"):
        assert f'"{array}"' in PLANNER_SYSTEM


def test_reply_schemas_ask_each_planner_for_exactly_its_arrays() -> None:
    assert PLANNER_REPLY_SCHEMA["type"] == "object"
    assert set(PLANNER_REPLY_SCHEMA["required"]) == {
        "pageUpdates",
        "newPages",
        "unresolvedMentions",
        "promotions",
        "pageLinks",
    }
    assert set(AGGREGATION_REPLY_SCHEMA["properties"]) == {
        "parentSectionUpdates",
        "sectionPromotions",
        "newPages",
        "pageLinks",
    }


# --- section writer -------------------------------------------------------------------------------


def test_section_writer_prompt_shows_texts_but_never_record_ids() -> None:
    prompt = build_section_writer_prompt(
        page_title="Franklin Barbecue",
        page_type="entity",
        section_slug="visits",
        heading="Visits",
        existing_body="  - March: brisket.  ",
        proposed_body="- April: ribs.\n- March: brisket.",
        cited_texts=["Went back in April for ribs " + "r" * 500],
    )

    assert prompt.startswith("Page: Franklin Barbecue  (type: entity)\nSection: Visits  (slug: visits)\n")
    assert f"Section purpose: {PAGE_TEMPLATES['entity'].sections[2].purpose}" in prompt
    assert "## Existing body\n- March: brisket.\n" in prompt
    assert "## Planner's proposed body\n- April: ribs.\n- March: brisket.\n" in prompt
    assert f"- Went back in April for ribs {'r' * 372}…" in prompt
    assert "id=" not in prompt
    assert str(RECORD_ID) not in prompt


def test_section_writer_prompt_for_a_new_uncited_unknown_section() -> None:
    prompt = build_section_writer_prompt("Lisbon", "topic", "food", "Food", None, "Pastéis.", [])

    assert f"Section purpose: {UNKNOWN_SECTION_PURPOSE}" in prompt
    assert "_(empty — this is a new section)_" in prompt
    assert "(none explicitly cited — stay close to the planner's draft)" in prompt
    assert "Never write record ids" in SECTION_WRITER_SYSTEM


# --- aggregation planner --------------------------------------------------------------------------


def test_aggregation_prompt_lines() -> None:
    hub = AggregationPage(
        id=PAGE_ID,
        type="topic",
        slug="austin",
        title="Austin",
        summary="Capital of Texas. " + "s" * 400,
        hubness_score=4,
        tags=[f"t{n}" for n in range(10)],
        sections=[
            AggregationSection(slug="overview", body_md="abc"),
            AggregationSection(
                slug="restaurants",
                body_md="x" * 12,
                aggregation=SectionAggregation(
                    linked_page_ids=["a", "b"], supporting_record_count=5, promotion_score=0.0
                ),
            ),
        ],
    )
    leaf = {
        "id": "leaf-id",
        "type": "entity",
        "slug": "franklin-barbecue",
        "title": "Franklin Barbecue",
        "parent_page_id": str(PAGE_ID),
    }
    record_candidate = ParentCandidate(
        reason="city",
        parent_title="Austin",
        parent_slug="austin",
        suggested_section_slug="overview",
        suggested_section_heading="Overview",
        source_record_ids=["r1", "r2"],
        observed_tags=["food"],
        supporting_count=2,
    )
    summary_candidate = record_candidate.model_copy(
        update={"source_kind": "summary", "parent_title": "Toronto"}
    )

    prompt = build_aggregation_prompt(
        [hub, leaf], [record_candidate, summary_candidate], {str(n): n for n in range(40)}
    )

    text = prompt.batch_user
    assert prompt.system == AGGREGATION_SYSTEM and prompt.stable_user == ""
    tags = json.dumps([f"t{n}" for n in range(8)], separators=(",", ":"))
    assert f'- id={PAGE_ID} type=topic slug=austin title="Austin" hubness=4 tags={tags}' in text
    assert f"    summary: Capital of Texas. {'s' * 282}…" in text
    assert "  · section=overview body_chars=3" in text
    assert "  · section=restaurants linked=2 records=5 score=0 status=none body_chars=12" in text
    assert (
        f'- id=leaf-id type=entity slug=franklin-barbecue title="Franklin Barbecue" parent_page_id={PAGE_ID} hubness=0'
        in text
    )
    assert (
        '- reason=city parent="Austin" slug=austin section=overview supporting=2 tags=["food"] records=["r1","r2"]'
        in text
    )
    assert '- reason=city parent="Toronto" slug=austin section=overview supporting=2 tags=["food"]\n' in text
    assert "- pageId=29 inbound=29" in text
    assert "pageId=30 " not in text


def test_aggregation_prompt_with_nothing_says_none_three_times() -> None:
    assert build_aggregation_prompt([], [], {}).batch_user.count(f"\n\n{NONE_LINE}") == 3


def test_aggregation_system_prompt_states_the_evidence_rules() -> None:
    for rule in (
        "fewer than 3 pages",
        "own title or summary",
        "at most one section",
        "at least 5 pages",
        "[[wikilink]]",
    ):
        assert rule in AGGREGATION_SYSTEM


def test_aggregation_reply_loses_its_leaf_arrays() -> None:
    raw = {
        "pageUpdates": [{"pageId": "x", "sections": []}],
        "unresolvedMentions": [{"alias": "A"}],
        "promotions": [{"mentionId": "m", "type": "entity", "title": "T"}],
        "newPages": None,
        "pageLinks": "nope",
        "parentSectionUpdates": [{"pageId": "p", "sectionSlug": "restaurants"}],
    }

    plan = Plan.model_validate(force_aggregation_arrays(raw))

    assert plan.pageUpdates == [] and plan.unresolvedMentions == [] and plan.promotions == []
    assert plan.newPages == [] and plan.pageLinks == []
    assert plan.parentSectionUpdates[0].sectionSlug == "restaurants"
    assert force_aggregation_arrays(["not", "an", "object"]) == ["not", "an", "object"]
