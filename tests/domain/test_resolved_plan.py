"""The resolved plan's stored JSON: the keys SQL and earlier versions rely on, and a lossless round trip."""

from __future__ import annotations

from domain.resolved_plan import (
    DirectSection,
    HierarchyEdge,
    IdLink,
    MentionPromotion,
    MentionSighting,
    PromotedAggregation,
    ResolvedPage,
    ResolvedPlan,
    RollupAggregation,
    SectionTask,
    WriterSection,
)

PARENT, CHILD = "7d6f2c1e-0000-4000-8000-000000000001", "7d6f2c1e-0000-4000-8000-000000000002"


def _plan() -> ResolvedPlan:
    task = SectionTask(page_id=PARENT, page_title="Austin", page_type="topic", slug="food", heading="Food",
                       existing_body="Tacos.", proposed_body="Tacos and barbecue.", source_refs=["m1"])
    page = ResolvedPage(page_id=PARENT, type="topic", slug="austin", title="Austin", summary=None, mode="update",
                        keep_title=True, aliases=["austin"],
                        sections=[WriterSection(slug="food", task="s1"),
                                  DirectSection(slug="places", heading="Places", body_md="- Uchi", source_refs=[],
                                                rewritten=True)])
    return ResolvedPlan(
        memory_ids=["m1"], tasks={"s1": task}, pages=[page],
        mentions=[MentionSighting(alias="Blue Door", alias_normalized="blue door", suggested_type=None, context="",
                                  source_ref=None)],
        promotions=[MentionPromotion(mention_id=CHILD, alias_normalized="blue door", page_id=PARENT)],
        id_links=[IdLink(from_page_id=PARENT, to_page_id=CHILD, context="rolled up under places")],
        hierarchy=[HierarchyEdge(parent_id=PARENT, child_id=CHILD)],
        aggregations=[RollupAggregation(page_id=PARENT, section_slug="places", linked_page_ids=[CHILD],
                                        child_tags=[["uchi"]]),
                      PromotedAggregation(page_id=PARENT, section_slug="food", promoted_page_id=CHILD)],
    )


def test_the_stored_json_reads_back_as_the_same_plan() -> None:
    plan = _plan()
    assert ResolvedPlan.model_validate(plan.model_dump(mode="json")) == plan


def test_the_writer_reads_a_task_by_key_from_the_tasks_map() -> None:
    # store/plan_staging.section_task reads `resolved -> 'tasks' -> key` straight from JSONB.
    stored = _plan().model_dump(mode="json")
    assert SectionTask.model_validate(stored["tasks"]["s1"]).proposed_body == "Tacos and barbecue."
    assert stored["pages"][0]["sections"][0] == {"slug": "food", "task": "s1"}


def test_links_by_id_are_stored_under_from_and_to() -> None:
    assert _plan().model_dump(mode="json")["id_links"] == [
        {"from": PARENT, "to": CHILD, "context": "rolled up under places"}]


def test_a_plan_stored_before_the_models_still_reads() -> None:
    # A leaf plan of the plain-dict resolver: no aggregation keys, a rollup section with its "rollup"
    # flag, and the resolver's result beside the document.
    stored = {
        "memory_ids": [], "tasks": {}, "mentions": [], "promotions": [], "links": [],
        "pages": [{"page_id": PARENT, "type": "topic", "slug": "austin", "title": "Austin", "summary": None,
                   "mode": "update", "keep_title": True, "aliases": [],
                   "sections": [{"slug": "places", "heading": "Places", "body_md": "- Uchi", "source_refs": [],
                                 "rewritten": True, "rollup": True},
                                {"slug": "notes", "heading": "Notes", "body_md": "Hi.", "source_refs": ["m1"]}]}],
        "resolve_result": {"plan_id": PARENT},
    }
    plan = ResolvedPlan.model_validate(stored)
    places, notes = plan.pages[0].sections
    assert isinstance(places, DirectSection) and places.rewritten
    assert isinstance(notes, DirectSection) and not notes.rewritten
    assert (plan.aggregations, plan.hierarchy, plan.id_links) == ([], [], [])
    aggregation = ResolvedPlan.model_validate({**stored, "aggregations": [
        {"page_id": PARENT, "section_slug": "food", "promoted_page_id": CHILD},
        {"page_id": PARENT, "section_slug": "places", "linked_page_ids": [], "child_tags": [], "observed_tags": None}],
        "id_links": [{"from": PARENT, "to": CHILD, "context": "c"}]})
    assert [type(a) for a in aggregation.aggregations] == [PromotedAggregation, RollupAggregation]
    assert aggregation.id_links[0].from_page_id == PARENT
