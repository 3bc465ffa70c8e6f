"""Planning a batch: one model call per part, split in halves when the model cannot plan it whole.

A part whose plan comes back truncated, or invalid or interrupted twice, is planned again as two
halves, in order, so the cursor still only moves forward; a single memory that cannot be planned is
skipped (the caller records it and moves the cursor past it). A bulk compile (bootstrap, rebuild)
with batch mode on sends its plan requests through Anthropic Message Batches at half the price and
waits for them; a request the batch cannot answer is planned interactively.

Mixed into CompileWorkflow (`self` is the workflow): the loop in workflows/compile.py and the
overlapped one in workflows/compile_overlap.py both plan through `_plan_parts`.
"""

from __future__ import annotations

from uuid import UUID

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.batches import MessageBatches
    from activities.planning import Planning
    from domain import errors
    from messages.compile import (
        BatchRef,
        CollectPlanInput,
        PlanBatchInput,
        PlanBatchResult,
    )
    from workflows.errors import failure_type, spent_tokens

from workflows.compile_state import CompileState


class _Unplannable(Exception):
    """A batch part the model cannot plan whole (truncated, or invalid or interrupted twice): split it."""


class BatchPlanning(CompileState):
    """The planning steps of CompileWorkflow (mixed into it: `self` is the workflow)."""

    async def _plan_parts(self, batch: BatchRef, start: int, end: int, batch_no: int, promotions: list[UUID],
                          after_plan: UUID | None = None) -> list[tuple[int, int, UUID | None]]:
        """Plan memories [start, end); on truncation or twice-invalid output split in halves, in order.
        `after_plan`: planned ahead, against the wiki as that resolved, unapplied plan leaves it."""
        try:
            plan_id = await self._plan(batch, start, end, batch_no, promotions, after_plan)
            return [(start, end, plan_id)]
        except _Unplannable:
            if end - start <= 1:
                return [(start, end, None)]
            middle = (start + end) // 2
            self._metrics.batch_splits += 1
            first = await self._plan_parts(batch, start, middle, batch_no, promotions, after_plan)
            return first + await self._plan_parts(batch, middle, end, batch_no, [], after_plan)

    async def _plan(self, batch: BatchRef, start: int, end: int, batch_no: int, promotions: list[UUID],
                    after_plan: UUID | None = None) -> UUID:
        memory_ids = batch.memory_ids[start:end]
        part = f"{start}-{end}"
        self._phase = "planning"
        for attempt in (1, 2):
            plan_id = workflow.uuid4()
            request = PlanBatchInput(
                scope=self._inp.scope, plan_id=plan_id, run_id=workflow.info().run_id, memory_ids=memory_ids,
                model_id=self._model_id, max_candidate_pages=self._inp.options.caps.max_candidate_pages,
                promotion_mention_ids=promotions, after_plan_id=after_plan,
                deterministic_linking_enabled=self._inp.options.deterministic_linking_enabled,
            )
            summary = f"plan batch {batch_no} ({len(memory_ids)} memories" + (
                f", part {part})" if end - start < len(batch.memory_ids) else ")")
            try:
                if self._batch_mode():
                    result = await self._plan_in_batch(request, summary)
                else:
                    result = await self._llm(Planning.plan_batch, request, summary)
            except ActivityError as error:
                kind = failure_type(error)
                if kind == errors.LLM_TRUNCATED:
                    self._metrics.truncations += 1
                    self._metrics.add_usage(spent_tokens(error))
                    raise _Unplannable() from error
                if kind in (errors.PLAN_INVALID, errors.LLM_INTERRUPTED):
                    if kind == errors.PLAN_INVALID:
                        self._metrics.invalid_plans += 1
                    else:
                        self._metrics.interrupted_calls += 1
                    self._metrics.add_usage(spent_tokens(error))
                    if attempt == 1:
                        self._metrics.llm_retries += 1
                        continue
                    raise _Unplannable() from error
                raise
            self._metrics.planner_calls += 1
            self._metrics.add_usage(result.usage)
            self._metrics.dropped_invalid_ids += result.dropped_invalid_links
            self._metrics.add_claim_gate(result)
            self._metrics.planner_input_chars += result.planner_input_chars
            self._merge_proposals[result.plan_id] = result.merge_proposals
            return result.plan_id
        raise _Unplannable()

    def _batch_mode(self) -> bool:
        """Whether leaf plans go through Message Batches: a bulk trigger (bootstrap, rebuild) with batch
        mode on."""
        return self._inp.trigger in self._inp.options.batch_triggers

    async def _plan_in_batch(self, request: PlanBatchInput, summary: str) -> PlanBatchResult:
        """Submit the plan request to a Message Batch, poll until the batch ends, collect the plan. A
        request the batch could not answer (errored, expired) is planned interactively instead."""
        submitted = self._pending_batch
        if submitted is None or submitted.custom_id != str(request.plan_id):
            submitted = await self._llm(MessageBatches.submit, request, f"{summary}: submit to a Message Batch")
            self._pending_batch = submitted
        await self._wait_for_message_batch(submitted.batch_id, f"{summary}: wait for Message Batch {submitted.batch_id}")
        try:
            result: PlanBatchResult = await self._llm(
                MessageBatches.collect,
                CollectPlanInput(scope=self._inp.scope, plan_id=request.plan_id, custom_id=submitted.custom_id),
                f"{summary}: collect from Message Batch {submitted.batch_id}")
        except ActivityError as error:
            if failure_type(error) != errors.BATCH_REQUEST_FAILED:
                raise
            result = await self._llm(Planning.plan_batch, request, f"{summary} (interactive: the batch failed it)")
        finally:
            self._pending_batch = None
        self._metrics.batched_planner_calls += 1
        return result
