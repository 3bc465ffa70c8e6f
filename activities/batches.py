"""Leaf plans through Anthropic Message Batches: submit, poll, collect.

Batch mode halves the price of a plan call and gives up latency (a batch is answered within 24 hours,
usually within minutes). The workflow submits a plan request (stored in Postgres with the handles its
prompt showed, so any worker can read the reply later), keeps only the batch id, polls until the batch
has ended, then collects: the reply is parsed, priced at the batch price and staged exactly as
`llm.plan_batch` stages an interactive plan.

Polling is an activity that fails with a retryable `BatchNotEnded` while the batch is processing;
the workflow retries it on a fixed interval (backoff coefficient 1), and retries of one activity add
no events to workflow history, however long the batch takes.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity

from activities.common import compile_step
from activities.planning import planner_context, staged
from domain.compile_messages import (
    CollectPlanInput,
    PlanBatchInput,
    PlanBatchResult,
    PollBatchInput,
    SubmittedPlan,
)
from domain.errors import (
    BatchNotEnded,
    BatchRequestFailed,
    ModelRejected,
    ModelTruncated,
    PlanInvalid,
    ScopeViolation,
)
from planners.claude_client import BatchItem, ModelClient, checked_reply
from planners.claude_planner import PlanCall, plan_call, plan_reply, priced_error
from planners.prompts import PLANNER_REPLY_SCHEMA
from store.llm_batches import BatchRequestRow, load_request, mark_collected, set_batch, store_request


class MessageBatches:
    def __init__(self, engine: AsyncEngine, client: ModelClient | None) -> None:
        self._engine = engine
        self._client = client

    def _batch_client(self) -> ModelClient:
        if self._client is None or not self._client.supports_batches:
            raise ModelRejected("Message Batches need WIKI_LLM=anthropic: this worker's model has none.")
        return self._client

    @activity.defn(name="llm.submit_plan_batch")
    @compile_step
    async def submit(self, request: PlanBatchInput) -> SubmittedPlan:
        client = self._batch_client()
        custom_id = str(request.plan_id)
        async with self._engine.connect() as conn:
            earlier = await load_request(conn, request.scope, custom_id)
        if earlier is not None and earlier.batch_id:
            # A retried submit whose batch was created: submitting again would pay for the plan twice.
            return SubmittedPlan(batch_id=earlier.batch_id, custom_id=custom_id)
        context = await planner_context(self._engine, request)
        call = plan_call(context)
        async with self._engine.begin() as conn:
            await store_request(conn, request.scope, BatchRequestRow(
                custom_id=custom_id, batch_id=None, run_id=request.run_id, plan_id=request.plan_id,
                model_id=request.model_id, memory_ids=request.memory_ids, call_json=call.model_dump_json()))
        batch_id = await client.submit_batch([BatchItem(
            custom_id=custom_id, model=request.model_id, system=call.system, user=call.user,
            max_tokens=call.max_tokens, json_schema=PLANNER_REPLY_SCHEMA)])
        async with self._engine.begin() as conn:
            await set_batch(conn, [custom_id], batch_id)
        return SubmittedPlan(batch_id=batch_id, custom_id=custom_id)

    @activity.defn(name="llm.poll_message_batch")
    @compile_step
    async def poll(self, request: PollBatchInput) -> None:
        state = await self._batch_client().batch_state(request.batch_id)
        if not state.ended:
            raise BatchNotEnded(f"Message Batch {request.batch_id} is still processing "
                                f"({state.processing} requests); polled again shortly.")

    @activity.defn(name="llm.collect_plan_batch")
    @compile_step
    async def collect(self, request: CollectPlanInput) -> PlanBatchResult:
        client = self._batch_client()
        async with self._engine.connect() as conn:
            row = await load_request(conn, request.scope, request.custom_id)
        if row is None or row.batch_id is None or row.plan_id != request.plan_id:
            raise ScopeViolation(f"No submitted plan request {request.custom_id} in this scope.")
        outcome = next((o for o in await client.batch_results(row.batch_id) if o.custom_id == row.custom_id), None)
        if outcome is None or outcome.reply is None:
            detail = outcome.error if outcome else "missing from the results"
            raise BatchRequestFailed(f"The batched plan request {row.custom_id} has no reply ({detail}); "
                                     "it is asked again interactively.")
        call = PlanCall.model_validate_json(row.call_json)
        try:
            usable = checked_reply(outcome.reply, call.max_tokens)
        except (ModelTruncated, PlanInvalid) as error:
            raise priced_error(error, row.model_id, batch=True) from None
        reply = plan_reply(call, usable, row.model_id, batch=True)  # an invalid plan's error is priced there
        result = await staged(self._engine, request.scope, row.plan_id, row.run_id, row.memory_ids, reply)
        async with self._engine.begin() as conn:
            await mark_collected(conn, row.custom_id)
        return result
