"""Deleting a scope's Message Batches at the provider when it forgets, and reading results whose batch
another scope's forget deleted.

A forget deletes every batch that carried a request of its scope and that the provider still holds
(`wiki_llm_batches`): a batch in progress is canceled first (the API deletes only ended batches: the
requests in progress finish, the others end `canceled`), then, once it has ended, deleted with its
results. A batch may carry other scopes' requests (the shared submitter): before deleting it, the
results of theirs not read yet are saved with their requests (`saved_outcome`), so those compiles
read them from Postgres and never notice; a request the cancel stopped reads as `canceled` and is
asked again interactively, as any request a batch could not answer.

Bedrock: the product sends no batch there (the SDK's Bedrock client has no Message Batches; Bedrock
batch inference is a separate S3 job API the product does not use), so there is nothing to delete.
"""

from __future__ import annotations

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.errors import BatchGone, BatchNotEnded
from messages.compile import Scope
from planners.claude_client import BatchOutcome, ModelClient
from store.llm_batches import (
    BatchRequestRow,
    batch_deleted,
    deleted_batches,
    load_request,
    mark_cancel_requested,
    mark_deleted,
    save_outcomes,
    unread_elsewhere,
)


class BatchErasure(BaseModel):
    """What became of one batch: `deleted` by this forget, `gone` (the provider held it no more),
    or `unreachable` (this worker has no Anthropic client to delete it with)."""

    batch_id: str
    status: str


async def erase_batches(engine: AsyncEngine, client: ModelClient | None, scope: Scope,
                        batch_ids: list[str]) -> list[BatchErasure]:
    """Cancel, then delete, each batch at the provider. Raises BatchNotEnded while one that was canceled
    is still canceling (the activity is retried until it has ended); a retry skips what is done."""
    if client is None or not client.supports_batches:
        return [BatchErasure(batch_id=b, status="unreachable") for b in batch_ids]
    async with engine.connect() as conn:
        done = await deleted_batches(conn, batch_ids)
    outcome = {b: BatchErasure(batch_id=b, status="deleted") for b in done}
    canceling: list[str] = []
    for batch_id in [b for b in batch_ids if b not in done]:
        try:
            state = await client.batch_state(batch_id)
            if not state.ended:
                if not state.canceling:
                    state = await client.cancel_batch(batch_id)
                async with engine.begin() as conn:
                    await mark_cancel_requested(conn, batch_id)
            if not state.ended:
                canceling.append(batch_id)
                continue
            await _keep_others_results(engine, client, scope, batch_id)
            found = await client.delete_batch(batch_id)
        except BatchGone:
            found = False
        async with engine.begin() as conn:
            await mark_deleted(conn, batch_id)
        outcome[batch_id] = BatchErasure(batch_id=batch_id, status="deleted" if found else "gone")
    if canceling:
        raise BatchNotEnded(f"{len(canceling)} canceled Message Batch(es) still canceling ({', '.join(canceling)}); "
                            "deleted once they have ended.")
    return [outcome[b] for b in batch_ids]


async def _keep_others_results(engine: AsyncEngine, client: ModelClient, scope: Scope, batch_id: str) -> None:
    """Save, with their requests, the results other scopes have not read yet from the batch."""
    async with engine.connect() as conn:
        unread = await unread_elsewhere(conn, batch_id, scope.tenant, scope.owner)
    if not unread:
        return
    results = {o.custom_id: o for o in await client.batch_results(batch_id)}
    kept = {custom_id: (results.get(custom_id) or BatchOutcome(custom_id=custom_id, error="missing from the results"))
            .model_dump_json() for custom_id in unread}
    async with engine.begin() as conn:
        await save_outcomes(conn, kept)


async def read_outcome(engine: AsyncEngine, client: ModelClient, scope: Scope,
                       row: BatchRequestRow) -> BatchOutcome | None:
    """A request's result: the one saved for it when another scope's forget deleted its batch, else the
    provider's (None: the results do not name it)."""
    if row.saved_outcome:
        return BatchOutcome.model_validate_json(row.saved_outcome)
    assert row.batch_id is not None
    try:
        outcomes = await client.batch_results(row.batch_id)
    except BatchGone:
        async with engine.connect() as conn:
            again = await load_request(conn, scope, row.custom_id)
        if again is not None and again.saved_outcome:
            return BatchOutcome.model_validate_json(again.saved_outcome)
        return BatchOutcome(custom_id=row.custom_id, error="deleted: the provider holds the batch no more")
    return next((o for o in outcomes if o.custom_id == row.custom_id), None)


async def batch_over(engine: AsyncEngine, client: ModelClient, batch_id: str) -> bool:
    """Whether a batch has ended; one a forget deleted at the provider has (its results were saved)."""
    try:
        return (await client.batch_state(batch_id)).ended
    except BatchGone:
        async with engine.connect() as conn:
            if await batch_deleted(conn, batch_id):
                return True
        raise
