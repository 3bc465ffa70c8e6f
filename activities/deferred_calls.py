"""The other model calls of a bulk compile through Message Batches: the section writer, the
aggregation planner and the merge judge, at half the price, when the compile's leaf plans go there.

The activity runs as it always does up to its model call. There `DeferringClient.complete`, which
stands in for `ModelClient.complete`, looks the call up by a request id made from the activity's
plan and task:

- not sent yet: the request is stored and sent with every other pending request for the model (the
  shared submitter, activities/batch_submitter.py), and `CallDeferred` ends the activity, which returns the
  batch to wait for instead of a result;
- sent, its batch not ended: `CallDeferred` again;
- sent, its batch ended: the reply is read from the batch's results, as `complete` would have
  returned it and marked as batch-priced, and the activity carries on with it from there.

The workflow polls the batch and runs the activity again. Its second run builds the same prompt from
the same rows (the scope's compile, the only writer of its pages, is waiting); a prompt that changed
anyway, or a request the batch could not answer (errored, expired), is asked interactively, at list
price, so a deferred call never loses its answer.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any
from uuid import UUID

from sqlalchemy.ext.asyncio import AsyncEngine

from activities.batch_erasure import batch_over, read_outcome
from activities.batch_submitter import DeferredCall, send_with_pending
from messages.compile import Scope
from planners.claude_client import ModelClient, ModelReply, checked_reply
from planners.claude_planner import ClaudePlanner
from planners.port import Planner
from store.llm_batches import BatchRequestRow, delete_request, load_request, store_request

log = logging.getLogger(__name__)


class CallDeferred(Exception):
    """The call waits in a Message Batch: the activity reports `batch_id` and is run again once it ended."""

    def __init__(self, batch_id: str) -> None:
        super().__init__(f"the model call waits in Message Batch {batch_id}")
        self.batch_id = batch_id


def request_id(plan_id: UUID, call: str) -> str:
    """The batch request id of one model call of a plan (stable across retries; 36 characters, within
    the API's 64)."""
    return str(uuid.uuid5(plan_id, call))


class DeferringClient:
    """Answers one activity's model call from a Message Batch (see the module's docstring)."""

    def __init__(self, engine: AsyncEngine, client: ModelClient, window_seconds: float, scope: Scope,
                 plan_id: UUID, run_id: str, call: str, memory_ids: list[UUID]) -> None:
        """`memory_ids`: the memories whose text the prompt may show (a forget drops the request with them)."""
        self._engine = engine
        self._memory_ids = memory_ids
        self._client = client
        self._window = window_seconds
        self._scope = scope
        self._plan_id = plan_id
        self._run_id = run_id
        self._custom_id = request_id(plan_id, call)

    async def complete(self, *, model: str, system: str, user: str, max_tokens: int,
                       json_schema: dict[str, Any] | None = None) -> ModelReply:
        asked = DeferredCall(system=system, user=user, max_tokens=max_tokens, json_schema=json_schema)
        async with self._engine.connect() as conn:
            row = await load_request(conn, self._scope, self._custom_id)
        if row is None or row.batch_id is None:
            async with self._engine.begin() as conn:
                await store_request(conn, self._scope, BatchRequestRow(
                    custom_id=self._custom_id, batch_id=None, run_id=self._run_id, plan_id=self._plan_id,
                    model_id=model, memory_ids=self._memory_ids, call_json=asked.model_dump_json()))
            raise CallDeferred(await send_with_pending(self._engine, self._client, self._scope, model,
                                                       self._custom_id, self._window))
        if not await batch_over(self._engine, self._client, row.batch_id):
            raise CallDeferred(row.batch_id)
        outcome = await read_outcome(self._engine, self._client, self._scope, row)
        async with self._engine.begin() as conn:
            # Read: the stored prompt goes (a retry that finds no request asks again, in a new batch).
            await delete_request(conn, self._scope, self._custom_id)
        if json.loads(row.call_json) != asked.model_dump(mode="json"):
            log.warning("the batched request %s was asked with another prompt; asked again interactively",
                        self._custom_id)
        elif outcome is None or outcome.reply is None:
            log.warning("the batched request %s has no reply (%s); asked again interactively", self._custom_id,
                        outcome.error if outcome else "missing from the results")
        else:
            return checked_reply(outcome.reply, max_tokens)
        return await self._client.complete(model=model, system=system, user=user, max_tokens=max_tokens,
                                           json_schema=json_schema)


class DeferredCalls:
    """Builds, for an activity asked to send its model call through a Message Batch, the planner that
    does; any other planner (the scripted one, or Claude on Bedrock) answers as it always does."""

    def __init__(self, engine: AsyncEngine, window_seconds: float = 0.0) -> None:
        self._engine = engine
        self._window = window_seconds

    def planner(self, planner: Planner, scope: Scope, plan_id: UUID, run_id: str, call: str,
                memory_ids: list[UUID]) -> Planner:
        """`call` names the activity's call within its plan; `memory_ids`: the memories its prompt may show."""
        client = planner.client if isinstance(planner, ClaudePlanner) else None
        if not isinstance(planner, ClaudePlanner) or not isinstance(client, ModelClient) or not client.supports_batches:
            return planner
        return planner.answered_by(DeferringClient(self._engine, client, self._window, scope, plan_id,
                                                   run_id, call, memory_ids))
