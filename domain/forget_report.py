"""What a forget removes, as the dry run previews it and as the receipt records it: one shape for both.

The preview (`wiki memory forget --dry-run`) and the receipt (the ledger row `forget:<pass id>`) are
built by the same code from the same rules (store/forget_report.py), so for the same wiki they hold
the same fields with the same counts and the same ids. They differ in two ways only:

- `name`: the preview names each page, section, alias and mention it lists, so a person can judge it;
  the receipt keeps ids alone, since the names are the forgotten memories' text;
- what only the writer decides (`outcome`: how the re-derived lines came out, which sections and pages
  that left empty) and what the provider did (`provider_batches[].status`, `provider_erasure`) are
  known after the pass: the preview leaves them empty.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class Ref(BaseModel):
    """A row the forget touches, by id; `name` (the preview only) says which: "entity/slug · Heading"."""

    id: str
    name: str | None = None


class ProviderBatch(BaseModel):
    """A Message Batch at the provider that carried a request of the scope: deleted by the forget."""

    batch_id: str
    provider: str = "anthropic"
    # "to delete" (the preview, or a receipt whose provider step has not run yet); then "deleted",
    # "gone" (the provider held it no more) or "unreachable" (no Anthropic client on the worker).
    status: str = "to delete"


class RederiveOutcome(BaseModel):
    """What the writer's re-derived lines came to (the receipt only)."""

    lines_written: int = 0  # lines written in place of the re-derived ones
    sections_emptied: int = 0  # sections left without a line by the writer, removed
    pages_emptied: int = 0  # pages left without a section by the writer, removed
    marks_removed: int = 0  # supersession marks naming a claim the pass removed or rewrote
    decisions_removed: int = 0  # merge decisions about a page the writer emptied
    merge_records_changed: int = 0  # operator merge records of a page the writer emptied


ProviderErasure = Literal["none", "to do", "pending", "done"]


class ForgetReport(BaseModel):
    memory_ids: list[str] = Field(default_factory=list)  # the scope's own among those asked
    edited_memory_ids: list[str] = Field(default_factory=list)
    not_found: list[str] = Field(default_factory=list)
    claims_removed: int = 0  # lines resting only on forgotten memories (and every line of a removed page)
    claims_rederived: int = 0  # lines resting on a forgotten or edited memory and others: to the writer
    sections_rederived: list[Ref] = Field(default_factory=list)
    sections_removed: list[Ref] = Field(default_factory=list)
    pages_removed: list[Ref] = Field(default_factory=list)
    pages_demoted: list[Ref] = Field(default_factory=list)  # promoted from a mention, back to one
    aliases_removed: list[Ref] = Field(default_factory=list)
    sightings_removed: int = 0  # mention sightings of forgotten memories, however many samples showed
    mentions_removed: list[Ref] = Field(default_factory=list)  # left with no sighting
    mentions_recounted: list[Ref] = Field(default_factory=list)  # fewer sightings, or samples dropped
    summaries_recomputed: list[Ref] = Field(default_factory=list)  # pages whose summary held forgotten text
    links_removed: int = 0
    link_contexts_recomputed: int = 0
    rollups_affected: list[Ref] = Field(default_factory=list)  # re-derived by the aggregation pass
    decisions_removed: int = 0
    merge_records_changed: int = 0
    staged_rows_removed: int = 0  # staged plans (with their drafts) and rejected lines
    batch_requests_discarded: int = 0  # stored Message Batch requests of the scope, asked again if needed
    provider_batches: list[ProviderBatch] = Field(default_factory=list)
    # Known after the pass (a preview leaves them empty):
    outcome: RederiveOutcome | None = None
    cost_usd: float | None = None  # the writer calls that re-derived lines
    provider_erasure: ProviderErasure = "none"

    def receipt(self) -> ForgetReport:
        """The report without names (what a receipt may keep)."""
        def bare(refs: list[Ref]) -> list[Ref]:
            return [Ref(id=r.id) for r in refs]

        return self.model_copy(update={key: bare(getattr(self, key)) for key in _REF_FIELDS})

    def comparable(self) -> dict[str, Any]:
        """The fields a preview and its receipt must agree on (no names, nothing known only after)."""
        data = self.receipt().model_dump(mode="json", exclude={"outcome", "cost_usd", "provider_erasure", "not_found"})
        data["provider_batches"] = [b["batch_id"] for b in data["provider_batches"]]
        data["memory_ids"] = sorted(data["memory_ids"])  # a preview keeps the order they were asked in
        return data


_REF_FIELDS = [name for name, f in ForgetReport.model_fields.items() if f.annotation == list[Ref]]
