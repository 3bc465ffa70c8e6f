"""What a compile's workflow histories say: activities run, events per batch, model critical path.

A compile's batch starts with `compile.next_batch`; inside it the workflow plans (`llm.plan_batch`),
resolves, writes sections (`llm.write_section`, concurrently) and applies. With a planner of fixed
latency L, the least model time a batch can take is L for the plan plus L for the slowest section
write (every write of the batch at once): that sum over batches is the critical path the
orchestration overhead is measured against.

With overlap (workflows/compile_overlap.py) the next batch's plan runs during a write phase: such a
plan "ahead" (its request names `after_plan_id`) and the phase's writes cost the longer of the two,
not their sum (`ChainAnalysis.critical_path_parts`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.client import WorkflowHistory

from runtime.history_events import local_activity

PLAN = "llm.plan_batch"
WRITE = "llm.write_section"
NEXT_BATCH = "compile.next_batch"
# Model calls that precede a write phase, and the activities that open one.
PLANNERS = frozenset({PLAN, "aggregation.plan"})
WRITE_PHASE_OPENERS = frozenset({"compile.resolve_plan", "aggregation.resolve"})
# A call "waited for the model" if it ran at least this share of the simulated latency.
LATENCY_TOLERANCE = 0.95


@dataclass
class ActivityRun:
    name: str
    scheduled: datetime
    started: datetime | None = None
    closed: datetime | None = None
    # A local activity ran inside a workflow task: history only records its result (a marker), so
    # its own times are unknown here (the bench times activities on the worker instead).
    local: bool = False
    # Output tokens the call's result reported (None: not a model activity; 0: answered without a call).
    output_tokens: int | None = None
    # A leaf plan planned ahead, during the previous batch's write phase.
    ahead: bool = False

    def model_seconds(self, ttft_seconds: float, output_tokens_per_second: float) -> float:
        """What the model alone takes for this call at the given speed: time to first token plus the
        output streamed (0 when the activity answered without calling the model)."""
        if not self.output_tokens:
            return 0.0
        streamed = self.output_tokens / output_tokens_per_second if output_tokens_per_second > 0 else 0.0
        return ttft_seconds + streamed

    @property
    def queued_seconds(self) -> float:
        """Time from scheduled to picked up by a worker (matching, rate limiting, worker slots)."""
        if self.started is None:
            return 0.0
        return (self.started - self.scheduled).total_seconds()

    @property
    def run_seconds(self) -> float:
        """Time the activity ran on a worker (started -> completed), queueing excluded."""
        if self.started is None or self.closed is None:
            return 0.0
        return (self.closed - self.started).total_seconds()


@dataclass
class Batch:
    """The activities of one batch, in the order they were scheduled."""

    activities: list[ActivityRun] = field(default_factory=list)

    @property
    def compiled(self) -> bool:
        """A batch that planned memories (the last read of a run finds none and plans nothing)."""
        return any(a.name == PLAN for a in self.activities)

    def write_phases(self) -> int:
        """Write phases of this batch (the leaf pass's, the aggregation pass's), each one critical-path step."""
        phases = 0
        in_phase = False
        for activity in self.activities:
            if activity.name == WRITE and not in_phase:
                phases += 1
            in_phase = activity.name == WRITE
        return phases

    def write_rounds(self) -> int:
        """Rounds of section writes: a write scheduled only after every earlier write of its phase had
        finished (the next group of `section_writer_concurrency`) starts a new round."""
        rounds = 0
        last_closed: datetime | None = None
        for activity in self.activities:
            if activity.name != WRITE:
                last_closed = None
                continue
            if last_closed is None or activity.scheduled >= last_closed:
                rounds += 1
            closed = activity.closed or activity.scheduled
            last_closed = closed if last_closed is None else max(last_closed, closed)
        return rounds


@dataclass
class ChainAnalysis:
    """Every run of one compile (the continue-as-new chain) taken together."""

    runs: int = 0
    events: int = 0
    batches: list[Batch] = field(default_factory=list)
    activities: Counter = field(default_factory=Counter)
    activity_runs: list[ActivityRun] = field(default_factory=list)
    # Per activity type: the token counts its results reported (model calls only).
    usage: dict[str, Counter] = field(default_factory=dict)
    # Attempts beyond the first, per activity type, and what failed the attempt before the last one.
    retries: Counter = field(default_factory=Counter)
    retry_causes: Counter = field(default_factory=Counter)

    @property
    def compiled_batches(self) -> list[Batch]:
        return [b for b in self.batches if b.compiled]

    def seconds_by_activity(self) -> dict[str, dict[str, float]]:
        """Per activity type: total run and queue seconds (summed over calls, so concurrent writes add up)."""
        totals: dict[str, dict[str, float]] = {}
        for activity in self.activity_runs:
            entry = totals.setdefault(activity.name, {"run": 0.0, "queued": 0.0})
            entry["run"] += activity.run_seconds
            entry["queued"] += activity.queued_seconds
        return {name: {k: round(v, 3) for k, v in entry.items()} for name, entry in sorted(totals.items())}

    def critical_path_seconds(self, latency_seconds: float) -> float:
        """With a fixed model latency L: L per model step in turn, a write phase one step, or as many as
        the plan ahead made during it (its parts one after the other) when those are more."""
        waited = {id(a): a.run_seconds >= latency_seconds * LATENCY_TOLERANCE for a in self.activity_runs}
        return latency_seconds * sum(self._phased(lambda a: float(waited[id(a)])).values())

    def _phased(self, cost) -> dict[str, float]:
        """The chain's model calls in turn, by part, each call costing `cost(activity)`: planner calls
        (leaf, aggregation), write phases (their costliest write), and write phases with the next batch
        planned ahead during them (the costlier of the two)."""
        parts = {"leaf_plans": 0.0, "aggregation_plans": 0.0, "write_phases": 0.0, "overlapped_phases": 0.0}
        slowest_write = ahead = 0.0
        planned_ahead = False

        def close_phase() -> None:
            nonlocal slowest_write, ahead, planned_ahead
            parts["overlapped_phases" if planned_ahead else "write_phases"] += max(slowest_write, ahead)
            slowest_write = ahead = 0.0
            planned_ahead = False

        for activity in self.activity_runs:
            if activity.name == PLAN and activity.ahead:
                ahead += cost(activity)  # a plan ahead split in parts plans them one after the other
                planned_ahead = True
            elif activity.name in PLANNERS:
                close_phase()
                parts["leaf_plans" if activity.name == PLAN else "aggregation_plans"] += cost(activity)
            elif activity.name == WRITE:
                slowest_write = max(slowest_write, cost(activity))
            elif activity.name != NEXT_BATCH:  # the batch read ahead belongs to the phase
                close_phase()
        close_phase()
        return parts

    def model_critical_path_seconds(self, ttft_seconds: float, output_tokens_per_second: float) -> float:
        return round(sum(self.critical_path_parts(ttft_seconds, output_tokens_per_second).values()), 6)

    def critical_path_parts(self, ttft_seconds: float, output_tokens_per_second: float) -> dict[str, float]:
        """The least model time of the chain at a given model speed, by part (`_phased`)."""
        return self._phased(lambda a: a.model_seconds(ttft_seconds, output_tokens_per_second))

    def measured_model_seconds(self) -> float:
        """The model activities' run times (their DB work included) combined as `_phased` combines calls."""
        return sum(self._phased(lambda a: a.run_seconds).values())

    def add_run(self, history: WorkflowHistory) -> None:
        self.runs += 1
        self.events += len(history.events)
        by_schedule: dict[int, ActivityRun] = {}
        current: Batch | None = None
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                attributes = event.activity_task_scheduled_event_attributes
                name = attributes.activity_type.name
                run = ActivityRun(name=name, scheduled=event.event_time.ToDatetime(),
                                  ahead=name == PLAN and _planned_ahead(attributes.input.payloads))
                by_schedule[event.event_id] = run
                current = self._enter(run, current)
            elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                attributes = event.activity_task_started_event_attributes
                run = by_schedule[attributes.scheduled_event_id]
                run.started = event.event_time.ToDatetime()
                if attributes.attempt > 1:
                    self.retries[run.name] += attributes.attempt - 1
                    self.retry_causes[_failure_kind(attributes.last_failure)] += 1
            elif (local := local_activity(event)) is not None:
                name, attempt = local.activity_type, local.attempt
                at = event.event_time.ToDatetime()
                run = ActivityRun(name=name, scheduled=at, started=at, closed=at, local=True)
                current = self._enter(run, current)
                self.activities[name] += 1
                if attempt > 1:
                    self.retries[name] += attempt - 1
                    self.retry_causes["local activity retried"] += 1
                run.output_tokens = self._add_usage(name, local.result)
            elif event.event_type in _ACTIVITY_CLOSED:
                attributes = getattr(event, _ACTIVITY_CLOSED[event.event_type])
                run = by_schedule[attributes.scheduled_event_id]
                run.closed = event.event_time.ToDatetime()
                self.activities[run.name] += 1
                if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
                    run.output_tokens = self._add_usage(run.name, attributes.result.payloads)

    def _enter(self, run: ActivityRun, current: Batch | None) -> Batch | None:
        """Record an activity in the order it was scheduled; `compile.next_batch` opens a new batch."""
        self.activity_runs.append(run)
        if run.name == NEXT_BATCH:
            current = Batch()
            self.batches.append(current)
        if current is not None:
            current.activities.append(run)
        return current

    def _add_usage(self, name: str, payloads) -> int | None:
        """Add a result's token counts to its activity type's; return its output tokens (None: no usage)."""
        output: int | None = None
        for payload in payloads:
            result = json.loads(payload.data) if payload.data else None
            if isinstance(result, dict) and isinstance(result.get("usage"), dict):
                counts = self.usage.setdefault(name, Counter())
                counts.update({k: v for k, v in result["usage"].items() if isinstance(v, int)})
                counts["calls"] += 1
                output = (output or 0) + int(result["usage"].get("output_tokens", 0))
        return output


_ACTIVITY_CLOSED = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "activity_task_completed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "activity_task_failed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "activity_task_timed_out_event_attributes",
}


def _planned_ahead(payloads) -> bool:
    """Whether a leaf plan request names the unapplied plan it was planned after."""
    for payload in payloads:
        request = json.loads(payload.data) if payload.data else None
        if isinstance(request, dict) and request.get("after_plan_id"):
            return True
    return False


def _failure_kind(failure) -> str:
    """"timeout: heartbeat", "LlmThrottled", ...: what made an activity attempt fail."""
    if failure.HasField("timeout_failure_info"):
        return "timeout: " + TimeoutType.Name(failure.timeout_failure_info.timeout_type).removeprefix(
            "TIMEOUT_TYPE_").lower().replace("_", " ")
    if failure.HasField("application_failure_info"):
        return failure.application_failure_info.type or "application error"
    return failure.message or "unknown"
