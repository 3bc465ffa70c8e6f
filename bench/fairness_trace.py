"""Where a small tenant's retain-to-compiled time went, read from its compile's workflow history.

Every moment between the retain and the compile's close falls in exactly one bucket:
- `starting`: the retain stored its memories and started (or woke) the compile, up to its first
  workflow task being scheduled;
- `model_streaming`: a model call was being answered, as long as the simulator's speed makes it (time
  to first token plus the output tokens the call reported at the simulated rate, from the activity's start);
- `activity_running`: a regular activity was running beyond that (its database work, the worker's own
  work, and waits for a busy CPU);
- `activity_queued`: an activity was scheduled and none was running: it waited in the task queue
  (priority order, the queue's rate limit, no free worker slot);
- `workflow_queued`: a workflow task was scheduled and not started: it waited for a workflow slot or a
  poller;
- `workflow_running`: the rest (workflow tasks and the local database steps run inside them).
Moments are classified in that order of precedence, so the buckets add up to the latency.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

BUCKETS = ("starting", "model_streaming", "activity_running", "activity_queued", "workflow_queued",
           "workflow_running")

_ACTIVITY_CLOSED = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "activity_task_completed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "activity_task_failed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "activity_task_timed_out_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: "activity_task_canceled_event_attributes",
}


@dataclass
class Intervals:
    """Labelled [start, end) spans in seconds after the retain."""

    spans: list[tuple[str, float, float]] = field(default_factory=list)
    first_workflow_task: float | None = None

    def add(self, label: str, start: float, end: float) -> None:
        if end > start:
            self.spans.append((label, start, end))


def _seconds(event, origin: datetime) -> float:
    return (event.event_time.ToDatetime() - origin).total_seconds()


@dataclass(frozen=True)
class ModelSpeed:
    ttft_seconds: float
    output_tokens_per_second: float

    def seconds(self, output_tokens: int) -> float:
        if not output_tokens:
            return 0.0
        rate = self.output_tokens_per_second
        return self.ttft_seconds + (output_tokens / rate if rate > 0 else 0.0)


def _output_tokens(payloads) -> int:
    total = 0
    for payload in payloads:
        result = json.loads(payload.data) if payload.data else None
        if isinstance(result, dict) and isinstance(result.get("usage"), dict):
            total += int(result["usage"].get("output_tokens", 0))
    return total


def spans_of(history: WorkflowHistory, retained_at: datetime, speed: ModelSpeed) -> Intervals:
    """The activity and workflow-task spans of one run, in seconds after `retained_at` (naive UTC)."""
    out = Intervals()
    scheduled: dict[int, float] = {}
    started: dict[int, float] = {}
    workflow_scheduled: float | None = None
    first_task: float | None = None
    for event in history.events:
        at = _seconds(event, retained_at)
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled[event.event_id] = at
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started[event.activity_task_started_event_attributes.scheduled_event_id] = at
        elif kind in _ACTIVITY_CLOSED:
            key = getattr(event, _ACTIVITY_CLOSED[kind]).scheduled_event_id
            begin = started.get(key, at)
            out.add("activity_queued", scheduled.get(key, begin), begin)
            out.add("activity_running", begin, at)
            if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
                streaming = speed.seconds(_output_tokens(event.activity_task_completed_event_attributes.result.payloads))
                out.add("model_streaming", begin, min(at, begin + streaming))
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            workflow_scheduled = at
            if first_task is None:
                first_task = at
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED and workflow_scheduled is not None:
            out.add("workflow_queued", workflow_scheduled, at)
            workflow_scheduled = None
    if first_task is not None:
        out.first_workflow_task = first_task
    return out


def breakdown(intervals: Intervals, total: float) -> dict[str, float]:
    """Seconds of [0, total) in each bucket, by precedence (BUCKETS order; the rest is workflow_running)."""
    points = sorted({0.0, total, *(s for _, s, _ in intervals.spans if 0 <= s <= total),
                     *(e for _, _, e in intervals.spans if 0 <= e <= total)})
    out = dict.fromkeys(BUCKETS, 0.0)
    rank = {label: index for index, label in enumerate(BUCKETS)}
    spans = [span for span in intervals.spans if span[0] in rank]
    for left, right in zip(points, points[1:], strict=False):
        middle = (left + right) / 2
        covering = [label for label, start, end in spans if start <= middle < end]
        label = min(covering, key=rank.__getitem__) if covering else "workflow_running"
        out[label] += right - left
    return {name: round(value, 3) for name, value in out.items()}


async def retain_breakdown(client: Client, workflow_id: str, run_id: str | None, retained_at: datetime,
                           latency: float, speed: ModelSpeed) -> dict[str, float]:
    """Where one retain's `latency` went: the run the retain started or woke and the runs it continued
    as, by bucket."""
    intervals = Intervals()
    first_run = True
    while True:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        run = spans_of(history, retained_at, speed)
        intervals.spans += run.spans
        if first_run and _seconds(history.events[0], retained_at) > 0:  # the retain started this run
            intervals.add("starting", 0.0, run.first_workflow_task or 0.0)
        first_run = False
        last = history.events[-1]
        if last.event_type != EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
            return breakdown(intervals, latency)
        run_id = last.workflow_execution_continued_as_new_event_attributes.new_execution_run_id


def summarise(breakdowns: list[tuple[float, dict[str, float]]], p95: float) -> dict[str, dict[str, float]]:
    """The mean seconds per bucket over every retain, and over the retains at or above the p95."""
    def mean(rows: list[dict[str, float]]) -> dict[str, float]:
        return {name: round(sum(row[name] for row in rows) / len(rows), 2) for name in BUCKETS} if rows else {}

    return {"all_retains": mean([row for _, row in breakdowns]),
            "slowest_retains": mean([row for latency, row in breakdowns if latency >= p95])}
