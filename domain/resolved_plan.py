"""The resolved plan: what the resolver decided, what the section writers read and apply writes.

A planner's plan names pages by slug and cites memories by id as the model wrote them; resolving it
against the scope's wiki decides which page each proposal lands on, which sections are written
directly and which need the section writer, and which mentions and links are recorded. It is stored
as JSON (`model_dump(mode="json")`) beside the staged plan and validated whenever it is read back.

The JSON keys are the field names (and the aliases of `IdLink`), unchanged from when the document
was a plain dict, so a plan resolved before an upgrade is still read after it; the section writer
reads `resolved -> 'tasks' -> <key>` straight from the JSONB column.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from domain.merge_questions import MergeRecord
from domain.plan import PageLink, PageType

# How apply writes a page: a new page; an existing page updated (its stored title and summary win);
# or an existing page a proposal under another name was merged into (its title and summary win too).
PageMode = Literal["create", "update", "merge"]


class _Resolved(BaseModel):
    # Keys this version does not know (the resolver's "resolve_result" stored beside the plan, keys an
    # older resolver wrote) are ignored, never fatal.
    model_config = ConfigDict(extra="ignore")


class SectionTask(_Resolved):
    """One section the writer must merge: its current body and what the plan proposes for it."""

    page_id: str
    page_title: str
    page_type: PageType
    slug: str
    heading: str
    existing_body: str | None = None
    proposed_body: str
    source_refs: list[str] = Field(default_factory=list)
    # Every proposal for the section only adds lines: appended without the model while the section
    # stays within its size budget (planners/section_edits.py).
    additive: bool = False


class DirectSection(_Resolved):
    """A section written as resolved, without the writer: a new section, a rollup list, a promoted
    section's pointer to its page."""

    slug: str
    heading: str
    body_md: str
    source_refs: list[str]
    # Counted as a rewrite (what the per-run cap counts), as a writer's draft is: rollups and
    # promoted parent sections replace a body the wiki already has.
    rewritten: bool = False
    # Only citations for a section that exists: its body (and heading) stay as stored. A proposal that
    # changes nothing still names the memories that informed the section.
    cite_only: bool = False
    # The citations are the section's whole provenance: any it had before and not now are removed
    # (a rollup cites exactly the memories of the pages it lists).
    replace_sources: bool = False


class WriterSection(_Resolved):
    """A section whose body is the section writer's draft for the task `task` of the plan's tasks."""

    slug: str
    task: str


def _section_kind(value: Any) -> str:
    if isinstance(value, WriterSection) or (isinstance(value, dict) and "task" in value):
        return "writer"
    return "direct"


PageSection = Annotated[
    Annotated[DirectSection, Tag("direct")] | Annotated[WriterSection, Tag("writer")],
    Discriminator(_section_kind),
]


class ResolvedPage(_Resolved):
    """One page apply upserts, with the aliases it adds and its sections in write order; every
    proposal that lands on the same page shares one entry."""

    page_id: str
    type: PageType
    slug: str
    title: str
    summary: str | None
    mode: PageMode
    keep_title: bool  # the stored title (and summary, when it has one) win over the proposal's
    # The stored title is replaced by `title` all the same: the same name, properly cased where the
    # stored one is not ("CONTRAMAR" -> "Contramar").
    retitle: bool = False
    aliases: list[str] = Field(default_factory=list)  # normalised
    sections: list[PageSection] = Field(default_factory=list)


class MentionSighting(_Resolved):
    """One sighting of a name with no page yet: counted on its alias's open unresolved-mention row."""

    alias: str
    alias_normalized: str
    suggested_type: PageType | None
    context: str
    source_ref: str | None  # the batch memory it was seen in, when the plan cited one


class MentionPromotion(_Resolved):
    """An open unresolved mention promoted to the page `page_id`."""

    mention_id: str
    alias_normalized: str
    page_id: str


class IdLink(_Resolved):
    """A `reference` link between two pages by id that the resolver decided on its own (a rollup
    parent to each of its children), beside the plan's links by slug."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)

    from_page_id: str = Field(alias="from")
    to_page_id: str = Field(alias="to")
    context: str


class HierarchyEdge(_Resolved):
    """A page set under a parent: parent_page_id on the child, mirrored as parent_of / child_of links."""

    parent_id: str
    child_id: str


class RollupAggregation(_Resolved):
    """A rollup section written by the aggregation pass: its aggregation metadata is merged and re-scored."""

    page_id: str
    section_slug: str
    linked_page_ids: list[str]
    child_tags: list[list[str]]  # the aliases of each linked page, for the coherence score
    observed_tags: list[str] | None = None  # None keeps the stored ones


class PromotedAggregation(_Resolved):
    """A rollup section promoted to its own page: its aggregation metadata is marked promoted."""

    page_id: str
    section_slug: str
    promoted_page_id: str


def _aggregation_kind(value: Any) -> str:
    if isinstance(value, PromotedAggregation) or (isinstance(value, dict) and "promoted_page_id" in value):
        return "promoted"
    return "rollup"


SectionAggregationUpdate = Annotated[
    Annotated[RollupAggregation, Tag("rollup")] | Annotated[PromotedAggregation, Tag("promoted")],
    Discriminator(_aggregation_kind),
]


class ProposedClaim(_Resolved):
    """A line the plan proposed, with the batch memories it cites and the gate's status for it."""

    refs: list[str] = Field(default_factory=list)
    status: str = ""
    kind: str = ""
    # The claim keys of the lines the plan said this one replaces (LineSources.supersedes), of those
    # that replace it (`superseded_by`), the planner's reason by replaced key, and the keys of lines
    # it may replace that the planner could not tell (`unsure`: kept both current, named by the lint).
    supersedes: list[str] = Field(default_factory=list)
    # The memories the claim judge said support the line, each on its own / only together.
    judged_by: list[str] = Field(default_factory=list)
    judged_together: list[str] = Field(default_factory=list)
    superseded_by: list[str] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict)
    unsure: list[str] = Field(default_factory=list)


class ResolvedPlan(_Resolved):
    """Everything apply writes for one plan, in the order it is written."""

    memory_ids: list[str]  # the batch (or, for aggregation, the run's memories)
    tasks: dict[str, SectionTask]  # by task key: the section writer's inputs
    pages: list[ResolvedPage]
    mentions: list[MentionSighting] = Field(default_factory=list)
    promotions: list[MentionPromotion] = Field(default_factory=list)  # mentions to mark promoted
    # The plan's links by (type, slug), each end redirected to the page its proposal landed on.
    links: list[PageLink] = Field(default_factory=list)
    # Aggregation only: links by id, parent edges, section aggregation metadata updates.
    id_links: list[IdLink] = Field(default_factory=list)
    hierarchy: list[HierarchyEdge] = Field(default_factory=list)
    aggregations: list[SectionAggregationUpdate] = Field(default_factory=list)
    # Every line the plan proposed, by its claim key (domain/claims.py), with its own citations:
    # apply gives each written line of a section the citations the plan gave it.
    line_claims: dict[str, ProposedClaim] = Field(default_factory=dict)
    # Every merge and judged pair met while resolving, kept on record by apply (store/merge_records.py).
    merge_records: list[MergeRecord] = Field(default_factory=list)
