"""How far a compile is, and how many section writes a batch keeps in flight.

Progress: every batch read returns the scope's memories and those before the position it read from
(`BatchRef.scope_memories`, `memories_before`). The `progress` query reports the memories compiled
of the total and, at the rate this chain of runs has kept since its first batch (carried across
continue-as-new in `CompileInput.import_started_at`), an estimate of the time left (domain/progress.py).
Only state: no command changes.

Section writes (patch `writer_window`, release 0.2.0): a batch used to keep up to
`section_writer_concurrency` (32) writes in flight whatever the worker could run; those it could not
start waited in the task queue against their timeouts while the started ones competed for the
worker. Now a run asks the worker its writes go to how many it runs at once
(`compile.worker_capacity`, app/capacity.py) before its first section write, and keeps no more than
that in flight: every write it schedules starts at once. A run started before the patch keeps the
configured window; so does a run whose worker does not answer.

Mixed into CompileWorkflow (`self` is the workflow).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.capacity import Capacity
    from domain.progress import estimate
    from messages.compile import BatchRef, CapacityInput, WorkerCapacityReport
    from workflows.policies import DATABASE_STEP_TIMEOUT

from workflows.compile_state import CompileState

# A worker that cannot say (an older build without the activity) leaves the configured window.
CAPACITY_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2.0,
                             maximum_interval=timedelta(seconds=10), maximum_attempts=3)


class ImportProgress(CompileState):
    """The compile's progress and its section-write window (mixed into CompileWorkflow)."""

    _memories_total: int | None
    _compiled_at_read: int | None  # memories at or before the cursor of the last batch read at it
    _records_at_read: int  # the run's records_read then
    _import_started_at: datetime | None
    _compiled_at_import_start: int | None
    _writer_window: int | None

    def _init_progress(self) -> None:
        self._memories_total = None
        self._compiled_at_read = None
        self._records_at_read = 0
        self._import_started_at = self._inp.import_started_at
        self._compiled_at_import_start = self._inp.compiled_at_import_start
        self._writer_window = None

    def _note_batch(self, batch: BatchRef, *, at_cursor: bool) -> None:
        """What a batch read says of the scope; `at_cursor`: it was read at the cursor (not ahead of it)."""
        if batch.scope_memories is None or batch.memories_before is None:
            return  # recorded before batches were counted
        self._memories_total = batch.scope_memories
        if at_cursor:
            self._compiled_at_read = batch.memories_before
            self._records_at_read = self._metrics.records_read
            if self._import_started_at is None:
                self._import_started_at = workflow.now()
                self._compiled_at_import_start = batch.memories_before

    def _memories_compiled(self) -> int | None:
        if self._compiled_at_read is None:
            return None
        return self._compiled_at_read + self._metrics.records_read - self._records_at_read

    def _progress_fields(self) -> dict[str, Any]:
        """The `progress` query's memories_compiled, memories_total and estimate."""
        compiled, total = self._memories_compiled(), self._memories_total
        fields: dict[str, Any] = {"memories_compiled": compiled, "memories_total": total}
        if compiled is not None and total is not None and self._import_started_at is not None:
            guess = estimate(compiled, total, self._compiled_at_import_start or 0, self._import_started_at,
                             workflow.now())
            fields.update(memories_per_second=guess.memories_per_second, seconds_left=guess.seconds_left)
        return fields

    def _progress_carried(self) -> dict[str, Any]:
        """What the next run continues the estimate from."""
        return {"import_started_at": self._import_started_at,
                "compiled_at_import_start": self._compiled_at_import_start}

    async def _section_write_window(self) -> int:
        """The section writes a batch of this run keeps in flight."""
        if self._writer_window is None:
            self._writer_window = self._inp.options.caps.section_writer_concurrency
            if workflow.patched("writer_window"):
                try:
                    report: WorkerCapacityReport = await workflow.execute_activity_method(
                        Capacity.report, CapacityInput(scope=self._inp.scope),
                        start_to_close_timeout=DATABASE_STEP_TIMEOUT, retry_policy=CAPACITY_RETRY,
                        heartbeat_timeout=timedelta(seconds=self._inp.options.heartbeat_timeout_seconds),
                        task_queue=self._inp.options.llm_task_queue,
                        summary="ask the worker how many section writes it runs at once")
                except ActivityError:
                    return self._writer_window
                self._writer_window = max(1, min(self._writer_window, report.section_writes))
        return self._writer_window
