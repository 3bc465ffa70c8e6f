"""The scripted planner's plans as a whole: every branch taken, citations from the batch only, no ids or
wikilinks in prose, deterministic and valid; the scripted section writer; plain memories."""

from __future__ import annotations

import uuid

import pytest

from domain.context import CandidatePage, PlannerContext
from domain.plan import Plan
from planners.scripted.leaf_plan import scripted_plan, scripted_write_section
from tests.domain.test_scripted import (
    BASE_TIME,
    UUID_IN_TEXT,
    all_sections,
    austin_batch,
    by_title,
    context,
    entity,
    memory,
    open_mention,
    prose_of,
)


def everything_batch() -> PlannerContext:
    """A batch that takes every branch: new pages, update, mention, promotion, lint promotion, decision."""
    memories = [
        *austin_batch(),
        memory(
            4,
            "See [[Franklin Barbecue|Franklin]] (record 814e6b70-1111-2222-3333-444455556666) for brisket.",
            day=3,
            entities=[entity("[[Biscuit]]", "pet"), entity("Lady Bird Lake", "park")],
        ),
        memory(5, "Biscuit swam in Lady Bird Lake.", day=4, entities=[entity("Biscuit", "pet")]),
        memory(
            6,
            "Decided to stop driving downtown because parking is impossible.",
            day=4,
            entities=[entity("Stop driving downtown", "decision", type_="decision")],
        ),
    ]
    lake = CandidatePage(id=uuid.UUID(int=950), type="entity", slug="lady-bird-lake", title="Lady Bird Lake")
    held = open_mention("Sam", 2, BASE_TIME)
    lint = open_mention(
        "Chef Rui", 3, BASE_TIME, sample_contexts=[{"quote": "Chef Rui", "source_ref": "m-9"}]
    )
    return context(memories, pages=[lake], mentions=[held, lint], promotion_candidate_ids=[lint.id])


def test_the_everything_batch_takes_every_branch() -> None:
    plan = scripted_plan(everything_batch())

    assert plan.newPages and plan.pageUpdates and plan.unresolvedMentions and plan.pageLinks
    assert sorted(p.title for p in plan.promotions) == ["Chef Rui", "Sam"]
    assert plan.parentSectionUpdates == [] and plan.sectionPromotions == []


def test_every_batch_section_cites_only_memories_of_the_batch() -> None:
    ctx = everything_batch()
    batch_ids = {str(m.id) for m in ctx.memories}
    plan = scripted_plan(ctx)

    lint_promotion = next(p for p in plan.promotions if p.title == "Chef Rui")
    for slug, refs in all_sections(plan):
        if slug == "notes" and refs == ["m-9"]:
            continue  # the lint promotion cites its held contexts, checked below
        assert refs, f"section {slug} has no source_refs"
        assert set(refs) <= batch_ids
    assert [s.source_refs for s in lint_promotion.sections] == [["m-9"]]
    for page in plan.newPages:
        assert page.source_refs and set(page.source_refs) <= batch_ids
    assert {m.source_ref for m in plan.unresolvedMentions} <= batch_ids


def test_no_prose_carries_ids_or_wikilinks() -> None:
    plan = scripted_plan(everything_batch())

    for text in prose_of(plan):
        assert "[[" not in text and "]]" not in text, text
        assert not UUID_IN_TEXT.search(text), text
    assert "Biscuit" in by_title(plan)


def test_the_plan_is_identical_across_calls_and_validates_as_the_contract() -> None:
    first = scripted_plan(everything_batch())
    second = scripted_plan(everything_batch())

    assert first.model_dump_json() == second.model_dump_json()
    assert Plan.model_validate(first.model_dump()) == first


def test_no_memories_and_no_lint_candidates_give_an_empty_plan() -> None:
    assert scripted_plan(context([])).is_empty()


# --------------------------------------------------------------------------- section writer


def test_the_section_writer_appends_only_lines_not_already_present() -> None:
    existing = "- Lunch with Sam.\n- Brisket was perfect."
    proposed = "- Brisket was perfect.  \n\n- Line was long.\n- Line was long."

    assert (
        scripted_write_section(existing, proposed)
        == "- Lunch with Sam.\n- Brisket was perfect.\n- Line was long."
    )


def test_the_section_writer_is_idempotent() -> None:
    once = scripted_write_section("Intro paragraph.\n", "- A.\n- B.")

    assert scripted_write_section(once, "- A.\n- B.") == once == "Intro paragraph.\n- A.\n- B."


def test_the_section_writer_writes_a_new_section_from_the_proposal() -> None:
    assert scripted_write_section(None, "\n- A.\n") == "- A."
    assert scripted_write_section("", "") == ""


@pytest.mark.parametrize("seed", [7, 8])
def test_no_new_page_repeats_its_summary_in_a_section(seed: int) -> None:
    from sample.corpus import generate_sample

    rows = generate_sample(120, seed)
    memories = [memory(n + 1, row["content"], day=n, **row.get("metadata", {})) for n, row in enumerate(rows)]
    plan = scripted_plan(context(memories))
    assert plan.newPages
    for page in plan.newPages:
        assert all(section.body_md.strip() != page.summary for section in page.sections), page.title


def test_plain_memories_without_metadata_give_pages_for_names_they_share() -> None:
    plan = scripted_plan(context([
        memory(1, "Lunch at Franklin Barbecue with Lena: brisket again."),
        memory(2, "Took Lena to Franklin Barbecue for her birthday.", day=1),
        memory(3, "Lena said Kyoto was wonderful.", day=2),
    ]))
    pages = by_title(plan)
    assert set(pages) == {"Franklin Barbecue", "Lena"}
    assert pages["Lena"].summary == "A person." and pages["Franklin Barbecue"].summary == "A restaurant."
    assert sorted(pages["Lena"].source_refs) == [str(uuid.UUID(int=n)) for n in (1, 2, 3)]
    assert [m.alias for m in plan.unresolvedMentions] == ["Kyoto"]
