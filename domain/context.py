"""What the planners see: the batch's memories, candidate pages and open mentions of one scope.

These models are built by the database activities and handed to a planner (the Claude one or the
scripted one) inside an activity; they never travel through workflow history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from domain.plan import PageType


class MemoryRecord(BaseModel):
    id: UUID
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime
    # A turn of a conversation (domain/conversation.py): who spoke (a name), with which role, where.
    speaker: str | None = None
    speaker_role: str | None = None
    conversation: str | None = None
    position: int | None = None
    # Everyone who speaks in the turn's conversation (the speaker among them): a turn is said to
    # them, so its "you" and "we" name them.
    participants: list[str] = Field(default_factory=list)


class CandidateSection(BaseModel):
    slug: str
    heading: str
    body_md: str


class CandidateFact(BaseModel):
    """A claim of the page: a line a new one may replace as the value of an attribute
    (`LineSources.supersedes`), or be replaced by (a memory that arrived late)."""

    text: str
    since: datetime | None = None  # when its latest interval began (its memory happened)
    until: datetime | None = None  # when a newer line replaced it (None: it holds now)


class CandidatePage(BaseModel):
    id: UUID
    type: PageType
    slug: str
    title: str
    summary: str | None = None
    aliases: list[str] = Field(default_factory=list)
    sections: list[CandidateSection] = Field(default_factory=list)
    inbound_links: int = 0
    facts: list[CandidateFact] = Field(default_factory=list)


class OpenMention(BaseModel):
    id: UUID
    alias: str
    alias_normalized: str
    mention_count: int
    suggested_type: PageType | None = None
    last_seen_at: datetime
    # Quoted contexts, newest first: {"quote": ..., "source_ref": ..., "seen_at": ...}
    sample_contexts: list[dict[str, Any]] = Field(default_factory=list)


class PlannerContext(BaseModel):
    tenant_id: str
    owner_id: str
    memories: list[MemoryRecord]
    candidate_pages: list[CandidatePage]
    open_mentions: list[OpenMention]
    # Set when a lint-triggered compile asks the planner to consider promoting these mentions.
    promotion_candidate_ids: list[UUID] = Field(default_factory=list)
    # The memories the open mentions' sample contexts cite (their held sightings): a page promoted
    # from a mention is written from, and cites, these as well as the batch's.
    held_memories: list[MemoryRecord] = Field(default_factory=list)


# What the aggregation planner sees: the run's changed pages and the suggested parent hubs.


def _plain_mapping(value: Any) -> Any:
    # Accept the stored aggregation as a pydantic model as well as a dict.
    return value.model_dump() if isinstance(value, BaseModel) else value


class AggregationSection(BaseModel):
    model_config = ConfigDict(extra="ignore", from_attributes=True)

    slug: str
    heading: str = ""
    body_md: str = ""
    # The section's stored aggregation metadata (linked_page_ids, supporting_record_count,
    # promotion_score, promotion_status, ...); None for leaf sections.
    aggregation: Annotated[dict[str, Any] | None, BeforeValidator(_plain_mapping)] = None


class AggregationPage(BaseModel):
    model_config = ConfigDict(extra="ignore", from_attributes=True)

    id: UUID | str
    type: str
    slug: str
    title: str
    summary: str | None = None
    parent_page_id: UUID | str | None = None
    hubness_score: int = 0
    tags: list[str] = Field(default_factory=list)
    sections: list[AggregationSection] = Field(default_factory=list)


class AggregationParentCandidate(BaseModel):
    """A hub suggested by the deterministic expanders (record metadata and page summaries)."""

    model_config = ConfigDict(extra="ignore", from_attributes=True)

    reason: str
    parent_title: str
    parent_slug: str
    suggested_section_slug: str
    supporting_count: int
    observed_tags: list[str] = Field(default_factory=list)
    # Record ids for record-derived candidates, page ids for summary-derived ones (source_kind).
    source_record_ids: list[str] = Field(default_factory=list)
    source_kind: str = "record"
