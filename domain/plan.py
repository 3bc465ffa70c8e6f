"""The planner's JSON contract (the shape the prompts in `planners.prompts` ask for), as pydantic models.

Field names are the wire keys of the contract exactly (it mixes camelCase and snake_case), so the
model validates the model's JSON as-is and serialises back to the same shape.

Validation here is structural only. Semantic guards (ids must be UUIDs of the scope, links must
resolve, citations must be in the batch) are enforced while the plan is resolved against the scope
and written (`store.plan_resolution`, `store.aggregation_resolution`, `store.plan_apply`, using the pure
checks of `domain.guards`), which drop and count instead of failing: one bad id must never sink a
batch.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

PageType = Literal["entity", "topic", "decision"]
PAGE_TYPES: tuple[str, ...] = ("entity", "topic", "decision")


def _none_to_empty_list(value: Any) -> Any:
    return [] if value is None else value


def _none_to_empty_dict(value: Any) -> Any:
    return {} if value is None else value


def _none_to_empty_str(value: Any) -> Any:
    return "" if value is None else value


StrList = Annotated[list[str], BeforeValidator(_none_to_empty_list)]
Text = Annotated[str, BeforeValidator(_none_to_empty_str)]


class _Contract(BaseModel):
    # The model sometimes adds keys of its own ("rationale" in odd places, "kind"); ignore them.
    model_config = ConfigDict(extra="ignore")


class LineSources(_Contract):
    """One proposed line and the memories it cites (a claim: see domain/claims.py). `status` is set by
    the verification gate before the plan is staged: "quoted", "derived", "verified" or "unverified"
    (a rejected line leaves the plan); apply decides the stored status again from the written line."""

    text: str
    refs: StrList = []
    status: Text = ""
    kind: Text = ""  # "derived": the gate recounted it from its memories (domain/claim_checks.py)
    # The cited memories the claim judge said support the line, each on its own / only together.
    judged_by: StrList = []
    judged_together: StrList = []
    # The lines this one replaces as the value of one attribute (where someone lives, a meeting's
    # time), by their text: the page's current claims or lines of this plan, each older than this
    # one by when their memories happened (apply refuses, and counts, a mark that is not), with the
    # planner's reason by replaced text. `superseded_by`: a page's claim (or a line of this plan)
    # that replaces this one, when this line's memory is the older (it arrived late). `unsure`:
    # lines this one may replace that the planner could not tell apart (both stay current; the lint
    # names the pair).
    supersedes: StrList = []
    superseded_by: StrList = []
    reasons: Annotated[dict[str, str], BeforeValidator(_none_to_empty_dict)] = {}
    unsure: StrList = []


LineSourceList = Annotated[list[LineSources], BeforeValidator(_none_to_empty_list)]


class SectionUpdate(_Contract):
    slug: str = Field(min_length=1)
    proposed_body_md: Text = ""
    source_refs: StrList = []
    # Per line of `proposed_body_md`, its own citations; a line not listed cites `source_refs`.
    line_sources: LineSourceList = []
    rationale: Text = ""
    # "add": proposed_body_md holds only new lines (facts) for the section, appended as they are
    # without a writer call; "rewrite": an existing line is wrong or superseded, so the writer merges.
    mode: Literal["add", "rewrite"] = "add"

    @field_validator("mode", mode="before")
    @classmethod
    def _unknown_mode_rewrites(cls, value: Any) -> Any:
        # When in doubt the writer merges: it can do what an append does, not the other way round.
        return value if value in ("add", "rewrite") else "rewrite"


class PageUpdate(_Contract):
    pageId: str = Field(min_length=1)
    sections: list[SectionUpdate]
    aliases: StrList = []


class NewSection(_Contract):
    slug: str = Field(min_length=1)
    heading: Text = ""
    body_md: Text = ""
    source_refs: StrList = []
    line_sources: LineSourceList = []


class NewPage(_Contract):
    type: PageType
    slug: str = Field(min_length=1)
    title: str = Field(min_length=1)
    summary: str | None = None
    aliases: StrList = []
    source_refs: StrList = []
    sections: list[NewSection]


class UnresolvedMention(_Contract):
    alias: str = Field(min_length=1)
    suggestedType: PageType | None = None
    context: Text = ""
    source_ref: str | None = None

    @field_validator("suggestedType", mode="before")
    @classmethod
    def _unknown_type_is_no_opinion(cls, value: Any) -> Any:
        # A mention's type is only a hint; an unknown hint is no hint, not a reason to fail.
        return value if value in PAGE_TYPES else None


class Promotion(_Contract):
    mentionId: str = Field(min_length=1)
    reason: Text = ""
    type: PageType
    title: str = Field(min_length=1)
    slug: Text = ""
    sections: Annotated[list[NewSection], BeforeValidator(_none_to_empty_list)] = []


class PageLink(_Contract):
    fromType: str
    fromSlug: str
    toType: str
    toSlug: str
    context: str | None = None


class LinkedPageRef(_Contract):
    type: str
    slug: str


class ParentSectionUpdate(_Contract):
    pageId: str = Field(min_length=1)
    sectionSlug: str = Field(min_length=1)
    heading: Text = ""
    proposed_body_md: Text = ""
    rationale: Text = ""
    linked_page_slugs: Annotated[list[LinkedPageRef], BeforeValidator(_none_to_empty_list)] = []
    source_refs: StrList = []
    observed_tags: StrList = []


class SectionPromotion(_Contract):
    pageId: str = Field(min_length=1)
    sectionSlug: str = Field(min_length=1)
    reason: Text = ""
    parentSummary: Text = ""
    topHighlights: StrList = []
    newPage: NewPage


class Plan(_Contract):
    """One planner answer. Every array may be empty; the four leaf arrays must be present."""

    pageUpdates: list[PageUpdate]
    newPages: list[NewPage]
    unresolvedMentions: list[UnresolvedMention]
    promotions: list[Promotion]
    pageLinks: Annotated[list[Any], BeforeValidator(_none_to_empty_list)] = []
    parentSectionUpdates: Annotated[list[ParentSectionUpdate], BeforeValidator(_none_to_empty_list)] = []
    sectionPromotions: Annotated[list[SectionPromotion], BeforeValidator(_none_to_empty_list)] = []

    _dropped_links: int = PrivateAttr(default=0)

    @property
    def dropped_links(self) -> int:
        """Links the model sent that the contract dropped (bad page type, blank slug, not an object)."""
        return self._dropped_links

    @model_validator(mode="wrap")
    @classmethod
    def _count_dropped_links(cls, data: Any, handler: Any) -> Plan:
        if isinstance(data, cls):
            return data  # already validated: its count stands (a Plan placed in another model)
        plan = handler(data)
        plan._dropped_links = max(count_raw_links(data) - len(plan.pageLinks), 0)
        return plan

    @field_validator("pageLinks", mode="after")
    @classmethod
    def _keep_well_formed_links(cls, links: list[Any]) -> list[Any]:
        # Invalid links (bad page types, blank slugs, non-objects) are dropped, not fatal: one bad link
        # must not sink the plan. `dropped_links` counts them for the ledger's dropped_invalid_ids.
        kept: list[Any] = []
        for raw in links:
            if isinstance(raw, PageLink):
                kept.append(raw)
                continue
            if not isinstance(raw, dict):
                continue
            try:
                link = PageLink.model_validate(raw)
            except Exception:
                continue
            if link.fromType in PAGE_TYPES and link.toType in PAGE_TYPES and link.fromSlug.strip() and link.toSlug.strip():
                kept.append(link)
        return kept

    def is_empty(self) -> bool:
        return not (
            self.pageUpdates
            or self.newPages
            or self.unresolvedMentions
            or self.promotions
            or self.pageLinks
            or self.parentSectionUpdates
            or self.sectionPromotions
        )


def count_raw_links(raw: Any) -> int:
    """How many link entries the model sent; `Plan.dropped_links` is this minus the links kept."""
    if isinstance(raw, dict) and isinstance(raw.get("pageLinks"), list):
        return len(raw["pageLinks"])
    return 0
