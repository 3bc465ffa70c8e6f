"""Inputs and outputs of the compile workflow and its activities.

Everything here travels through Temporal history, so it carries ids, cursors and counters only —
memory texts, plans and section bodies stay in Postgres (the plan staging table).
New fields always get defaults so recorded histories keep decoding.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, Field

from domain.pricing import TokenCounts

Trigger = Literal["memory_retain", "bootstrap_import", "admin", "lint", "resume", "rebuild", "forget"]


class Scope(BaseModel):
    tenant: str
    owner: str

    @property
    def workflow_id(self) -> str:
        return compile_workflow_id(self.tenant, self.owner)


def encode_scope_part(part: str) -> str:
    """A scope part with no ':' left in it, reversibly: '%' becomes %25 first, then ':' becomes %3A.

    Tenant and owner may contain ':', so joining them raw is ambiguous: (x:y, z) and (x, y:z) would
    both give `x:y:z`. Encoded parts contain no ':', so the joined key splits back into exactly one
    (tenant, owner). A part with neither character is unchanged, so every key of such a scope is the
    same as before the encoding existed.
    """
    return part.replace("%", "%25").replace(":", "%3A")


def compile_workflow_id(tenant: str, owner: str) -> str:
    """`compile:{tenant}:{owner}` with each part encoded: injective over scopes (the id is the lock)."""
    return f"compile:{encode_scope_part(tenant)}:{encode_scope_part(owner)}"


def decode_scope_part(part: str) -> str:
    """The inverse of `encode_scope_part`: %3A back to ':' first (an encoded '%' is always %25), then %25."""
    return part.replace("%3A", ":").replace("%25", "%")


def scope_of_workflow_id(workflow_id: str) -> Scope:
    """The scope a `compile_workflow_id` names."""
    _, tenant, owner = workflow_id.split(":", 2)
    return Scope(tenant=decode_scope_part(tenant), owner=decode_scope_part(owner))


# The Int search attribute carrying a compile run's number (1, then +1 at each continue-as-new), so the
# runs of one scope can be told apart in a list of workflows.
WIKI_RUN_ATTRIBUTE = "WikiRun"


def run_summary(scope: Scope, run_no: int, trigger: str) -> str:
    """One line naming a compile run: the workflow's summary, and the first line of its details."""
    return f"compile {scope.tenant}/{scope.owner} · run {run_no} · trigger {trigger}"


class RunCaps(BaseModel):
    """Per-run limits: hitting one applies the batch in hand, then continues as new."""

    page_size: int = 50
    max_records: int = 500
    max_new_pages: int = 25
    max_sections_rewritten: int = 100
    section_writer_concurrency: int = 32
    max_candidate_pages: int = 200


class CompileOptions(BaseModel):
    """What the client decides from its settings (workflows cannot read the environment)."""

    model_id: str = "claude-haiku-4-5"
    debounce_seconds: float = 0.0
    caps: RunCaps = Field(default_factory=RunCaps)
    aggregation_enabled: bool = True
    deterministic_linking_enabled: bool = True
    llm_retry_budget_seconds: int = 3600
    # How fast a dead worker is noticed: every activity heartbeats; tests lower this.
    heartbeat_timeout_seconds: float = 10.0
    # Model activities on their own task queue: workers of that queue enforce a global model rate
    # limit (max_task_queue_activities_per_second). None: the compile's own queue.
    llm_task_queue: str | None = None
    # Triggers whose leaf plans go through Message Batches (half price, minutes to hours of latency);
    # empty when batch mode is off or the provider has none (Bedrock, the scripted planner).
    batch_triggers: list[Trigger] = Field(default_factory=list)
    # How often a pending Message Batch is polled (a fixed-interval activity retry).
    batch_poll_seconds: float = 60.0
    # Plan batch n + 1 while batch n's sections are written (docs/ARCHITECTURE.md, "Overlap"); off:
    # strictly one batch after the other.
    overlap_planning: bool = True


class SubmittedPlan(BaseModel):
    """A leaf plan request sent in a Message Batch: the batch it travels in and its request id."""

    batch_id: str
    custom_id: str


class CompileInput(BaseModel):
    scope: Scope
    trigger: Trigger = "memory_retain"
    options: CompileOptions = Field(default_factory=CompileOptions)
    # Carried across continue-as-new: wake-ups not yet served and lint's promotion requests.
    carried_wakeups: int = 0
    promotion_mention_ids: list[UUID] = Field(default_factory=list)
    run_no: int = 1
    # A plan request waiting in a Message Batch when the run continued as new (none: runs continue
    # between batches, so this stays None today; it is carried so a batch is never submitted twice).
    pending_batch: SubmittedPlan | None = None
    # A forget or edit request is waiting in wiki_forget_requests for this scope's next pass.
    forget_pending: bool = False
    # When this chain of runs read its first batch, and the scope's memories compiled then: the
    # rate its progress estimate uses spans the whole chain, not one run.
    import_started_at: datetime | None = None
    compiled_at_import_start: int | None = None


