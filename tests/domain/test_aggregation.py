import math
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from domain.aggregation import (
    DEFAULT_PROMOTION_THRESHOLDS,
    PromotionThresholds,
    SectionAggregation,
    empty_section_aggregation,
    hubness_score,
    membership_evidence,
    merge_section_aggregation,
    next_promotion_status,
    score_promotion,
    score_section_aggregation,
)

NOW = datetime(2026, 2, 1, tzinfo=UTC)


class TestEmptySectionAggregation:
    def test_zeroed_record(self) -> None:
        assert empty_section_aggregation().model_dump() == {
            "linked_page_ids": [],
            "supporting_record_count": 0,
            "first_source_at": None,
            "last_source_at": None,
            "observed_tags": [],
            "promotion_status": "none",
            "promotion_score": 0,
            "promoted_page_id": None,
        }

    def test_no_shared_lists_between_calls(self) -> None:
        first = empty_section_aggregation()
        first.linked_page_ids.append("mutation")
        assert empty_section_aggregation().linked_page_ids == []


class TestMergeSectionAggregation:
    def test_none_and_empty_patch_give_an_empty_record(self) -> None:
        assert merge_section_aggregation(None, {}) == empty_section_aggregation()

    def test_overlays_scalars(self) -> None:
        merged = merge_section_aggregation(
            empty_section_aggregation(),
            {
                "promotion_status": "candidate",
                "promotion_score": 0.72,
                "supporting_record_count": 8,
                "last_source_at": "2026-04-19T00:00:00Z",
            },
        )
        assert (merged.promotion_status, merged.promotion_score) == ("candidate", 0.72)
        assert (merged.supporting_record_count, merged.last_source_at) == (8, "2026-04-19T00:00:00Z")

    def test_keeps_scalars_the_patch_omits(self) -> None:
        current = SectionAggregation(
            supporting_record_count=20, first_source_at="2026-03-01T00:00:00Z", promotion_score=0.6
        )
        merged = merge_section_aggregation(current, {"promotion_status": "candidate"})
        assert (merged.supporting_record_count, merged.first_source_at, merged.promotion_score) == (
            20,
            "2026-03-01T00:00:00Z",
            0.6,
        )

    def test_linked_page_ids_are_replaced_and_deduplicated_in_order(self) -> None:
        current = SectionAggregation(linked_page_ids=["p1", "p2", "p3"])
        merged = merge_section_aggregation(current, {"linked_page_ids": ["p4", "p2", "p2", "p5", "p4"]})
        assert merged.linked_page_ids == ["p4", "p2", "p5"]

    def test_an_empty_list_resets_and_none_keeps(self) -> None:
        current = SectionAggregation(linked_page_ids=["p1"], observed_tags=["food"])
        assert merge_section_aggregation(current, {"linked_page_ids": []}).linked_page_ids == []
        assert merge_section_aggregation(current, {"observed_tags": None}).observed_tags == ["food"]

    def test_keeps_current_lists_when_the_patch_omits_them(self) -> None:
        current = SectionAggregation(linked_page_ids=["p1", "p2"])
        assert merge_section_aggregation(current, {"promotion_score": 0.1}).linked_page_ids == ["p1", "p2"]

    def test_observed_tags_are_deduplicated(self) -> None:
        merged = merge_section_aggregation(
            None, {"observed_tags": ["food", "travel", "food", "restaurant", "travel"]}
        )
        assert merged.observed_tags == ["food", "travel", "restaurant"]

    def test_promotion_keeps_provenance(self) -> None:
        current = SectionAggregation(
            linked_page_ids=["p1", "p2", "p3"],
            supporting_record_count=40,
            first_source_at="2026-03-01T00:00:00Z",
            last_source_at="2026-04-19T00:00:00Z",
            observed_tags=["restaurant", "austin"],
            promotion_status="candidate",
            promotion_score=0.81,
        )
        merged = merge_section_aggregation(
            current, {"promotion_status": "promoted", "promoted_page_id": "new-topic"}
        )
        assert (merged.promotion_status, merged.promoted_page_id) == ("promoted", "new-topic")
        assert merged.linked_page_ids == ["p1", "p2", "p3"]
        assert merged.supporting_record_count == 40
        assert merged.observed_tags == ["restaurant", "austin"]

    def test_accepts_the_stored_json_and_does_not_modify_inputs(self) -> None:
        stored = {"linked_page_ids": ["p1"], "supporting_record_count": 3, "promotion_status": "candidate"}
        patch = {"supporting_record_count": 5}
        merged = merge_section_aggregation(stored, patch)
        assert (merged.linked_page_ids, merged.supporting_record_count, merged.promotion_status) == (
            ["p1"],
            5,
            "candidate",
        )
        assert stored == {
            "linked_page_ids": ["p1"],
            "supporting_record_count": 3,
            "promotion_status": "candidate",
        }


