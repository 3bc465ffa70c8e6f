"""Inputs and outputs of the forget step (docs/operations.md, "Forgetting a memory").

They travel through Temporal history, so they carry ids and counts only: which memories are
forgotten lives in `wiki_forget_requests`, their text never leaves Postgres, and the writer's new
lines are stored there too.
"""

from __future__ import annotations

from uuid import UUID

from pydantic import BaseModel, Field

from domain.pricing import TokenCounts
from messages.compile import Scope


class ForgetPassInput(BaseModel):
    scope: Scope
    pass_id: UUID  # one pass serves every request of the scope pending when it is prepared
    cost_usd: float = 0.0  # what the pass's writer calls cost, for its receipt (apply only)


class ForgetPrepared(BaseModel):
    pass_id: UUID
    requests: int = 0  # 0: nothing was pending, so there is nothing to do
    memories: int = 0
    # Sections whose lines citing a forgotten or edited memory and others go to the writer (by id).
    rederive_section_ids: list[str] = Field(default_factory=list)


class RederiveInput(BaseModel):
    scope: Scope
    pass_id: UUID
    section_id: str
    model_id: str


class RederiveResult(BaseModel):
    section_id: str
    usage: TokenCounts = Field(default_factory=TokenCounts)


class ForgetApplied(BaseModel):
    """What one pass did, as the receipt counts it (the receipt is the ledger row `forget:<pass id>`)."""

    pass_id: UUID
    memories_forgotten: int = 0
    memories_edited: int = 0
    claims_removed: int = 0
    claims_rederived: int = 0
    sections_rederived: int = 0
    sections_removed: int = 0
    pages_removed: int = 0
    pages_demoted: int = 0
    aliases_removed: int = 0
    sightings_removed: int = 0
    mentions_removed: int = 0
    staged_rows_removed: int = 0
    cost_usd: float = 0.0  # the writer calls that re-derived lines
    # Surviving pages the pass changed and the hubs of the pages it removed: the aggregation pass
    # re-derives their rollups and hub lists.
    touched_page_ids: list[UUID] = Field(default_factory=list)
    # Message Batches of the scope the provider still holds: deleted there by the pass's last step.
    provider_batch_ids: list[str] = Field(default_factory=list)


class EraseBatchesInput(BaseModel):
    scope: Scope
    pass_id: UUID  # whose receipt records what became of each batch
    batch_ids: list[str]


class EraseBatchesResult(BaseModel):
    deleted: int = 0  # deleted by the pass, or already gone at the provider
    unreachable: int = 0  # left: the worker has no Anthropic client to delete them with