class WakeUp(BaseModel):
    """A reason to compile: new memories were retained, an operator asked, or lint found candidates."""

    trigger: Trigger = "memory_retain"
    memory_count: int = 0
    promotion_mention_ids: list[UUID] = Field(default_factory=list)
    model_id: str | None = None
    # A forget or an edit was queued (wiki_forget_requests): served between batches, before compiling on.
    forget: bool = False


def _uuid_int(value: UUID | None) -> int:
    return -1 if value is None else value.int


class CursorPosition(BaseModel):
    """(ms-truncated updated_at, id) of the last memory compiled; both None before the first."""

    updated_at: datetime | None = None
    record_id: UUID | None = None

    def at_or_after(self, other: CursorPosition) -> bool:
        """Keyset order, as the memory store reads: (updated_at, id), uuids compared as Postgres does
        (byte by byte, which is their integer order); the start comes before every position."""
        if other.updated_at is None:
            return True
        if self.updated_at is None:
            return False
        return (self.updated_at, _uuid_int(self.record_id)) >= (other.updated_at, _uuid_int(other.record_id))

    def label(self) -> str:
        if self.updated_at is None:
            return "start"
        return f"{self.updated_at.isoformat(timespec='milliseconds')}/{str(self.record_id)[:8]}"


class BatchRef(BaseModel):
    cursor_from: CursorPosition
    memory_ids: list[UUID]
    # positions[i] is the cursor after memory_ids[i]; a split batch advances to its last part's end.
    positions: list[CursorPosition]
    # The scope's memories, and those at or before `cursor_from` (compiled), when the batch was read:
    # the compile's progress. None in histories recorded before they were counted.
    scope_memories: int | None = None
    memories_before: int | None = None


class RunRecord(BaseModel):
    scope: Scope
    workflow_id: str
    run_id: str
    trigger: str
    model_id: str


class NextBatchInput(BaseModel):
    scope: Scope
    limit: int
    # Read after this position rather than the stored cursor: the batch after one not applied yet,
    # read to be planned while that one's sections are written.
    after: CursorPosition | None = None


class PlanBatchInput(BaseModel):
    scope: Scope
    plan_id: UUID
    run_id: str
    memory_ids: list[UUID]
    model_id: str
    max_candidate_pages: int = 200
    promotion_mention_ids: list[UUID] = Field(default_factory=list)
    # A resolved plan of the previous batch, not applied yet (planned ahead, while its sections are
    # written): the planner is shown the wiki as that plan leaves it, its section writer's sections
    # still as they were (store/plan_preview.py).
    after_plan_id: UUID | None = None
    deterministic_linking_enabled: bool = True


class PlanBatchResult(BaseModel):
    plan_id: UUID
    usage: TokenCounts
    planner_input_chars: int = 0
    dropped_invalid_links: int = 0
    # The verification gate (activities/claim_gate.py): lines kept out of the plan, lines the judge
    # scored, and whether the judge failed (its lines then stay unverified). Its tokens are in `usage`.
    claims_rejected: int = 0
    claims_judged: int = 0
    claim_judge_failed: bool = False
    claims_dropped_invalid_refs: int = 0  # in sections the gate removed whole (the resolver never sees them)
    # New pages and promotions the plan proposes: with none, no merge needs judging. None from
    # workers before the merge judge (then the judge runs anyway).
    merge_proposals: int | None = None


class JudgeMergesInput(BaseModel):
    scope: Scope
    plan_id: UUID
    model_id: str
    # A bulk compile's call through a Message Batch (activities/deferred_calls.py): the result may then
    # name the batch to wait for instead, and the activity is run again once it has ended.
    via_batch: bool = False


class JudgeMergesResult(BaseModel):
    plan_id: UUID
    questions: int = 0  # ambiguous pairs asked (0: no model call)
    judged_same: int = 0
    usage: TokenCounts = Field(default_factory=TokenCounts)
    pending_batch_id: str | None = None  # asked with via_batch: the Message Batch the call waits in


class PollBatchInput(BaseModel):
    batch_id: str


class CollectPlanInput(BaseModel):
    scope: Scope
    plan_id: UUID
    custom_id: str


class ResolvePlanInput(BaseModel):
    scope: Scope
    plan_id: UUID


