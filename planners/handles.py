"""Short handles for the ids a leaf prompt shows: `m1…` memories, `p1…` candidate pages, `u1…` open
mentions.

A UUID costs a model about 20 tokens to read and as many to copy back, and a plan cites every memory
at least once; a handle costs one or two. The prompt names everything by handle, the model answers
by handle, and `Handles.resolve` maps the reply back to the ids before anything else sees it.

A handle the prompt never showed (a miscopy such as `m0`, an invented `p99`, an id written out in
full) is left exactly as the model wrote it: resolution then finds it is not an id of this batch or
scope and drops and counts it (`dropped_invalid_ids`), as it does any other bad reference. A miscopy
that lands on another handle of the same prompt cannot be told apart from a deliberate citation, just
as a UUID miscopied into another shown UUID could not; handles are numbered from 1 so the commonest
slip (a digit dropped or changed to 0) does not.
"""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID

from pydantic import BaseModel, Field

from domain.context import MemoryRecord
from domain.plan import NewPage, NewSection, Plan, SectionUpdate
from planners.derived_lines import memory_stub


class Handles(BaseModel):
    """Handle -> id (as text), for the memories, pages and mentions of one prompt."""

    memories: dict[str, str] = Field(default_factory=dict)
    pages: dict[str, str] = Field(default_factory=dict)
    mentions: dict[str, str] = Field(default_factory=dict)
    # What the compact reply contract derives from the prompt (planners/compact_plan.py): the line
    # `@m<n>` stands for, a held name's default quote (by m-handle), and each candidate page's
    # "type/slug" (by p-handle, for link ends).
    quotes: dict[str, str] = Field(default_factory=dict)
    held_quotes: dict[str, str] = Field(default_factory=dict)
    page_keys: dict[str, str] = Field(default_factory=dict)
    # `f1…`: the facts shown under the candidate pages (lines a new line may replace), by handle -> the
    # line's text, and each page's fact handles in the order shown (by page id).
    facts: dict[str, str] = Field(default_factory=dict)
    page_facts: dict[str, list[str]] = Field(default_factory=dict)
    # What a derived line (planners/derived_lines.py) is written from, by m-handle of the batch's
    # memories: when each happened (ISO 8601) and its place's address, if any.
    happened: dict[str, str] = Field(default_factory=dict)
    addresses: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def build(cls, memory_ids: Iterable[UUID | str], page_ids: Iterable[UUID | str],
              mention_ids: Iterable[UUID | str], sighting_refs: Iterable[str] = ()) -> Handles:
        """Handles in prompt order; sightings' records (earlier batches) continue the memories' numbering."""
        memories: dict[str, str] = {}
        for value in [*memory_ids, *sighting_refs]:
            text = str(value)
            if text and text not in memories.values():
                memories[f"m{len(memories) + 1}"] = text
        return cls(memories=memories,
                   pages={f"p{i}": str(v) for i, v in enumerate(page_ids, 1)},
                   mentions={f"u{i}": str(v) for i, v in enumerate(mention_ids, 1)})

    def derivable(self) -> dict[str, MemoryRecord]:
        """m-handle -> what a derived line reads of that memory of the batch."""
        return {handle: memory_stub(handle, happened, self.addresses.get(handle))
                for handle, happened in self.happened.items()}

    def _reverse(self, table: dict[str, str]) -> dict[str, str]:
        return {value.lower(): key for key, value in table.items()}

    def memory(self, memory_id: UUID | str) -> str:
        return self._reverse(self.memories).get(str(memory_id).lower(), str(memory_id))

    def page(self, page_id: UUID | str) -> str:
        return self._reverse(self.pages).get(str(page_id).lower(), str(page_id))

    def mention(self, mention_id: UUID | str) -> str:
        return self._reverse(self.mentions).get(str(mention_id).lower(), str(mention_id))

    def resolve(self, plan: Plan) -> tuple[Plan, int]:
        """The plan with every handle replaced by its id, and how many references were not handles of
        this prompt (left as written, for resolution to drop and count)."""
        unknown = 0

        def look(table: dict[str, str], value: str) -> str:
            nonlocal unknown
            found = table.get(value.strip().lower())
            if found is None:
                unknown += 1
                return value
            return found

        def refs(values: list[str]) -> list[str]:
            return [look(self.memories, value) for value in values]

        def cite(section: NewSection | SectionUpdate) -> None:
            """The section's memories, and each line's, by id."""
            section.source_refs = refs(section.source_refs)
            for line in section.line_sources:
                line.refs = [self.memories.get(value.strip().lower(), value) for value in line.refs]

        def new_page(page: NewPage) -> None:
            page.source_refs = refs(page.source_refs)
            for new_section in page.sections:
                cite(new_section)

        out = plan.model_copy(deep=True)
        for update in out.pageUpdates:
            update.pageId = look(self.pages, update.pageId)
            for section in update.sections:
                cite(section)
        for page in out.newPages:
            new_page(page)
        # An aggregation plan's parts (a leaf plan leaves them empty).
        for parent_update in out.parentSectionUpdates:
            parent_update.pageId = look(self.pages, parent_update.pageId)
            parent_update.source_refs = refs(parent_update.source_refs)
        for section_promotion in out.sectionPromotions:
            section_promotion.pageId = look(self.pages, section_promotion.pageId)
            new_page(section_promotion.newPage)
        for promotion in out.promotions:
            promotion.mentionId = look(self.mentions, promotion.mentionId)
            for new_section in promotion.sections:
                cite(new_section)
        for mention in out.unresolvedMentions:
            if mention.source_ref:
                mention.source_ref = look(self.memories, mention.source_ref)
        out._dropped_links = plan.dropped_links  # noqa: SLF001 - carried over from the parsed plan
        return out, unknown