class TestScorePromotion:
    def test_empty_signals(self) -> None:
        result = score_promotion(0, 0, 0, 0, 0)
        assert (result.score, result.status) == (0, "none")

    def test_every_signal_saturated(self) -> None:
        result = score_promotion(25, 40, 60, 1, 3000)
        assert (result.score, result.status) == (1.0, "promote_ready")

    def test_candidate_between_the_thresholds(self) -> None:
        result = score_promotion(10, 12, 18, 0.3, 900)
        # 0.125 + 0.1 + 0.12 + 0.045 + 0.075
        assert result.score == 0.465
        assert (
            DEFAULT_PROMOTION_THRESHOLDS.candidate
            <= result.score
            < DEFAULT_PROMOTION_THRESHOLDS.promote_ready
        )
        assert result.status == "candidate"

    def test_negative_and_non_finite_inputs_count_as_zero(self) -> None:
        assert score_promotion(-5, math.nan, -math.inf, -1, 0).score == 0
        assert score_promotion(math.inf, 0, 0, 0, 0).score == 0

    def test_custom_thresholds(self) -> None:
        assert score_promotion(10, 0, 0, 0, 0).status == "none"
        low = PromotionThresholds(candidate=0.05, promote_ready=0.1)
        result = score_promotion(10, 0, 0, 0, 0, thresholds=low)
        assert (result.score, result.status) == (0.125, "promote_ready")

    def test_contributions_per_signal(self) -> None:
        contributions = score_promotion(20, 0, 0, 0, 0).contributions
        assert contributions.model_dump() == {
            "linked": 0.25,
            "supporting": 0,
            "temporal": 0,
            "coherence": 0,
            "readability": 0,
        }

    @pytest.mark.parametrize(
        ("signals", "score", "status"),
        [
            # 0.25 * 8/20 = 0.1, 0.25 * 12/30 = 0.1, 0.2 * 15/30 = 0.1 -> 0.3 + 0.15*600/1800 = 0.35
            ((8, 12, 15, 0, 600), 0.35, "none"),
            # 0.1 + 0.1 + 0.1 + 0.1 (readability 1200/1800) = 0.4 exactly -> candidate
            ((8, 12, 15, 0, 1200), 0.4, "candidate"),
            # 0.1 + 0.1 + 0.2 + 0 + 0.15 = 0.55 exactly -> promote_ready
            ((8, 12, 30, 0, 1800), 0.55, "promote_ready"),
        ],
    )
    def test_threshold_boundaries_are_inclusive(self, signals: tuple, score: float, status: str) -> None:
        result = score_promotion(*signals)
        assert (result.score, result.status) == (score, status)

    def test_rounds_halves_up_like_js_math_round(self) -> None:
        # 0.15 * 7/1800 * 1000 = 0.5833.. -> 0.001; 0.15 * 6/1800 * 1000 = 0.5 exactly -> 0.001 (Python's
        # round() would give 0.0 by rounding half to even).
        assert score_promotion(0, 0, 0, 0, 6).contributions.readability == 0.001
        assert score_promotion(0, 0, 0, 0, 5).contributions.readability == 0
        # 0.25 * 1/20 = 0.0125 -> 0.013 (round-half-even would give 0.012).
        assert score_promotion(1, 0, 0, 0, 0).score == 0.013


