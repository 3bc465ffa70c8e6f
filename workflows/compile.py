"""CompileWorkflow: one per (tenant, owner), id `compile:{tenant}:{owner}` — the id is the lock.

Life: retain signal-with-starts it (`wake`); it debounces a burst, then loops over batches of
memories after the scope's cursor: plan -> resolve against the database -> write meaningful
sections concurrently -> apply everything and advance the cursor in one transaction. It ends when
the cursor is drained and no wake-up is pending, and continues as new when a per-run cap is hit or
Temporal suggests it, carrying only unserved wake-ups (the cursor lives in Postgres).

Only orchestration lives here; every decision about content is made in activities and `domain`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar
from uuid import UUID

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.aggregation import Aggregation
    from activities.compile_steps import CompileSteps
    from activities.planning import Planning
    from domain import errors
    from domain.aggregation import MAX_AGGREGATION_PAGES
    from domain.compile_messages import (
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
        PlanBatchInput,
        PlanBatchResult,
        Progress,
        ResolvePlanInput,
        ResolvePlanResult,
        RunRecord,
        TokenCounts,
        WakeUp,
        WriteSectionInput,
        WriteSectionResult,
    )
    from domain.run_metrics import RunMetrics
    from workflows.errors import one_sentence

T = TypeVar("T")

DB_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    non_retryable_error_types=[errors.CURSOR_MOVED, errors.SCOPE_VIOLATION],
)
LLM_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=2),
    non_retryable_error_types=[errors.LLM_REJECTED, errors.LLM_TRUNCATED, errors.PLAN_INVALID],
)
DB_TIMEOUT = timedelta(minutes=2)
LLM_ATTEMPT_TIMEOUT = timedelta(minutes=5)
# Histories recorded before the aggregation pass existed replay without it.
AGGREGATION_PATCH = "aggregation-pass"
# Histories recorded before this wrote sections in fixed groups rather than a sliding window.
SLIDING_WRITES_PATCH = "sliding-window-section-writes"
# Histories recorded before this continued as new even when the capped batch drained the cursor.
FINISH_WHEN_DRAINED_PATCH = "finish-when-drained"
# Histories recorded before this completed even when woken during the final aggregation pass or ledger write.
SERVE_LATE_WAKEUPS_PATCH = "serve-late-wakeups"
# Histories recorded before this ran the database activities as regular (server-dispatched) activities.
LOCAL_DB_PATCH = "local-database-activities"
# Histories recorded before this resolved every plan without judging its ambiguous merges first.
MERGE_JUDGE_PATCH = "merge-judge"


class _Unplannable(Exception):
    """A batch part the model cannot plan whole (truncated or invalid twice): split it."""


@workflow.defn(name="CompileWorkflow")
class CompileWorkflow:
    @workflow.init
    def __init__(self, inp: CompileInput) -> None:
        self._inp = inp
        self._pending = inp.carried_wakeups
        self._wake_seq = 0
        self._promotions: list[UUID] = list(inp.promotion_mention_ids)
        self._model_id = inp.options.model_id
        self._phase = "starting"
        self._cursor = CursorPosition()
        self._batches_done = 0
        self._run_started_at = workflow.now()
        self._run_cursor_from: CursorPosition | None = None
        self._touched_pages: list[UUID] = []  # pages this run wrote, least recently touched first
        self._merge_proposals: dict[UUID, int | None] = {}  # plan id -> new pages and promotions it proposes
        self._metrics = RunMetrics(
            deterministic_linking_flag_suppressed=not inp.options.deterministic_linking_enabled)

    # ------------------------------------------------------------------ messages

    @workflow.signal
    def wake(self, wake: WakeUp) -> None:
        self._pending += 1
        self._wake_seq += 1
        if wake.model_id:
            self._model_id = wake.model_id
        for mention_id in wake.promotion_mention_ids:
            if mention_id not in self._promotions:
                self._promotions.append(mention_id)

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
        )

    # ------------------------------------------------------------------ main loop

    @workflow.run
    async def run(self, inp: CompileInput) -> dict:
        info = workflow.info()
        run = RunRecord(scope=inp.scope, workflow_id=info.workflow_id, run_id=info.run_id,
                        trigger=inp.trigger, model_id=self._model_id)
        await self._db(CompileSteps.start_run, run, summary=f"ledger: run {inp.run_no} ({inp.trigger})")
        try:
            while True:
                await self._debounce()
                self._pending = 0
                cap = await self._compile_until_drained_or_cap()
                if cap is not None:
                    await self._aggregate()
                    await self._continue_as_new(cap)
                if self._pending == 0:
                    break
                # Wake-ups arrived while compiling: another pass before finishing.
            await self._aggregate()
            await self._finish("succeeded")
            if self._pending and workflow.patched(SERVE_LATE_WAKEUPS_PATCH):
                # Woken during the aggregation pass or the ledger write: those memories are not compiled
                # yet and completing would drop the wake-up, so a next run serves it.
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(self._next_run_input(carried_wakeups=self._pending))
            return self._metrics.as_ledger()
        except ActivityError as error:
            message = one_sentence(error)
            self._metrics.error = message
            await self._finish("failed", message)
            raise ApplicationError(message, type="CompileFailed", non_retryable=True) from error

    async def _debounce(self) -> None:
        quiet = self._inp.options.debounce_seconds
        if quiet <= 0 or self._inp.trigger != "memory_retain":
            return
        self._phase = "debouncing"
        while True:
            seen = self._wake_seq
            try:
                await workflow.wait_condition(lambda seen=seen: self._wake_seq != seen, timeout=timedelta(seconds=quiet),
                                              timeout_summary="debounce")
            except TimeoutError:
                return

    async def _compile_until_drained_or_cap(self) -> str | None:
        """Batches until the cursor is drained (None) or a cap is hit (its name)."""
        caps = self._inp.options.caps
        record_cap = caps.max_records
        while True:
            limit = min(caps.page_size, record_cap - self._metrics.records_read)
            self._phase = "reading"
            batch: BatchRef = await self._db(
                CompileSteps.next_batch, NextBatchInput(scope=self._inp.scope, limit=limit),
                summary=f"read batch {self._batches_done + 1} (up to {limit} memories)", local=True,
            )
            self._cursor = batch.cursor_from
            if self._run_cursor_from is None:
                self._run_cursor_from = batch.cursor_from
            promotions = list(self._promotions)
            if not batch.memory_ids and not promotions:
                return None
            await self._compile_batch(batch, promotions)
            self._promotions = [m for m in self._promotions if m not in promotions]
            self._batches_done += 1
            self._metrics.batches = self._batches_done
            drained = len(batch.memory_ids) < limit
            if drained and workflow.patched(FINISH_WHEN_DRAINED_PATCH):
                return None  # nothing left to read: a cap would only start an empty next run
            cap = self._cap_hit(drained)
            if cap is not None:
                return cap
            if drained:
                return None

    def _cap_hit(self, drained: bool) -> str | None:
        caps = self._inp.options.caps
        if self._metrics.pages_created >= caps.max_new_pages:
            return "max_new_pages"
        if self._metrics.sections_rewritten >= caps.max_sections_rewritten:
            return "max_sections_rewritten"
        if not drained and self._metrics.records_read >= caps.max_records:
            return "max_records"
        if workflow.info().is_continue_as_new_suggested():
            return "history_size"
        return None

    async def _compile_batch(self, batch: BatchRef, promotions: list[UUID]) -> None:
        batch_no = self._batches_done + 1
        count = len(batch.memory_ids)
        workflow.set_current_details(f"batch {batch_no}: {count} memories from cursor {batch.cursor_from.label()}")
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
        self._metrics.records_read += count

    async def _plan_parts(self, batch: BatchRef, start: int, end: int, batch_no: int,
                          promotions: list[UUID]) -> list[tuple[int, int, UUID | None]]:
        """Plan memories [start, end); on truncation or twice-invalid output split in halves, in order."""
        try:
            plan_id = await self._plan(batch, start, end, batch_no, promotions)
            return [(start, end, plan_id)]
        except _Unplannable:
            if end - start <= 1:
                return [(start, end, None)]
            middle = (start + end) // 2
            self._metrics.batch_splits += 1
            first = await self._plan_parts(batch, start, middle, batch_no, promotions)
            return first + await self._plan_parts(batch, middle, end, batch_no, [])

    async def _plan(self, batch: BatchRef, start: int, end: int, batch_no: int, promotions: list[UUID]) -> UUID:
        memory_ids = batch.memory_ids[start:end]
        part = f"{start}-{end}"
        self._phase = "planning"
        for attempt in (1, 2):
            plan_id = workflow.uuid4()
            request = PlanBatchInput(
                scope=self._inp.scope, plan_id=plan_id, run_id=workflow.info().run_id, memory_ids=memory_ids,
                model_id=self._model_id, max_candidate_pages=self._inp.options.caps.max_candidate_pages,
                promotion_mention_ids=promotions,
            )
            summary = f"plan batch {batch_no} ({len(memory_ids)} memories" + (
                f", part {part})" if end - start < len(batch.memory_ids) else ")")
            try:
                result: PlanBatchResult = await self._llm(Planning.plan_batch, request, summary)
            except ActivityError as error:
                kind = _error_type(error)
                if kind == errors.LLM_TRUNCATED:
                    self._metrics.truncations += 1
                    self._metrics.add_usage(_spent_tokens(error))
                    raise _Unplannable() from error
                if kind == errors.PLAN_INVALID:
                    self._metrics.invalid_plans += 1
                    self._metrics.add_usage(_spent_tokens(error))
                    if attempt == 1:
                        self._metrics.llm_retries += 1
                        continue
                    raise _Unplannable() from error
                raise
            self._metrics.planner_calls += 1
            self._metrics.add_usage(result.usage)
            self._metrics.dropped_invalid_ids += result.dropped_invalid_links
            self._metrics.planner_input_chars += result.planner_input_chars
            self._merge_proposals[result.plan_id] = result.merge_proposals
            return result.plan_id
        raise _Unplannable()

    async def _resolve_write_apply(self, batch_no: int, plan_id: UUID, cursor: CursorPosition,
                                   cursor_next: CursorPosition) -> None:
        if workflow.patched(MERGE_JUDGE_PATCH) and self._merge_proposals.pop(plan_id, None) != 0:
            await self._judge_merges(batch_no, plan_id)
        self._phase = "resolving"
        resolved: ResolvePlanResult = await self._db(
            CompileSteps.resolve_plan, ResolvePlanInput(scope=self._inp.scope, plan_id=plan_id),
            summary=f"resolve batch {batch_no} against the wiki", local=True,
        )
        self._metrics.add_resolution(resolved)
        await self._write_sections(plan_id, resolved.section_tasks, f"batch {batch_no}")
        await self._apply(batch_no, plan_id, cursor, cursor_next)

    async def _judge_merges(self, batch_no: int, plan_id: UUID) -> None:
        """The model's decision on the plan's ambiguous merges, stored for the resolver (a model call,
        so a regular activity: the resolver is a local one). Its failure costs only those merges."""
        self._phase = "judging merges"
        try:
            judged: JudgeMergesResult = await self._llm(
                Planning.judge_merges,
                JudgeMergesInput(scope=self._inp.scope, plan_id=plan_id, model_id=self._model_id),
                f"judge the ambiguous merges of batch {batch_no}")
        except ActivityError as error:
            # No decisions: the resolver merges no ambiguous pair of this batch, which is always safe.
            self._metrics.merge_judge_failures += 1
            self._metrics.add_usage(_spent_tokens(error))
            return
        self._metrics.merge_questions += judged.questions
        self._metrics.merge_judge_calls += 1 if judged.questions else 0
        self._metrics.add_usage(judged.usage)

    async def _write_sections(self, plan_id: UUID, tasks: list[str], label: str) -> None:
        """The section writer for each task, at most `section_writer_concurrency` at a time."""
        if not tasks:
            return
        self._phase = "writing sections"
        width = self._inp.options.caps.section_writer_concurrency

        def write(index: int, key: str):
            return self._llm(
                Planning.write_section,
                WriteSectionInput(scope=self._inp.scope, plan_id=plan_id, task_key=key, model_id=self._model_id),
                f"write section {index + 1}/{len(tasks)} of {label}",
            )

        if workflow.patched(SLIDING_WRITES_PATCH):
            # A sliding window: the next write starts as soon as any finishes (fixed groups waited
            # for their slowest member, which made the model's critical path ~1.7x longer).
            slots = asyncio.Semaphore(width)

            async def write_in_slot(index: int, key: str) -> WriteSectionResult:
                async with slots:
                    return await write(index, key)

            results = await asyncio.gather(*[write_in_slot(i, key) for i, key in enumerate(tasks)])
        else:
            results = []
            for offset in range(0, len(tasks), width):
                results += await asyncio.gather(*[write(offset + i, key)
                                                  for i, key in enumerate(tasks[offset:offset + width])])
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
        ledger (`aggregation_error`) and never undoes the leaf work, which is already committed.
        """
        if self._metrics.records_read == 0 or not self._inp.options.aggregation_enabled:
            return
        if not workflow.patched(AGGREGATION_PATCH):
            return
        self._phase = "aggregating"
        workflow.set_current_details("aggregation pass: hubs, rollups, section promotion")
        scope = self._inp.scope
        try:
            planned: AggregationPlanResult = await self._llm(
                Aggregation.plan,
                AggregationPlanInput(
                    scope=scope, plan_id=workflow.uuid4(), run_id=workflow.info().run_id, model_id=self._model_id,
                    cursor_from=self._run_cursor_from or CursorPosition(),
                    record_count=self._metrics.records_read,
                    changed_page_ids=self._touched_pages[-MAX_AGGREGATION_PAGES:],
                ),
                "plan the aggregation pass (hubs, rollups, promotions)",
            )
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
        except ActivityError as error:
            self._metrics.aggregation_error = one_sentence(error)
            self._metrics.add_usage(_spent_tokens(error))  # an unusable reply was still paid for

    # ------------------------------------------------------------------ endings

    async def _continue_as_new(self, cap: str) -> None:
        self._metrics.cap_hit = cap
        self._metrics.continued_as_new = True
        await self._finish("continued")
        await workflow.wait_condition(workflow.all_handlers_finished)
        # Not drained yet: the next run must read on even if no new wake-up arrives.
        workflow.continue_as_new(self._next_run_input(carried_wakeups=self._pending + 1))

    def _next_run_input(self, carried_wakeups: int) -> CompileInput:
        return CompileInput(
            scope=self._inp.scope, trigger=self._inp.trigger, options=self._inp.options.model_copy(
                update={"model_id": self._model_id, "debounce_seconds": 0.0}),
            carried_wakeups=carried_wakeups,
            promotion_mention_ids=self._promotions,
            run_no=self._inp.run_no + 1,
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

    # ------------------------------------------------------------------ activity helpers

    @property
    def _heartbeat_timeout(self) -> timedelta:
        return timedelta(seconds=self._inp.options.heartbeat_timeout_seconds)

    async def _db(self, step: Callable[[Any, Any], Awaitable[T]], arg: Any, *, summary: str,
                  local: bool = False) -> T:
        if local and workflow.patched(LOCAL_DB_PATCH):
            # The steps of a batch are short and strictly sequential: run them in the workflow's own
            # worker, which saves a server round trip (schedule, dispatch, poll, complete, new workflow
            # task) on each. Their results are recorded only when the workflow task completes, so a failed
            # workflow task runs them again, possibly after later steps of the same task: each returns
            # what it returned the first time (a plan resolves once, applies once; the cursor only moves
            # forward). The ledger's start and finish stay regular activities, so a run's cleanup never
            # happens inside a workflow task that could still run a batch's steps again.
            return await workflow.execute_local_activity(
                step, arg, start_to_close_timeout=DB_TIMEOUT, retry_policy=DB_RETRY,
                summary=summary,
            )
        return await workflow.execute_activity(
            step, arg, start_to_close_timeout=DB_TIMEOUT, retry_policy=DB_RETRY,
            heartbeat_timeout=self._heartbeat_timeout, summary=summary,
        )

    async def _llm(self, step: Callable[[Any, Any], Awaitable[T]], arg: Any, summary: str) -> T:
        return await workflow.execute_activity(
            step, arg, start_to_close_timeout=LLM_ATTEMPT_TIMEOUT,
            heartbeat_timeout=self._heartbeat_timeout,
            schedule_to_close_timeout=timedelta(seconds=self._inp.options.llm_retry_budget_seconds),
            task_queue=self._inp.options.llm_task_queue, retry_policy=LLM_RETRY, summary=summary,
        )


def _error_type(error: ActivityError) -> str | None:
    cause = error.cause
    return cause.type if isinstance(cause, ApplicationError) else None


def _spent_tokens(error: ActivityError) -> TokenCounts:
    """Priced tokens of a failed model call, when the activity attached them to its error."""
    details = error.cause.details if isinstance(error.cause, ApplicationError) else ()
    if details and isinstance(details[0], dict):
        return TokenCounts.model_validate(details[0])
    return TokenCounts()


__all__ = ["CompileWorkflow", "TokenCounts"]
