"""A bulk compile's other model calls through Message Batches: section writes, aggregation plans
and the merge judge.

With batch mode on (a bootstrap import or a rebuild) the leaf plans go through Message Batches
(workflows/compile_planning.py); from release 0.2.0 (patch `batched_model_calls`) the compile's
other model calls do too, at half the price. Each such activity is asked `via_batch`; one whose call
went into a batch returns the batch's id instead of its result (activities/deferred_calls.py). The
workflow waits for that batch, once however many calls travel in it (the poll activity, retried at a
fixed interval as for a leaf plan), then runs the activity again, which reads its reply and finishes.
A run started before the patch keeps these calls interactive.

Mixed into CompileWorkflow (`self` is the workflow).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Protocol, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.batches import MessageBatches
    from messages.compile import PollBatchInput
    from workflows.policies import (
        MESSAGE_BATCH_POLL_ATTEMPT_TIMEOUT,
        MESSAGE_BATCH_POLL_BUDGET,
        message_batch_poll_retry,
    )

from workflows.compile_state import CompileState, ForgetPreempted


class MaybeBatched(Protocol):
    pending_batch_id: str | None


R = TypeVar("R", bound=MaybeBatched)


class BatchedModelCalls(CompileState):
    """Waiting for Message Batches (mixed into CompileWorkflow: `self` is the workflow)."""

    _batch_waits: dict[str, asyncio.Task[None]]  # batch id -> the one wait for it (set in `__init__`)

    def _calls_via_batch(self) -> bool:
        """Whether this compile's writer, aggregation and merge-judge calls go through Message Batches."""
        return self._batch_mode() and workflow.patched("batched_model_calls")

    async def _wait_for_message_batch(self, batch_id: str, summary: str) -> None:
        """Poll the batch until it has ended (retries of the poll add no history events).

        From release 0.2.0 (patch `forget_everywhere`) a forget does not wait for a batch, which may take
        a day: a forget arriving meanwhile stops the wait with `ForgetPreempted`, the batch in progress
        is dropped and its memories read again once the forget is served (workflows/compile_forget.py)."""
        preemptible = workflow.patched("forget_everywhere")
        if preemptible and self._forget_pending:
            raise ForgetPreempted()
        poll = workflow.start_activity(
            MessageBatches.poll, PollBatchInput(batch_id=batch_id),
            start_to_close_timeout=MESSAGE_BATCH_POLL_ATTEMPT_TIMEOUT, schedule_to_close_timeout=MESSAGE_BATCH_POLL_BUDGET,
            task_queue=self._inp.options.llm_task_queue,
            retry_policy=message_batch_poll_retry(timedelta(seconds=self._inp.options.batch_poll_seconds)),
            summary=summary,
        )
        if not preemptible:
            await poll
            return
        await workflow.wait_condition(lambda: poll.done() or self._forget_pending)
        if poll.done():
            await poll  # its outcome, a failure included
            return
        poll.cancel()
        with contextlib.suppress(asyncio.CancelledError, ActivityError):
            await poll
        raise ForgetPreempted()

    async def _answered(self, ask: Callable[[], Awaitable[R]]) -> R:
        """`ask()`'s result once its model call no longer waits in a Message Batch: each batch it names
        is waited for (one wait per batch, shared by every call in it), then it is asked again."""
        result = await ask()
        if result.pending_batch_id:
            self._metrics.batched_model_calls += 1
        while result.pending_batch_id:
            batch_id = result.pending_batch_id
            wait = self._batch_waits.get(batch_id)
            if wait is None:
                wait = asyncio.create_task(self._wait_for_message_batch(
                    batch_id, f"wait for Message Batch {batch_id} (writer, aggregation or merge-judge calls)"))
                self._batch_waits[batch_id] = wait
            await wait
            result = await ask()
        return result
