"""The plan contract: structural validation, and malformed links dropped and counted, never fatal."""

import pytest
from pydantic import ValidationError

from domain.plan import Plan

EMPTY = {"pageUpdates": [], "newPages": [], "unresolvedMentions": [], "promotions": []}


def test_malformed_links_are_dropped_and_counted():
    plan = Plan.model_validate({**EMPTY, "pageLinks": [
        {"fromType": "person", "fromSlug": "a", "toType": "topic", "toSlug": "b"},   # bad page type
        {"fromType": "entity", "fromSlug": "  ", "toType": "topic", "toSlug": "b"},  # blank slug
        "lisbon",                                                                    # not an object
        {"fromType": "entity", "fromSlug": "a", "toType": "topic", "toSlug": "b"},
    ]})
    assert [(link.fromSlug, link.toSlug) for link in plan.pageLinks] == [("a", "b")]
    assert plan.dropped_links == 3


def test_a_plan_without_its_leaf_arrays_is_invalid():
    with pytest.raises(ValidationError, match="newPages"):
        Plan.model_validate({"pageUpdates": [], "unresolvedMentions": [], "promotions": []})


def test_unknown_suggested_types_are_no_opinion_and_null_arrays_are_empty():
    plan = Plan.model_validate({**EMPTY, "unresolvedMentions": [{"alias": "Chef João", "suggestedType": "chef"}],
                                "pageLinks": None, "sectionPromotions": None})
    assert plan.unresolvedMentions[0].suggestedType is None
    assert plan.pageLinks == [] and plan.sectionPromotions == [] and plan.dropped_links == 0
