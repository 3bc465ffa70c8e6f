"""Rollup-section aggregation metadata, promotion scoring and hubness.

A rollup section on a hub page ("Restaurants" on "Austin") carries an aggregation record: the child
pages it lists, how many memories support it, when evidence first and last arrived, the tags seen,
and a promotion score that says whether it has grown enough to become a page of its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from domain.aliases import normalize_alias

PromotionStatus = Literal["none", "candidate", "promoted", "suppressed"]
ScoreStatus = Literal["none", "candidate", "promote_ready"]

# Recently changed pages the aggregation planner sees in one pass.
MAX_AGGREGATION_PAGES = 60
WEIGHTS = {"linked": 0.25, "supporting": 0.25, "temporal": 0.20, "coherence": 0.15, "readability": 0.15}
LINKED_PAGES_SATURATION = 20
SUPPORTING_RECORDS_SATURATION = 30
TEMPORAL_SPREAD_DAYS_SATURATION = 30
# Readability counts in full from a body of 1800 characters: a longer section is no readier to stand alone.
BODY_LENGTH_SATURATION = 1800
SECONDS_PER_DAY = 86_400
HUBNESS_SUPPORT_DIVISOR = 10


class SectionAggregation(BaseModel):
    """The `aggregation` JSON of a rollup section (column `wiki_page_sections.aggregation`)."""

    model_config = ConfigDict(extra="ignore")

    linked_page_ids: list[str] = Field(default_factory=list)
    supporting_record_count: int = 0
    first_source_at: str | None = None  # ISO-8601
    last_source_at: str | None = None  # ISO-8601
    observed_tags: list[str] = Field(default_factory=list)
    promotion_status: PromotionStatus = "none"
    promotion_score: float = 0
    promoted_page_id: str | None = None


class PromotionThresholds(BaseModel):
    model_config = ConfigDict(frozen=True)

    candidate: float = 0.4
    promote_ready: float = 0.55


DEFAULT_PROMOTION_THRESHOLDS = PromotionThresholds()


class PromotionContributions(BaseModel):
    linked: float
    supporting: float
    temporal: float
    coherence: float
    readability: float


class PromotionScore(BaseModel):
    score: float
    status: ScoreStatus
    contributions: PromotionContributions


def empty_section_aggregation() -> SectionAggregation:
    """A fresh aggregation record: no children, no support, status "none", score 0."""
    return SectionAggregation()


def _first_seen(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def merge_section_aggregation(
    current: SectionAggregation | Mapping[str, Any] | None, patch: Mapping[str, Any]
) -> SectionAggregation:
    """`current` (empty when None) overlaid with `patch`.

    Keys in the patch replace the current values; `linked_page_ids` and `observed_tags` are replaced
    too (never unioned) unless the patch omits them or sets them to None, and both are de-duplicated
    in first-seen order. Returns a new record; neither input is modified.
    """
    base = SectionAggregation.model_validate(current) if current is not None else empty_section_aggregation()
    merged = {**base.model_dump(), **patch}
    for list_key in ("linked_page_ids", "observed_tags"):
        chosen = patch.get(list_key)
        merged[list_key] = _first_seen(chosen if chosen is not None else getattr(base, list_key))
    return SectionAggregation.model_validate(merged)


def _clamp01(value: float) -> float:
    if not math.isfinite(value) or value <= 0:
        return 0.0
    return min(value, 1.0)


def _round_half_up(value: float) -> float:
    # Halves towards +infinity (-2.5 -> -2). Python's round() takes halves to the even neighbour, so
    # two scores a thousandth apart could round in opposite directions around a status threshold.
    floor = math.floor(value)
    return float(floor + 1 if value - floor >= 0.5 else floor)


def _round3(value: float) -> float:
    return _round_half_up(value * 1000) / 1000


def score_promotion(
    linked: float,
    supporting: float,
    days: float,
    coherence: float,
    body_length: float,
    thresholds: PromotionThresholds = DEFAULT_PROMOTION_THRESHOLDS,
) -> PromotionScore:
    """How ready a rollup section is to become its own page, 0..1.

    0.25·linked/20 + 0.25·supporting/30 + 0.20·days/30 + 0.15·coherence + 0.15·body_length/1800,
    each ratio clamped to [0, 1] (non-finite -> 0), rounded half up to 3 decimals.
    Status: "promote_ready" at >= 0.55, "candidate" at >= 0.4, else "none".
    """
    contributions = {
        "linked": _clamp01(linked / LINKED_PAGES_SATURATION) * WEIGHTS["linked"],
        "supporting": _clamp01(supporting / SUPPORTING_RECORDS_SATURATION) * WEIGHTS["supporting"],
        "temporal": _clamp01(days / TEMPORAL_SPREAD_DAYS_SATURATION) * WEIGHTS["temporal"],
        "coherence": _clamp01(coherence) * WEIGHTS["coherence"],
        "readability": _clamp01(body_length / BODY_LENGTH_SATURATION) * WEIGHTS["readability"],
    }
    score = _round3(sum(contributions.values()))
    status: ScoreStatus = "none"
    if score >= thresholds.promote_ready:
        status = "promote_ready"
    elif score >= thresholds.candidate:
        status = "candidate"
    return PromotionScore(
        score=score,
        status=status,
        contributions=PromotionContributions(
            **{name: _round3(value) for name, value in contributions.items()}
        ),
    )


def parse_instant(value: object) -> datetime | None:
    """An ISO-8601 time as an aware datetime; None for anything else (not a string, empty, malformed).

    A time that names no zone is taken as UTC: every time the compiler stores is in UTC, so a
    zone-less one can only have lost its "+00:00" on the way."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _as_aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _temporal_spread_days(first: str | None, last: str | None, now: datetime) -> float:
    first_at = parse_instant(first)
    if first_at is None:
        return 0.0
    last_at = parse_instant(last) if last else _as_aware(now)
    if last_at is None:
        return 0.0
    return max(0.0, (last_at - first_at).total_seconds()) / SECONDS_PER_DAY


