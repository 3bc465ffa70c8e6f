"""The resolved plan: what the resolver decided, what the section writers read and apply writes.

A planner's plan names pages by slug and cites memories by id as the model wrote them; resolving it
against the scope's wiki decides which page each proposal lands on, which sections are written
directly and which need the section writer, and which mentions and links are recorded. It is stored
as JSON beside the staged plan and validated whenever it is read back.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class SectionTask(BaseModel):
    """One section the writer must merge: its current body and what the plan proposes for it."""

    page_id: str
    page_title: str
    page_type: str
    slug: str
    heading: str
    existing_body: str | None = None
    proposed_body: str
    source_refs: list[str] = Field(default_factory=list)
