"""The shared submitter of Message Batches: requests stored in Postgres, sent together.

Many scopes share a batch: a request is stored, its submit waits a short window
(`WIKI_LLM_BATCH_WINDOW_SECONDS`) for other requests to the same model, then one of the waiting
submits (the one that takes a per-model Postgres advisory lock) sends every pending request in one
Message Batch and records its id on each; the others find their request already sent. A request is a
leaf plan (planners.claude_planner.PlanCall, activities/batches.py) or another model call of a bulk
compile (`DeferredCall`, activities/deferred_calls.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine

from messages.compile import Scope
from planners.claude_client import BatchItem, ModelClient
from planners.claude_planner import PlanCall
from planners.prompts import PLANNER_REPLY_SCHEMA
from store.llm_batches import (
    BatchRequestRow,
    record_batch,
    request_batch,
    set_batch,
    take_submitter_lock,
    unsubmitted_requests,
)

# The API takes up to 100,000 requests (256 MB) per batch; a plan prompt is ~20-70 kB, so 2,000 stay
# well under the size limit.
MAX_REQUESTS_PER_BATCH = 2_000
LOCK_RETRY_SECONDS = 0.2


class DeferredCall(BaseModel):
    """A model call other than a leaf plan sent in a Message Batch (activities/deferred_calls.py): what
    `ModelClient.complete` was asked, stored whole so that the batch request can be built from it."""

    deferred: Literal[True] = True
    system: str
    user: str
    max_tokens: int
    json_schema: dict[str, Any] | None = None


def _item(row: BatchRequestRow) -> BatchItem:
    raw = json.loads(row.call_json)
    if raw.get("deferred") is True:
        deferred = DeferredCall.model_validate(raw)
        return BatchItem(custom_id=row.custom_id, model=row.model_id, system=deferred.system, user=deferred.user,
                         max_tokens=deferred.max_tokens, json_schema=deferred.json_schema)
    call = PlanCall.model_validate_json(row.call_json)
    return BatchItem(custom_id=row.custom_id, model=row.model_id, system=call.system, user=call.user,
                     max_tokens=call.max_tokens, json_schema=PLANNER_REPLY_SCHEMA)


async def send_with_pending(engine: AsyncEngine, client: ModelClient, scope: Scope, model_id: str,
                            custom_id: str, window_seconds: float) -> str:
    """The id of the Message Batch the stored request `custom_id` travels in, sending it first if need be.

    The shared submitter: wait the window so other requests for the same model (of this scope and
    others) join, then whichever waiting submit takes the model's lock first sends every pending
    request in one batch; the others find their request already in it."""
    if window_seconds > 0:
        await asyncio.sleep(window_seconds)
    while True:
        async with engine.begin() as conn:
            mine = await request_batch(conn, scope, custom_id)
            if mine:
                return mine
            if await take_submitter_lock(conn, model_id):
                rows = await unsubmitted_requests(conn, model_id, MAX_REQUESTS_PER_BATCH)
                if not rows:
                    continue  # sent by a submit that committed since our read: read ours again
                batch_id = await client.submit_batch([_item(row) for row in rows])
                await set_batch(conn, [row.custom_id for row in rows], batch_id)
                await record_batch(conn, batch_id, model_id, [row.custom_id for row in rows])
                if any(row.custom_id == custom_id for row in rows):
                    return batch_id
                continue  # more than a batch's worth was pending: ours goes in the next one
        # Another submit holds the lock and is sending a batch, ours most likely in it.
        await asyncio.sleep(LOCK_RETRY_SECONDS)