def _coherence(observed_tags: Sequence[str], linked_page_tag_sets: Sequence[Sequence[str]]) -> float:
    if not observed_tags or not linked_page_tag_sets:
        return 0.0
    section_tags = {tag.lower() for tag in observed_tags}
    sharing = sum(1 for tags in linked_page_tag_sets if any(tag.lower() in section_tags for tag in tags))
    return sharing / len(linked_page_tag_sets)


def score_section_aggregation(
    aggregation: SectionAggregation,
    body_md: str,
    linked_page_tag_sets: Sequence[Sequence[str]],
    now: datetime,
) -> PromotionScore:
    """Promotion score of a rollup section from its aggregation record.

    Linked = number of linked pages; supporting = supporting_record_count; days from first to last
    evidence (last missing -> `now`; first missing or unparsable -> 0; negative -> 0); coherence =
    the fraction of linked pages' tag sets sharing at least one tag, case-insensitively, with the
    section's observed tags (0 when either is empty); body length in characters.
    """
    return score_promotion(
        linked=len(aggregation.linked_page_ids),
        supporting=aggregation.supporting_record_count,
        days=_temporal_spread_days(aggregation.first_source_at, aggregation.last_source_at, now),
        coherence=_coherence(aggregation.observed_tags, linked_page_tag_sets),
        body_length=len(body_md),
    )


def next_promotion_status(current_status: PromotionStatus, score_status: ScoreStatus) -> PromotionStatus:
    """The section's stored status after a rescore, when an aggregation pass updates the section.

    "promoted" is sticky; otherwise "candidate" once the score reaches the candidate threshold
    (either score status above "none"), else "none" — a "suppressed" section is not kept suppressed.
    """
    if current_status == "promoted":
        return "promoted"
    return "candidate" if score_status in ("candidate", "promote_ready") else "none"


# The score alone lets a three-child section spin off: supporting records and time span saturate
# quickly on a dense city. A section needs at least this many linked children before it may become
# its own page: fewer children make a list that reads better inside its parent.
MIN_LINKED_PAGES_TO_PROMOTE = 10


def is_promotable(aggregation: SectionAggregation, score: PromotionScore) -> bool:
    """May this rollup section be promoted into its own page now?"""
    return (
        aggregation.promotion_status not in ("promoted", "suppressed")
        and score.status == "promote_ready"
        and len(aggregation.linked_page_ids) >= MIN_LINKED_PAGES_TO_PROMOTE
    )


def hubness_score(
    inbound_reference_links: int, promoted_children: int, avg_supporting_records: float | None
) -> int:
    """How much of a hub a page is.

    Inbound `reference` links + 2 × pages whose parent it is + floor(average supporting_record_count
    of its sections with aggregation / 10), a missing average counting as 0.
    """
    return (
        inbound_reference_links
        + 2 * promoted_children
        + math.floor((avg_supporting_records or 0) / HUBNESS_SUPPORT_DIVISOR)
    )


def membership_evidence(parent_title: str, child_title: str, child_summary: str | None) -> bool:
    """A child belongs under a hub only if the hub's place name shows in the child's own words.

    The hub's core name is its title before any comma ("Austin, Texas" -> "austin"); it must appear
    as whole words in the child's title or summary (accents and case folded), so an "Austin
    restaurants" rollup can never list a Toronto restaurant whatever the planner proposes.
    """
    core = normalize_alias(parent_title.split(",")[0])
    if not core:
        return False
    haystack = f" {normalize_alias(child_title)} {normalize_alias(child_summary or '')} "
    return f" {core} " in haystack
