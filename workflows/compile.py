"""CompileWorkflow: one per (tenant, owner), id `compile_workflow_id(tenant, owner)` — the id is the lock.

Life: retain signal-with-starts it (`wake`); it debounces a burst, then loops over batches of
memories after the scope's cursor: plan -> resolve against the database -> write meaningful
sections concurrently -> apply everything and advance the cursor in one transaction. It ends when
the cursor is drained and no wake-up is pending, and continues as new when a per-run cap is hit or
Temporal suggests it, carrying only unserved wake-ups (the cursor lives in Postgres).

Only orchestration lives here; every decision about content is made in activities and `domain`.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any, TypeVar
from uuid import UUID

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributePair
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.types import MethodAsyncSingleParam

with workflow.unsafe.imports_passed_through():
    from activities.aggregation import Aggregation
    from activities.compile_steps import CompileSteps
    from activities.planning import Planning
    from domain import errors
    from domain.aggregation import MAX_AGGREGATION_PAGES
    from messages.compile import (
        WIKI_RUN_ATTRIBUTE,
        AggregationApplyInput,
        AggregationApplyResult,
        AggregationPlanInput,
        AggregationPlanResult,
        AggregationResolveResult,
        ApplyBatchInput,
        ApplyBatchResult,
        BatchRef,
        CompileInput,
        CursorPosition,
        FinishRunInput,
        JudgeMergesInput,
        JudgeMergesResult,
        NextBatchInput,
        Progress,
        ResolvePlanInput,
        ResolvePlanResult,
        RunRecord,
        SubmittedPlan,
        WakeUp,
        WriteSectionInput,
        WriteSectionResult,
        run_summary,
    )
    from messages.run_metrics import RunMetrics
    from workflows.errors import compile_failure, failure_type, one_sentence, spent_tokens
    from workflows.policies import (
        DATABASE_STEP_RETRY,
        DATABASE_STEP_TIMEOUT,
        MODEL_CALL_ATTEMPT_TIMEOUT,
        MODEL_CALL_INTERRUPTED_ATTEMPTS,
        MODEL_CALL_RETRY,
    )

from workflows.compile_batched_calls import BatchedModelCalls
from workflows.compile_forget import ForgetBetweenBatches
from workflows.compile_overlap import OverlappedBatches
from workflows.compile_progress import ImportProgress
from workflows.compile_state import ForgetPreempted

T = TypeVar("T")

# Only a retain waits for a quiet period; any other wake-up is someone asking for the compile now.
_PATIENT_TRIGGERS = ("memory_retain",)
WIKI_RUN = SearchAttributeKey.for_int(WIKI_RUN_ATTRIBUTE)


@workflow.defn(name="CompileWorkflow")
class CompileWorkflow(OverlappedBatches, ForgetBetweenBatches, BatchedModelCalls, ImportProgress):
    @workflow.init
    def __init__(self, inp: CompileInput) -> None:
        self._inp = inp
        self._pending = inp.carried_wakeups
        self._wake_seq = 0
        self._urgent_wake = False  # an admin, bootstrap, lint, resume or rebuild wake-up is pending
        self._debounce_until: datetime | None = None
        self._promotions: list[UUID] = list(inp.promotion_mention_ids)
        self._model_id = inp.options.model_id
        self._phase = "starting"
        self._cursor = CursorPosition()
        self._batches_done = 0
        self._run_started_at = workflow.now()
        self._run_cursor_from: CursorPosition | None = None
        self._touched_pages: list[UUID] = []  # pages this run wrote, least recently touched first
        # The Message Batch a plan request is waiting in: (batch id, custom id, plan id). Kept in state and
        # carried across continue-as-new, so a restarted worker or the next run collects it, never resubmits.
        self._pending_batch: SubmittedPlan | None = inp.pending_batch
        self._merge_proposals: dict[UUID, int | None] = {}  # plan id -> new pages and promotions it proposes
        self._metrics = RunMetrics(
            deterministic_linking_flag_suppressed=not inp.options.deterministic_linking_enabled)
        self._forget_pending = inp.forget_pending  # a forget request waits (workflows/compile_forget.py)
        self._aggregate_after_forget = False  # a forget changed pages: the aggregation pass runs for them
        self._batch_waits = {}  # Message Batch id -> the one wait for it (workflows/compile_batched_calls.py)
        self._init_progress()  # memories compiled of the total, the section-write window (compile_progress.py)

    # ------------------------------------------------------------------ messages

    @workflow.signal
    def wake(self, wake: WakeUp) -> None:
        self._pending += 1
        self._wake_seq += 1
        if wake.trigger not in _PATIENT_TRIGGERS:
            self._urgent_wake = True
        if wake.model_id:
            self._model_id = wake.model_id
        for mention_id in wake.promotion_mention_ids:
            if mention_id not in self._promotions:
                self._promotions.append(mention_id)
        if wake.forget:
            self._forget_pending = True

    @workflow.query
    def progress(self) -> Progress:
        caps = self._inp.options.caps
        return Progress(
            scope=self._inp.scope,
            run_no=self._inp.run_no,
            trigger=self._inp.trigger,
            phase=self._phase,
            cursor=self._cursor.label(),
            batches_done=self._batches_done,
            records_read=self._metrics.records_read,
            pending_wakeups=self._pending,
            caps=caps,
            pages_created=self._metrics.pages_created,
            sections_rewritten=self._metrics.sections_rewritten,
            input_tokens=self._metrics.input_tokens,
            output_tokens=self._metrics.output_tokens,
            cost_usd=self._metrics.cost_usd,
            debounce_until=self._debounce_until,
            **self._progress_fields(),
        )

    def _details(self, now: str) -> None:
        """The UI's current details: which run this is (continued runs have no summary of their own:
        continue-as-new cannot set one), then what it is doing or how it ended."""
        summary = run_summary(self._inp.scope, self._inp.run_no, self._inp.trigger)
        workflow.set_current_details(f"{summary}\n{now}")

    # ------------------------------------------------------------------ main loop

    @workflow.run
    async def run(self, inp: CompileInput) -> dict:
        info = workflow.info()
        run = RunRecord(scope=inp.scope, workflow_id=info.workflow_id, run_id=info.run_id,
                        trigger=inp.trigger, model_id=self._model_id)
        self._details("starting")
        await self._db(CompileSteps.start_run, run, summary=f"ledger: run {inp.run_no} ({inp.trigger})")
        try:
            while True:
                await self._debounce()
                self._pending = 0
                self._urgent_wake = False
                await self._forget_if_pending()
                cap = await self._compile_until_drained_or_cap()
                if cap is not None:
                    await self._aggregate()
                    await self._continue_as_new(cap)
                if self._pending == 0:
                    break
                # Wake-ups arrived while compiling: another pass before finishing.
            await self._aggregate()
            await self._finish("succeeded")
            if self._pending:
                # Woken during the aggregation pass or the ledger write: those memories are not compiled
                # yet and completing would drop the wake-up, so a next run serves it.
                await workflow.wait_condition(workflow.all_handlers_finished)
                self._details(f"{self._ending('succeeded')}; woken meanwhile: run {self._inp.run_no + 1} "
                              "compiles what arrived")
                self._continue(self._next_run_input(carried_wakeups=self._pending))
            return self._metrics.as_ledger()
        except (ActivityError, ApplicationError) as error:
            # A step that failed for good: a regular activity's ActivityError, or the bare ApplicationError
            # a local activity fails with (the run's own code raises none).
            message = compile_failure(error, self._inp.options.llm_retry_budget_seconds)
            self._metrics.error = message
            await self._finish("failed", message)
            raise ApplicationError(message, type="CompileFailed", non_retryable=True) from error

    async def _debounce(self) -> None:
        """Wait until no retain arrived for `debounce_seconds`; any other wake-up ends the wait at once."""
        quiet = self._inp.options.debounce_seconds
        if quiet <= 0 or self._inp.trigger != "memory_retain" or self._urgent_wake:
            return
        self._phase = "debouncing"
        try:
            while True:
                seen = self._wake_seq
                self._debounce_until = workflow.now() + timedelta(seconds=quiet)
                self._details(f"waiting for a quiet period: compiles at {self._debounce_until:%H:%M:%S} UTC "
                              "unless more memories arrive first")
                def woken(seen: int = seen) -> bool:
                    return self._wake_seq != seen

                try:
                    await workflow.wait_condition(woken,
                                                  timeout=timedelta(seconds=quiet), timeout_summary="debounce")
                except TimeoutError:
                    return
                if self._urgent_wake:
                    return
        finally:
            self._debounce_until = None

    async def _compile_until_drained_or_cap(self) -> str | None:
        """Batches until the cursor is drained (None) or a cap is hit (its name)."""
        if self._inp.options.overlap_planning and not self._batch_mode():
            return await self._compile_overlapped()
        caps = self._inp.options.caps
        record_cap = caps.max_records
        while True:
            await self._forget_if_pending()  # between batches, never during one
            limit = min(caps.page_size, record_cap - self._metrics.records_read)
            self._phase = "reading"
            batch: BatchRef = await self._db(
                CompileSteps.next_batch, NextBatchInput(scope=self._inp.scope, limit=limit),
                summary=f"read batch {self._batches_done + 1} (up to {limit} memories)", local=True,
            )
            self._cursor = batch.cursor_from
            self._note_batch(batch, at_cursor=True)
            if self._run_cursor_from is None:
                self._run_cursor_from = batch.cursor_from
            promotions = list(self._promotions)
            if not batch.memory_ids and not promotions:
                return None
            try:
                await self._compile_batch(batch, promotions)
            except ForgetPreempted:
                # A forget stopped the wait for a Message Batch: it is served at the top of the loop, then
                # what is left of this batch is read again from the cursor.
                self._batch_waits.clear()
                continue
            self._promotions = [m for m in self._promotions if m not in promotions]
            self._batches_done += 1
            self._metrics.batches = self._batches_done
            if len(batch.memory_ids) < limit:
                return None  # nothing left to read: a cap would only start an empty next run
            cap = self._cap_hit()
            if cap is not None:
                return cap

    def _cap_hit(self) -> str | None:
        """The cap a run that has not drained the cursor has reached, if any."""
        caps = self._inp.options.caps
        if self._metrics.pages_created >= caps.max_new_pages:
            return "max_new_pages"
        if self._metrics.sections_rewritten >= caps.max_sections_rewritten:
            return "max_sections_rewritten"
        if self._metrics.records_read >= caps.max_records:
            return "max_records"
        if workflow.info().is_continue_as_new_suggested():
            return "history_size"
        return None

    async def _compile_batch(self, batch: BatchRef, promotions: list[UUID]) -> None:
        batch_no = self._batches_done + 1
        count = len(batch.memory_ids)
        self._details(f"batch {batch_no}: {count} memories from cursor {batch.cursor_from.label()}")
        cursor = batch.cursor_from
        for start, end, plan in await self._plan_parts(batch, 0, count, batch_no, promotions):
            cursor_next = batch.positions[end - 1] if end > start else cursor
            if plan is None:
                # A single memory the model cannot plan: skip it, record it, move the cursor past it.
                self._metrics.skipped_memories.append(str(batch.memory_ids[start]))
                await self._apply(batch_no, None, cursor, cursor_next)
            else:
                await self._resolve_write_apply(batch_no, plan, cursor, cursor_next)
            cursor = cursor_next
            self._cursor = cursor
            self._metrics.records_read += end - start  # per part: a forget may stop the batch after one

    async def _resolve_write_apply(self, batch_no: int, plan_id: UUID, cursor: CursorPosition,
                                   cursor_next: CursorPosition) -> None:
        resolved = await self._judge_and_resolve(batch_no, plan_id)
        await self._write_sections(plan_id, resolved.section_tasks, f"batch {batch_no}")
        await self._apply(batch_no, plan_id, cursor, cursor_next)

    async def _judge_and_resolve(self, batch_no: int, plan_id: UUID) -> ResolvePlanResult:
        if self._merge_proposals.pop(plan_id, None) != 0:
            await self._judge_merges(batch_no, plan_id)
        self._phase = "resolving"
        resolved: ResolvePlanResult = await self._db(
            CompileSteps.resolve_plan, ResolvePlanInput(scope=self._inp.scope, plan_id=plan_id),
            summary=f"resolve batch {batch_no} against the wiki", local=True,
        )
        self._metrics.add_resolution(resolved)
        return resolved

    async def _judge_merges(self, batch_no: int, plan_id: UUID) -> None:
        """The model's decision on the plan's ambiguous merges, stored for the resolver (a model call,
        so a regular activity: the resolver is a local one). Its failure costs only those merges."""
        self._phase = "judging merges"
        via_batch = self._calls_via_batch()
        try:
            judged: JudgeMergesResult = await self._answered(lambda: self._llm(
                Planning.judge_merges,
                JudgeMergesInput(scope=self._inp.scope, plan_id=plan_id, model_id=self._model_id, via_batch=via_batch),
                f"judge the ambiguous merges of batch {batch_no}"))
        except ActivityError as error:
            # No decisions: the resolver merges no ambiguous pair of this batch, which is always safe.
            self._metrics.merge_judge_failures += 1
            self._metrics.add_usage(spent_tokens(error))
            return
        self._metrics.merge_questions += judged.questions
        self._metrics.merge_judge_calls += 1 if judged.questions else 0
        self._metrics.add_usage(judged.usage)

    async def _write_sections(self, plan_id: UUID, tasks: list[str], label: str) -> None:
        """The section writer for each task, at most the run's window at a time (`_section_write_window`)."""
        if not tasks:
            return
        self._phase = "writing sections"

        # A sliding window: the next write starts as soon as any finishes (fixed groups would wait for
        # their slowest member, which made the model's critical path ~1.7x longer).
        slots = asyncio.Semaphore(await self._section_write_window())
        via_batch = self._calls_via_batch()

        async def write(index: int, key: str) -> WriteSectionResult:
            async def ask() -> WriteSectionResult:
                async with slots:  # held for the activity only, never while its Message Batch is waited for
                    return await self._llm_retrying_interruptions(
                        Planning.write_section,
                        WriteSectionInput(scope=self._inp.scope, plan_id=plan_id, task_key=key,
                                          model_id=self._model_id, via_batch=via_batch),
                        f"write section {index + 1}/{len(tasks)} of {label}",
                    )
            return await self._answered(ask)

        writes = [asyncio.ensure_future(write(i, key)) for i, key in enumerate(tasks)]
        try:
            results = await asyncio.gather(*writes)
        except ForgetPreempted:
            for other in writes:  # none of them goes on past the forget
                other.cancel()
            await asyncio.gather(*writes, return_exceptions=True)
            raise
        for result in results:
            self._metrics.section_writer_calls += 1
            self._metrics.add_usage(result.usage)

    async def _apply(self, batch_no: int, plan_id: UUID | None, cursor: CursorPosition,
                     cursor_next: CursorPosition) -> None:
        self._phase = "applying"
        result: ApplyBatchResult = await self._db(
            CompileSteps.apply_batch,
            ApplyBatchInput(scope=self._inp.scope, plan_id=plan_id, cursor_expected=cursor, cursor_next=cursor_next,
                            deterministic_linking_enabled=self._inp.options.deterministic_linking_enabled),
            summary=f"apply batch {batch_no} and advance the cursor", local=True,
        )
        self._metrics.add_apply(result)
        for page_id in result.touched_page_ids:
            if page_id in self._touched_pages:
                self._touched_pages.remove(page_id)
            self._touched_pages.append(page_id)

    # ------------------------------------------------------------------ aggregation pass

    async def _aggregate(self) -> None:
        """Hubs, rollups and section promotion over what this run changed: plan, resolve, write, apply.

        Runs after the leaf batches of every run that read a memory. A failure is recorded in the
        ledger (`aggregation_error`) and never undoes the leaf work, which is already committed. A
        forget arriving while it waits for a Message Batch is served, then the pass starts again.
        """
        if (self._metrics.records_read == 0 and not self._aggregate_after_forget) \
                or not self._inp.options.aggregation_enabled:
            return
        while True:
            try:
                await self._aggregate_once()
                return
            except ForgetPreempted:
                self._batch_waits.clear()
                await self._forget_if_pending()

    async def _aggregate_once(self) -> None:
        self._phase = "aggregating"
        self._details("aggregation pass: hubs, rollups, section promotion")
        scope = self._inp.scope
        try:
            request = AggregationPlanInput(
                scope=scope, plan_id=workflow.uuid4(), run_id=workflow.info().run_id, model_id=self._model_id,
                cursor_from=self._run_cursor_from or CursorPosition(),
                record_count=self._metrics.records_read,
                changed_page_ids=self._touched_pages[-MAX_AGGREGATION_PAGES:],
                via_batch=self._calls_via_batch(),
            )
            planned: AggregationPlanResult = await self._answered(lambda: self._llm_retrying_interruptions(
                Aggregation.plan, request, "plan the aggregation pass (hubs, rollups, promotions)"))
            self._metrics.add_aggregation_planning(planned)
            if planned.skipped:
                return
            resolved: AggregationResolveResult = await self._db(
                Aggregation.resolve, ResolvePlanInput(scope=scope, plan_id=planned.plan_id),
                summary="resolve the aggregation plan against the wiki", local=True,
            )
            self._metrics.add_aggregation_resolution(resolved)
            await self._write_sections(planned.plan_id, resolved.section_tasks, "the aggregation pass")
            applied: AggregationApplyResult = await self._db(
                Aggregation.apply, AggregationApplyInput(scope=scope, plan_id=planned.plan_id),
                summary="apply hubs, rollups and promotions", local=True,
            )
            self._metrics.add_aggregation_apply(applied)
        except (ActivityError, ApplicationError) as error:
            self._metrics.aggregation_error = one_sentence(error)
            if failure_type(error) != errors.LLM_INTERRUPTED:  # interruptions are counted where retried
                # An unusable aggregation reply was still paid for: counted with the pass's tokens.
                self._metrics.add_aggregation_usage(spent_tokens(error))

    # ------------------------------------------------------------------ endings

    async def _continue_as_new(self, cap: str) -> None:
        self._metrics.cap_hit = cap
        self._metrics.continued_as_new = True
        await self._finish("continued")
        await workflow.wait_condition(workflow.all_handlers_finished)
        # Not drained yet: the next run must read on even if no new wake-up arrives.
        self._continue(self._next_run_input(carried_wakeups=self._pending + 1))

    def _continue(self, next_input: CompileInput) -> None:
        """Continue as new; a run started with a WikiRun attribute hands the next number on (runs started
        without one, before it existed or where it is not registered, keep their attributes as they are)."""
        attributes = workflow.info().typed_search_attributes
        if attributes.get(WIKI_RUN) is not None:
            attributes = attributes.updated(SearchAttributePair(WIKI_RUN, next_input.run_no))
            workflow.continue_as_new(next_input, search_attributes=attributes)
        workflow.continue_as_new(next_input)

    def _next_run_input(self, carried_wakeups: int) -> CompileInput:
        return CompileInput(
            scope=self._inp.scope, trigger=self._inp.trigger, options=self._inp.options.model_copy(
                update={"model_id": self._model_id, "debounce_seconds": 0.0}),
            carried_wakeups=carried_wakeups,
            promotion_mention_ids=self._promotions,
            run_no=self._inp.run_no + 1,
            pending_batch=self._pending_batch,
            forget_pending=self._forget_pending,
            **self._progress_carried(),
        )

    async def _finish(self, status: str, error: str | None = None) -> None:
        self._phase = "finishing"
        self._metrics.latency_ms = int((workflow.now() - self._run_started_at).total_seconds() * 1000)
        finished = await self._db(
            CompileSteps.finish_run,
            FinishRunInput(scope=self._inp.scope, run_id=workflow.info().run_id, status=status,
                           metrics=self._metrics.as_ledger(), error=error),
            summary=f"ledger: run {self._inp.run_no} {status}",
        )
        self._metrics.duplicate_candidates_count = finished.duplicate_candidates_count
        self._phase = status
        self._details(self._ending(status, error))

    def _ending(self, status: str, error: str | None = None) -> str:
        """The run's final details: how it ended and what it did."""
        metrics = self._metrics
        if error:
            return f"{status}: {error}"
        done = (f"{metrics.records_read} memories read, {metrics.pages_created} pages created, "
                f"{metrics.sections_rewritten} sections rewritten, ${metrics.cost_usd:.4f}")
        if status == "continued":
            return f"continued as new ({metrics.cap_hit} reached) after {done}; run {self._inp.run_no + 1} goes on"
        return f"{status}: {done}"

    # ------------------------------------------------------------------ activity helpers

    @property
    def _heartbeat_timeout(self) -> timedelta:
        return timedelta(seconds=self._inp.options.heartbeat_timeout_seconds)

    async def _db(self, step: MethodAsyncSingleParam[Any, Any, T], arg: Any, *, summary: str,
                  local: bool = False) -> T:
        if local:
            # The steps of a batch are short and strictly sequential: run them in the workflow's own
            # worker, which saves a server round trip (schedule, dispatch, poll, complete, new workflow
            # task) on each. Their results are recorded only when the workflow task completes, so a failed
            # workflow task runs them again, possibly after later steps of the same task: each returns
            # what it returned the first time (a plan resolves once, applies once; the cursor only moves
            # forward). The ledger's start and finish stay regular activities, so a run's cleanup never
            # happens inside a workflow task that could still run a batch's steps again.
            return await workflow.execute_local_activity_method(
                step, arg, start_to_close_timeout=DATABASE_STEP_TIMEOUT, retry_policy=DATABASE_STEP_RETRY,
                summary=summary,
            )
        return await workflow.execute_activity_method(
            step, arg, start_to_close_timeout=DATABASE_STEP_TIMEOUT, retry_policy=DATABASE_STEP_RETRY,
            heartbeat_timeout=self._heartbeat_timeout, summary=summary,
        )

    async def _llm(self, step: MethodAsyncSingleParam[Any, Any, T], arg: Any, summary: str) -> T:
        return await workflow.execute_activity_method(
            step, arg, start_to_close_timeout=MODEL_CALL_ATTEMPT_TIMEOUT,
            heartbeat_timeout=self._heartbeat_timeout,
            schedule_to_close_timeout=timedelta(seconds=self._inp.options.llm_retry_budget_seconds),
            task_queue=self._inp.options.llm_task_queue, retry_policy=MODEL_CALL_RETRY, summary=summary,
        )

    async def _llm_retrying_interruptions(self, step: MethodAsyncSingleParam[Any, Any, T], arg: Any,
                                          summary: str) -> T:
        """A model call whose interruptions are retried here, their spent tokens counted each time."""
        attempt = 1
        while True:
            try:
                return await self._llm(step, arg, summary)
            except ActivityError as error:
                if failure_type(error) != errors.LLM_INTERRUPTED:
                    raise
                self._metrics.interrupted_calls += 1
                self._metrics.add_usage(spent_tokens(error))
                if attempt >= MODEL_CALL_INTERRUPTED_ATTEMPTS:
                    raise
                self._metrics.llm_retries += 1
                attempt += 1


__all__ = ["CompileWorkflow"]