class ResolvePlanResult(BaseModel):
    plan_id: UUID
    section_tasks: list[str] = Field(default_factory=list)
    new_pages_planned: int = 0
    sections_skipped: int = 0
    dropped_invalid_ids: int = 0
    alias_dedup_merged: int = 0
    fuzzy_dedupe_merges: int = 0
    promotions_refused: int = 0
    # The resolution ladder (domain/resolution.py): merges on its other confident rungs (core, reorder,
    # typo), ambiguous pairs the judge called one thing or two, and ambiguous pairs nobody judged.
    ladder_merges: int = 0
    judged_merges: int = 0
    judged_apart: int = 0
    unjudged_merge_pairs: int = 0


class WriteSectionInput(BaseModel):
    scope: Scope
    plan_id: UUID
    task_key: str
    model_id: str
    # A bulk compile's call through a Message Batch (activities/deferred_calls.py): the result may then
    # name the batch to wait for instead, and the activity is run again once it has ended.
    via_batch: bool = False


class WriteSectionResult(BaseModel):
    task_key: str
    usage: TokenCounts
    pending_batch_id: str | None = None  # asked with via_batch: the Message Batch the call waits in


class ApplyBatchInput(BaseModel):
    scope: Scope
    plan_id: UUID | None  # None: nothing to write, only move the cursor (a skipped memory)
    cursor_expected: CursorPosition
    cursor_next: CursorPosition
    deterministic_linking_enabled: bool = True


class ApplyBatchResult(BaseModel):
    already_applied: bool = False
    pages_created: int = 0
    pages_upserted: int = 0
    sections_rewritten: int = 0
    sections_written: int = 0
    unresolved_upserted: int = 0
    unresolved_promoted: int = 0
    links_upserted: int = 0
    links_written_deterministic: int = 0
    links_written_co_mention: int = 0
    dropped_invalid_ids: int = 0
    # A plan's marks that a line replaces an older one: kept, and refused (the replaced claim is not
    # on the page, or is newer than the line).
    supersessions_marked: int = 0
    supersessions_refused: int = 0
    touched_page_ids: list[UUID] = Field(default_factory=list)


class FinishRunInput(BaseModel):
    scope: Scope
    run_id: str
    status: Literal["succeeded", "failed", "continued"]
    metrics: dict[str, float | int | str | bool | list[str]] = Field(default_factory=dict)
    error: str | None = None


class FinishRunResult(BaseModel):
    duplicate_candidates_count: int = 0


class Progress(BaseModel):
    scope: Scope
    run_no: int
    trigger: str
    phase: str
    cursor: str
    batches_done: int
    records_read: int
    pending_wakeups: int
    caps: RunCaps
    pages_created: int
    sections_rewritten: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    # While debouncing: when the compile starts unless another retain arrives first.
    debounce_until: datetime | None = None
    # The scope's memories compiled of its total, as of the last batch read and applied since, and
    # the estimate of the time left at this chain's rate so far (domain/progress.py); None until known.
    memories_compiled: int | None = None
    memories_total: int | None = None
    memories_per_second: float | None = None
    seconds_left: float | None = None


class CapacityInput(BaseModel):
    scope: Scope


class WorkerCapacityReport(BaseModel):
    """What the worker that answered runs at once (app/capacity.py)."""

    activity_slots: int
    section_writes: int  # a batch's section writes it keeps in flight
    cpu_threads: int = 1


class AggregationPlanInput(BaseModel):
    scope: Scope
    plan_id: UUID
    run_id: str
    model_id: str
    # The memories this run compiled: the keyset range after `cursor_from`, `record_count` long.
    cursor_from: CursorPosition
    record_count: int
    # The pages this run touched, oldest first: the last 60 are the planner's "recently changed
    # pages". Ids rather than a time window, so the same memories always aggregate the same way.
    changed_page_ids: list[UUID] = Field(default_factory=list)
    # A bulk compile's call through a Message Batch (activities/deferred_calls.py): the result may then
    # name the batch to wait for instead, and the activity is run again once it has ended.
    via_batch: bool = False


class AggregationPlanResult(BaseModel):
    plan_id: UUID
    usage: TokenCounts
    deterministic_parents_derived: int = 0
    pages_considered: int = 0
    skipped: bool = False  # nothing to aggregate: no pages and no candidates
    pending_batch_id: str | None = None  # asked with via_batch: the Message Batch the call waits in


class AggregationResolveResult(BaseModel):
    plan_id: UUID
    section_tasks: list[str] = Field(default_factory=list)
    dropped_invalid_ids: int = 0
    duplicate_candidates_cross_type: int = 0
    rollup_children_rejected: int = 0
    promotions_refused: int = 0


class AggregationApplyInput(BaseModel):
    scope: Scope
    plan_id: UUID


class AggregationApplyResult(BaseModel):
    already_applied: bool = False
    pages_created: int = 0
    pages_upserted: int = 0
    parent_sections_updated: int = 0
    sections_rewritten: int = 0
    sections_promoted: int = 0
    links_upserted: int = 0
    hubs_rescored: int = 0
