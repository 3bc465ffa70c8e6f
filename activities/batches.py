"""Leaf plans through Anthropic Message Batches: submit, poll, collect.

Batch mode halves the price of a plan call and gives up latency (a batch is answered within 24 hours,
usually within minutes). The workflow submits a plan request (stored in Postgres with the handles its
prompt showed, so any worker can read the reply later), keeps only the batch id, polls until the batch
has ended, then collects: the reply is parsed, priced at the batch price and staged exactly as
`llm.plan_batch` stages an interactive plan, through the verification gate (activities/claim_gate.py),
whose judge call, if any, is made there and then, interactively.

Many scopes share a batch (the shared submitter, activities/batch_submitter.py), and a bulk
compile's other model calls travel in the same batches (activities/deferred_calls.py). No extra
workflow is involved: the pending requests live in Postgres, so a submit that dies is replaced by its
retry, which joins the next batch.

Polling is an activity that fails with a retryable `BatchNotEnded` while the batch is processing;
the workflow retries it on a fixed interval (backoff coefficient 1), and retries of one activity add
no events to workflow history, however long the batch takes.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity

from activities.batch_erasure import batch_over, erase_batches, read_outcome
from activities.batch_submitter import send_with_pending
from activities.common import compile_step
from activities.planning import planner_context, staged
from domain.errors import (
    BatchNotEnded,
    BatchRequestFailed,
    ModelRejected,
    ModelTruncated,
    PlanInvalid,
    ScopeViolation,
)
from messages.compile import (
    CollectPlanInput,
    PlanBatchInput,
    PlanBatchResult,
    PollBatchInput,
    SubmittedPlan,
)
from messages.forget import EraseBatchesInput, EraseBatchesResult
from planners.claude_client import ModelClient, checked_reply
from planners.claude_planner import PlanCall, plan_call, plan_reply, priced_error
from planners.port import Planner
from store.forget_report import record_erasure
from store.llm_batches import BatchRequestRow, load_request, mark_collected, store_request


class MessageBatches:
    def __init__(self, engine: AsyncEngine, client: ModelClient | None, window_seconds: float = 0.0,
                 judge: Planner | None = None) -> None:
        """`window_seconds`: how long a submit waits for other scopes' requests before the batch is sent;
        `judge`: the claim judge of the verification gate a collected plan passes (None: the
        deterministic check only)."""
        self._engine = engine
        self._client = client
        self._window = window_seconds
        self._judge = judge

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
        batch_id = await send_with_pending(self._engine, client, request.scope, request.model_id, custom_id,
                                           self._window)
        return SubmittedPlan(batch_id=batch_id, custom_id=custom_id)

    @activity.defn(name="llm.poll_message_batch")
    @compile_step
    async def poll(self, request: PollBatchInput) -> None:
        if not await batch_over(self._engine, self._batch_client(), request.batch_id):
            raise BatchNotEnded(f"Message Batch {request.batch_id} is still processing; polled again shortly.")

    @activity.defn(name="llm.collect_plan_batch")
    @compile_step
    async def collect(self, request: CollectPlanInput) -> PlanBatchResult:
        client = self._batch_client()
        async with self._engine.connect() as conn:
            row = await load_request(conn, request.scope, request.custom_id)
        if row is None or row.batch_id is None or row.plan_id != request.plan_id:
            raise ScopeViolation(f"No submitted plan request {request.custom_id} in this scope.")
        outcome = await read_outcome(self._engine, client, request.scope, row)
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
        # The gate as for an interactive plan; its judge call is interactive (list price): the plan it
        # judges exists only now, and a second Message Batch would add a batch's wait to every plan.
        result = await staged(self._engine, request.scope, row.plan_id, row.run_id, row.memory_ids, reply,
                              self._judge, row.model_id)
        async with self._engine.begin() as conn:
            await mark_collected(conn, row.custom_id)
        return result

    @activity.defn(name="llm.erase_message_batches")
    @compile_step
    async def erase(self, request: EraseBatchesInput) -> EraseBatchesResult:
        """A forget's last step: its scope's batches deleted at the provider (activities/batch_erasure.py),
        and the receipt saying so. Fails with the retryable BatchNotEnded while a canceled batch ends."""
        erased = await erase_batches(self._engine, self._client, request.scope, request.batch_ids)
        async with self._engine.begin() as conn:
            await record_erasure(conn, request.scope.tenant, request.scope.owner, request.pass_id,
                                 [(e.batch_id, e.status) for e in erased])
        return EraseBatchesResult(deleted=sum(1 for e in erased if e.status in ("deleted", "gone")),
                                  unreachable=sum(1 for e in erased if e.status == "unreachable"))
