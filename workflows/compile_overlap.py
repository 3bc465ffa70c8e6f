"""Overlap: batch n + 1 is planned while batch n's sections are written.

Sequentially a batch is planned, resolved, its sections written, applied; only then is the next
batch read and planned. Planning is the long model call and the section writes the second one, and
what the next plan needs from batch n is decided once batch n is resolved, except the bodies its
section writer returns. So, once batch n's plan is resolved (its last part, when it was split):

  batch n:      resolve ─ write sections ──────────────┐ apply n ─ resolve n+1 ─ write n+1 ...
  batch n + 1:          └ read n+1 ─ plan n+1 (preview n)┘

- Batch n + 1's memories are read after batch n's last position (the cursor it will leave), with
  the limit the sequential loop would use after batch n.
- Its planner is shown the wiki as batch n's resolved plan leaves it, batch n's writer sections
  still at their pre-batch bodies (store/plan_preview.py: applied in the planner's read transaction
  and rolled back). That is a fixed function of the wiki after batch n - 1 and batch n's resolved
  plan, so it does not depend on when writers finish, on retries or on worker restarts.
- Batch n is applied only after the plan ahead has ended (its writes end much sooner: a plan is the
  longer call), so every attempt of the plan ahead previews the same unapplied plan, and apply keeps
  its cursor compare-and-set: batch n moves the cursor to where batch n + 1 was read from, then batch
  n + 1 is resolved, written and applied from there, exactly as in the sequential loop.
- Not planned ahead when the run will end after batch n (drained, or a cap it can foresee:
  records, new pages, rewritten sections, history size). A cap it could not foresee discards the
  plan ahead (`plans_ahead_discarded`; nothing of it was applied) and the next run plans that batch
  again after the aggregation pass, as the sequential order does. Message Batch mode never overlaps.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from uuid import UUID

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.compile_steps import CompileSteps
    from messages.compile import BatchRef, NextBatchInput, ResolvePlanResult

from workflows.compile_planning import BatchPlanning


@dataclass
class _Ahead:
    """The next batch, read and planned while the current one's sections were written."""

    batch: BatchRef
    promotions: list[UUID]
    parts: list[tuple[int, int, UUID | None]]


