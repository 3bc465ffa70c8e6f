"""What the planners see: the batch's memories, candidate pages and open mentions of one scope.

These models are built by the database activities and handed to a planner (the Claude one or the
scripted one) inside an activity; they never travel through workflow history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, Field

from domain.plan import PageType


class MemoryRecord(BaseModel):
    id: UUID
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class CandidateSection(BaseModel):
    slug: str
    heading: str
    body_md: str


class CandidatePage(BaseModel):
    id: UUID
    type: PageType
    slug: str
    title: str
    summary: str | None = None
    aliases: list[str] = Field(default_factory=list)
    sections: list[CandidateSection] = Field(default_factory=list)
    inbound_links: int = 0


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