class TestScoreSectionAggregation:
    def test_temporal_spread_and_coherence(self) -> None:
        aggregation = SectionAggregation(
            linked_page_ids=["p1", "p2", "p3", "p4", "p5", "p6"],
            supporting_record_count=12,
            first_source_at="2026-01-01T00:00:00Z",
            last_source_at="2026-01-31T00:00:00Z",
            observed_tags=["restaurant"],
        )
        tag_sets = [["restaurant"], ["Restaurant"], ["coffee"], ["restaurant", "x"], [], ["RESTAURANT"]]
        result = score_section_aggregation(aggregation, "x" * 1000, tag_sets, NOW)
        assert result.contributions.temporal == 0.2
        assert result.contributions.coherence == 0.1  # 4 of 6 sets share a tag: 0.15 * 2/3
        assert result.status in ("candidate", "promote_ready")

    def test_no_observed_tags_means_no_coherence(self) -> None:
        aggregation = SectionAggregation(linked_page_ids=["p1", "p2"], observed_tags=[])
        assert (
            score_section_aggregation(aggregation, "body", [["x"], ["y"]], NOW).contributions.coherence == 0
        )

    def test_no_tag_sets_means_no_coherence(self) -> None:
        aggregation = SectionAggregation(linked_page_ids=["p1"], observed_tags=["food"])
        assert score_section_aggregation(aggregation, "body", [], NOW).contributions.coherence == 0

    def test_missing_last_source_uses_now(self) -> None:
        aggregation = SectionAggregation(first_source_at="2026-01-17T00:00:00Z")
        # 15 days to NOW: 0.2 * 15/30
        assert score_section_aggregation(aggregation, "", [], NOW).contributions.temporal == 0.1

    @pytest.mark.parametrize(
        ("first", "last"),
        [
            (None, None),
            (None, "2026-01-31T00:00:00Z"),
            ("not a date", "2026-01-31T00:00:00Z"),
            ("2026-01-01T00:00:00Z", "garbage"),
            ("2026-01-31T00:00:00Z", "2026-01-01T00:00:00Z"),  # negative spread
        ],
    )
    def test_unusable_or_negative_spans_count_as_zero_days(self, first: str | None, last: str | None) -> None:
        aggregation = SectionAggregation(first_source_at=first, last_source_at=last)
        assert score_section_aggregation(aggregation, "", [], NOW).contributions.temporal == 0

    def test_zone_less_timestamps_are_utc(self) -> None:
        aggregation = SectionAggregation(
            first_source_at="2026-01-01", last_source_at="2026-01-16T00:00:00+00:00"
        )
        assert score_section_aggregation(aggregation, "", [], NOW).contributions.temporal == 0.1

    def test_linked_supporting_and_body_length(self) -> None:
        aggregation = SectionAggregation(linked_page_ids=["p"] * 10, supporting_record_count=15)
        contributions = score_section_aggregation(aggregation, "x" * 900, [], NOW).contributions
        assert (contributions.linked, contributions.supporting, contributions.readability) == (
            0.125,
            0.125,
            0.075,
        )


class TestNextPromotionStatus:
    @pytest.mark.parametrize(
        ("current", "score_status", "expected"),
        [
            ("promoted", "none", "promoted"),
            ("promoted", "promote_ready", "promoted"),
            ("none", "candidate", "candidate"),
            ("none", "promote_ready", "candidate"),
            ("candidate", "none", "none"),
            ("suppressed", "none", "none"),
            ("suppressed", "candidate", "candidate"),
        ],
    )
    def test_promoted_is_sticky_and_candidate_starts_at_the_candidate_threshold(
        self, current: str, score_status: str, expected: str
    ) -> None:
        assert next_promotion_status(current, score_status) == expected


class TestHubnessScore:
    def test_formula(self) -> None:
        assert hubness_score(3, 2, 25) == 3 + 4 + 2

    def test_missing_average_counts_as_zero(self) -> None:
        assert hubness_score(1, 0, None) == 1

    def test_average_is_floored_after_dividing(self) -> None:
        assert hubness_score(0, 0, 19.9) == 1
        assert hubness_score(0, 0, 9.99) == 0
        assert hubness_score(0, 0, Decimal("30.5")) == 3


class TestMembershipEvidence:
    def test_the_hub_name_before_the_comma_must_appear_in_the_child_title_or_summary(self) -> None:
        assert membership_evidence("Austin, Texas", "Uchi", "Sushi restaurant in Austin.")
        assert membership_evidence("Austin, Texas", "Austin Beerworks", None)
        assert not membership_evidence("Austin, Texas", "Momofuku Noodle Bar", "Restaurant in Toronto.")

    def test_whole_words_only_with_case_and_accents_folded(self) -> None:
        assert membership_evidence("Bogotá", "Andrés DC", "Restaurant in BOGOTA.")
        assert membership_evidence("Bogota", "Salvo Patria", "Restaurant in bogotá, Colombia.")
        assert not membership_evidence("Bogotá", "Bogotanos Grill", "Restaurant in Bogotanos.")

    def test_a_multi_word_name_must_appear_whole(self) -> None:
        assert membership_evidence("New York", "Katz's", "Deli in New York City.")
        assert not membership_evidence("New York", "Katz's", "Deli in New Jersey, near York.")

    def test_a_hub_without_a_name_has_no_members(self) -> None:
        assert not membership_evidence(", Texas", "Uchi", "Sushi in Texas.")
        assert not membership_evidence("", "Uchi", "")

