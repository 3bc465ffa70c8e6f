"""What CompileWorkflow's mixins (compile_overlap.py, compile_planning.py) may use of the workflow.

The state is declared here as annotations only (the workflow's `__init__` sets it), and the workflow's
own steps as signatures visible to the type checker alone, so nothing here exists at run time to shadow
the workflow's definitions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from messages.compile import BatchRef, CompileInput, CursorPosition, ResolvePlanResult, SubmittedPlan
    from messages.run_metrics import RunMetrics

if TYPE_CHECKING:
    from temporalio.types import MethodAsyncSingleParam

T = TypeVar("T")


class ForgetPreempted(Exception):
    """A forget arrived while the compile waited for a Message Batch: the batch in progress is dropped,
    the forget served, and the batch's memories read again (raised and caught in workflow code only)."""


class CompileState:
    """The compile workflow's run state, shared with the mixins that hold part of its loop."""

    _inp: CompileInput
    _phase: str
    _model_id: str
    _cursor: CursorPosition
    _batches_done: int
    _run_cursor_from: CursorPosition | None
    _promotions: list[UUID]
    _pending_batch: SubmittedPlan | None
    _merge_proposals: dict[UUID, int | None]
    _metrics: RunMetrics
    _forget_pending: bool
    _aggregate_after_forget: bool
    _touched_pages: list[UUID]

    if TYPE_CHECKING:
        def _details(self, now: str) -> None: ...

        def _cap_hit(self) -> str | None: ...

        async def _db(self, step: MethodAsyncSingleParam[Any, Any, T], arg: Any, *, summary: str,
                      local: bool = False) -> T: ...

        async def _llm(self, step: MethodAsyncSingleParam[Any, Any, T], arg: Any, summary: str) -> T: ...

        async def _llm_retrying_interruptions(self, step: MethodAsyncSingleParam[Any, Any, T], arg: Any,
                                              summary: str) -> T: ...

        async def _forget_if_pending(self) -> None: ...

        def _batch_mode(self) -> bool: ...

        async def _wait_for_message_batch(self, batch_id: str, summary: str) -> None: ...

        async def _judge_and_resolve(self, batch_no: int, plan_id: UUID) -> ResolvePlanResult: ...

        async def _write_sections(self, plan_id: UUID, tasks: list[str], label: str) -> None: ...

        def _note_batch(self, batch: BatchRef, *, at_cursor: bool) -> None: ...

        async def _apply(self, batch_no: int, plan_id: UUID | None, cursor: CursorPosition,
                         cursor_next: CursorPosition) -> None: ...
