"""Forgetting between batches: the compile serves the scope's pending forget and edit requests.

A request (`wiki memory forget`, HTTP `DELETE /v1/memories/{id}`, MCP `forget`, or a retain that
changed a cited memory) is stored in Postgres and wakes the scope's compile with `forget` set. The
compile is the scope's lock, so the pass never races a batch: it runs where no batch is in flight
(before the next batch is read, or at the start of a pass), serves every pending request in one
pass, and the batches after it read only what is left. Steps: `forget.prepare` (claims the requests,
stores each affected section's new body or writer task), `llm.rederive_section` for each section
whose lines cite a touched memory and others (at most `section_writer_concurrency` at a time),
then `forget.apply` (one transaction with its receipt; a retry returns the receipt), then, when the
provider still holds Message Batches of the scope, `llm.erase_message_batches` cancels and deletes
them and says so on the receipt. A forget arriving while the compile waits for a Message Batch stops
that wait: the batch in progress is dropped (its requests are discarded by the pass and its batch
deleted at the provider) and read again after the forget. The surviving pages it changed, and the
hubs of those it removed, go to the run's aggregation pass.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from uuid import UUID

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.batches import MessageBatches
    from activities.forget import Forgetting
    from messages.forget import (
        EraseBatchesInput,
        ForgetApplied,
        ForgetPassInput,
        ForgetPrepared,
        RederiveInput,
        RederiveResult,
    )
    from workflows.policies import (
        MESSAGE_BATCH_POLL_BUDGET,
        MODEL_CALL_ATTEMPT_TIMEOUT,
        message_batch_poll_retry,
    )

from workflows.compile_state import CompileState


class ForgetBetweenBatches(CompileState):
    """The forget step of CompileWorkflow (mixed into it: `self` is the workflow)."""

    async def _forget_if_pending(self) -> None:
        """Serve the pending forget requests, if a wake-up said there are any."""
        if not self._forget_pending or not workflow.patched("forget"):
            return
        self._forget_pending = False
        # From 0.2.0 on (patch `forget_everywhere`), a forget also deletes the scope's Message Batches at
        # the provider, and it no longer waits for a batch in progress (workflows/compile_batched_calls.py).
        everywhere = workflow.patched("forget_everywhere")
        scope = self._inp.scope
        self._phase = "forgetting"
        self._details("forgetting memories: re-deriving the sections that cite them")
        pass_id = workflow.uuid4()
        prepared: ForgetPrepared = await self._db(
            Forgetting.prepare, ForgetPassInput(scope=scope, pass_id=pass_id),
            summary="forget: claim the pending requests and work out their blast radius", local=True)
        if not prepared.requests:
            return
        slots = asyncio.Semaphore(self._inp.options.caps.section_writer_concurrency)
        sections = prepared.rederive_section_ids

        async def rederive(index: int, section_id: str) -> RederiveResult:
            async with slots:
                return await self._llm_retrying_interruptions(
                    Forgetting.rederive_section,
                    RederiveInput(scope=scope, pass_id=pass_id, section_id=section_id, model_id=self._model_id),
                    f"forget: re-derive section {index + 1}/{len(sections)}")

        cost = 0.0
        for result in await asyncio.gather(*[rederive(i, s) for i, s in enumerate(sections)]):
            self._metrics.rederive_calls += 1
            self._metrics.add_usage(result.usage)
            cost += result.usage.cost_usd
        applied: ForgetApplied = await self._db(
            Forgetting.apply, ForgetPassInput(scope=scope, pass_id=pass_id, cost_usd=round(cost, 6)),
            summary="forget: apply the pass and write its receipt", local=True)
        self._metrics.forget_passes += 1
        self._metrics.memories_forgotten += applied.memories_forgotten
        self._metrics.memories_edited += applied.memories_edited
        for page_id in applied.touched_page_ids:
            if page_id in self._touched_pages:
                self._touched_pages.remove(page_id)
            self._touched_pages.append(page_id)
        if applied.touched_page_ids:
            self._aggregate_after_forget = True
        if everywhere and applied.provider_batch_ids:
            await self._erase_provider_batches(pass_id, applied.provider_batch_ids)

    async def _erase_provider_batches(self, pass_id: UUID, batch_ids: list[str]) -> None:
        """Delete the scope's batches at the provider (canceled first while in progress, which may take a
        while: the activity is retried at the poll interval until they have ended). A failure for good
        leaves them on the receipt as not deleted, for the scope's next forget; the compile goes on."""
        self._details(f"forgetting memories: deleting {len(batch_ids)} Message Batch(es) at the provider")
        try:
            await workflow.execute_activity_method(
                MessageBatches.erase, EraseBatchesInput(scope=self._inp.scope, pass_id=pass_id, batch_ids=batch_ids),
                start_to_close_timeout=MODEL_CALL_ATTEMPT_TIMEOUT, schedule_to_close_timeout=MESSAGE_BATCH_POLL_BUDGET,
                # Heartbeats: a worker dying mid-attempt is noticed in seconds, and another deletes them.
                heartbeat_timeout=timedelta(seconds=self._inp.options.heartbeat_timeout_seconds),
                task_queue=self._inp.options.llm_task_queue,
                retry_policy=message_batch_poll_retry(timedelta(seconds=self._inp.options.batch_poll_seconds)),
                summary=f"forget: delete {len(batch_ids)} Message Batch(es) of the scope at the provider")
        except ActivityError:
            self._metrics.provider_erasures_failed += 1