class OverlappedBatches(BatchPlanning):
    """The batch loop of CompileWorkflow with planning overlapped (mixed into it: `self` is the workflow)."""

    async def _compile_overlapped(self) -> str | None:
        """Batches until the cursor is drained (None) or a cap is hit (its name), each planned while the
        previous one's sections were written when it could be."""
        caps = self._inp.options.caps
        ahead: _Ahead | BaseException | None = None
        while True:
            limit = min(caps.page_size, caps.max_records - self._metrics.records_read)
            if isinstance(ahead, BaseException):
                # The plan ahead failed: the sequential order meets the same failure planning this batch.
                raise ahead
            if ahead is None:
                await self._forget_if_pending()  # between batches: none is planned ahead
                self._phase = "reading"
                batch: BatchRef = await self._db(
                    CompileSteps.next_batch, NextBatchInput(scope=self._inp.scope, limit=limit),
                    summary=f"read batch {self._batches_done + 1} (up to {limit} memories)", local=True,
                )
                self._note_batch(batch, at_cursor=True)
                promotions = list(self._promotions)
                parts = None
            else:
                batch, promotions, parts = ahead.batch, ahead.promotions, ahead.parts
            self._cursor = batch.cursor_from
            if self._run_cursor_from is None:
                self._run_cursor_from = batch.cursor_from
            if not batch.memory_ids and not promotions:
                return None
            batch_no = self._batches_done + 1
            self._details(f"batch {batch_no}: {len(batch.memory_ids)} memories from cursor "
                          f"{batch.cursor_from.label()}")
            if parts is None:
                parts = await self._plan_parts(batch, 0, len(batch.memory_ids), batch_no, promotions)
            ahead = await self._compile_parts(batch, parts, promotions, batch_no, limit)
            self._promotions = [m for m in self._promotions if m not in promotions]
            self._batches_done += 1
            self._metrics.batches = self._batches_done
            if len(batch.memory_ids) < limit:
                return None  # drained (never planned ahead)
            cap = self._cap_hit()
            if cap is not None:
                if isinstance(ahead, _Ahead):
                    self._metrics.plans_ahead_discarded += 1
                    for _, _, plan in ahead.parts:
                        if plan is not None:
                            self._merge_proposals.pop(plan, None)
                return cap

    async def _compile_parts(self, batch: BatchRef, parts: list[tuple[int, int, UUID | None]],
                             promotions: list[UUID], batch_no: int, limit: int) -> _Ahead | BaseException | None:
        """Resolve, write and apply the batch's planned parts in order; while the last part's sections
        are written, read and plan the next batch. Returns that (or its failure), or None."""
        ahead: _Ahead | BaseException | None = None
        cursor = batch.cursor_from
        for index, (start, end, plan) in enumerate(parts):
            cursor_next = batch.positions[end - 1] if end > start else cursor
            if plan is None:
                # A single memory the model cannot plan: skip it, record it, move the cursor past it.
                self._metrics.skipped_memories.append(str(batch.memory_ids[start]))
                await self._apply(batch_no, None, cursor, cursor_next)
            else:
                resolved = await self._judge_and_resolve(batch_no, plan)
                planning = None
                if index == len(parts) - 1 and self._may_plan_ahead(batch, limit, resolved):
                    planning = asyncio.create_task(self._plan_ahead(batch, promotions, plan, batch_no + 1))
                try:
                    await self._write_sections(plan, resolved.section_tasks, f"batch {batch_no}")
                except BaseException:
                    if planning is not None:
                        planning.cancel()
                    raise
                if planning is not None:
                    # The plan ahead previews this plan unapplied: it must end before this plan is applied.
                    ahead = await planning
                await self._apply(batch_no, plan, cursor, cursor_next)
            cursor = cursor_next
            self._cursor = cursor
        self._metrics.records_read += len(batch.memory_ids)
        return ahead

    def _may_plan_ahead(self, batch: BatchRef, limit: int, resolved: ResolvePlanResult) -> bool:
        """Whether the loop will go on to another batch after this one, as far as can be told before it
        is applied (its new pages and rewrites counted as the resolver planned them)."""
        caps = self._inp.options.caps
        metrics = self._metrics
        # A pending forget is served before the next batch is read, so none is read ahead of it.
        return (not self._forget_pending and len(batch.memory_ids) >= limit
                and metrics.records_read + len(batch.memory_ids) < caps.max_records
                and metrics.pages_created + resolved.new_pages_planned < caps.max_new_pages
                and metrics.sections_rewritten + len(resolved.section_tasks) < caps.max_sections_rewritten
                and not workflow.info().is_continue_as_new_suggested())

    async def _plan_ahead(self, batch: BatchRef, promotions: list[UUID], after_plan: UUID,
                          batch_no: int) -> _Ahead | BaseException | None:
        """Read the batch after `batch` and plan it against the wiki as `after_plan` will leave it."""
        caps = self._inp.options.caps
        limit = min(caps.page_size, caps.max_records - self._metrics.records_read - len(batch.memory_ids))
        try:
            following: BatchRef = await self._db(
                CompileSteps.next_batch,
                NextBatchInput(scope=self._inp.scope, limit=limit, after=batch.positions[-1]),
                summary=f"read batch {batch_no} (up to {limit} memories) while batch {batch_no - 1} is written",
                local=True,
            )
            self._note_batch(following, at_cursor=False)
            remaining = [m for m in self._promotions if m not in promotions]
            if not following.memory_ids and not remaining:
                return None
            parts = await self._plan_parts(following, 0, len(following.memory_ids), batch_no, remaining,
                                           after_plan=after_plan)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - raised where the sequential loop would meet it
            return error
        self._metrics.plans_ahead += 1
        return _Ahead(batch=following, promotions=remaining, parts=parts)
