"""What a run is judged on: its wiki against the reference, isolation invariants, ledger and history.

- `compare`: two wiki snapshots (tests/compile/helpers.wiki_snapshot: every row of the scope, no
  timestamps) by natural key — rows lost (in the reference, missing here), rows duplicated (here,
  not in the reference: a second page for one thing, a repeated link), rows changed (same key,
  different content).
- `cross_scope_rows`: rows of the whole database that connect two scopes. Always zero.
- `ledger_llm_calls`: planner, section writer and aggregation planner calls the ledger counted.
- `history_stats`: what Temporal saw — activity attempts beyond the first (by type), timeouts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from domain import ids
from runtime.history_events import local_activity

MODEL_ACTIVITY_TYPES = frozenset({"llm.plan_batch", "llm.write_section", "llm.judge_merges", "aggregation.plan"})
LLM_CALL_KEYS = ("planner_calls", "section_writer_calls", "aggregation_planner_calls")

# Natural keys of the rows of each table of `wiki_snapshot` (ids are uuid5 of natural keys).
_KEYS: dict[str, Callable[[tuple], Any]] = {
    "pages": lambda row: row[0],
    "sections": lambda row: row[0],
    "aliases": lambda row: row[:2],
    "links": lambda row: row[:3],
    "mentions": lambda row: row[0],
    "sources": lambda row: row[:3],
    "cursor": lambda row: "cursor",
}


@dataclass
class WikiDiff:
    lost: int = 0
    duplicated: int = 0
    changed: int = 0
    by_table: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        return self.lost == self.duplicated == self.changed == 0

    def describe(self) -> str:
        if self.identical:
            return "identical row for row"
        parts = [f"{table}: {lost} lost, {extra} duplicated, {changed} changed"
                 for table, (lost, extra, changed) in self.by_table.items() if lost or extra or changed]
        return "; ".join(parts)


def compare(result: dict[str, list[tuple]], reference: dict[str, list[tuple]]) -> WikiDiff:
    diff = WikiDiff()
    for table, key_of in _KEYS.items():
        mine = Counter(key_of(row) for row in result.get(table, []))
        theirs = Counter(key_of(row) for row in reference.get(table, []))
        lost = sum((theirs - mine).values())
        extra = sum((mine - theirs).values())
        reference_rows = {key_of(row): row for row in reference.get(table, [])}
        changed = sum(1 for row in result.get(table, [])
                      if key_of(row) in reference_rows and reference_rows[key_of(row)] != row)
        diff.by_table[table] = (lost, extra, changed)
        diff.lost += lost
        diff.duplicated += extra
        diff.changed += changed
    return diff


# ------------------------------------------------------------------------------ isolation invariants

SAME_SCOPE = "(a.tenant_id, a.owner_id) = (b.tenant_id, b.owner_id)"
CROSS_SCOPE_QUERIES = {
    "links between two scopes": f"""
        SELECT count(*) FROM wiki_page_links l
        JOIN wiki_pages a ON a.id = l.from_page_id JOIN wiki_pages b ON b.id = l.to_page_id
        WHERE NOT {SAME_SCOPE}""",
    "parents in another scope": f"""
        SELECT count(*) FROM wiki_pages a JOIN wiki_pages b ON b.id = a.parent_page_id WHERE NOT {SAME_SCOPE}""",
    # A citation must name a memory of its own page's scope; memory ids are unique only within a
    # scope, so the same id in another scope neither satisfies nor breaks this.
    "citations of another scope's memory (or of no memory)": f"""
        SELECT count(*) FROM wiki_section_sources s
        JOIN wiki_page_sections sec ON sec.id = s.section_id JOIN wiki_pages a ON a.id = sec.page_id
        LEFT JOIN memory_units b ON b.id::text = s.source_ref AND {SAME_SCOPE}
        WHERE s.source_kind = 'memory_unit' AND b.id IS NULL""",
    "mentions promoted into another scope's page": f"""
        SELECT count(*) FROM wiki_unresolved_mentions a JOIN wiki_pages b ON b.id = a.promoted_page_id
        WHERE NOT {SAME_SCOPE}""",
    "rollups listing another scope's page": f"""
        SELECT count(*) FROM wiki_page_sections s JOIN wiki_pages a ON a.id = s.page_id
        CROSS JOIN LATERAL jsonb_array_elements_text(coalesce(s.aggregation -> 'linked_page_ids', '[]')) linked(id)
        JOIN wiki_pages b ON b.id::text = linked.id
        WHERE NOT {SAME_SCOPE}""",
    "sections promoted into another scope's page": f"""
        SELECT count(*) FROM wiki_page_sections s JOIN wiki_pages a ON a.id = s.page_id
        JOIN wiki_pages b ON b.id::text = s.aggregation ->> 'promoted_page_id'
        WHERE NOT {SAME_SCOPE}""",
}


async def cross_scope_rows(engine: AsyncEngine) -> dict[str, int]:
    """Every kind of row that would connect two scopes, with its count (all zero when isolated),
    plus pages whose id is not the one derived from their own scope and slug."""
    counts: dict[str, int] = {}
    async with engine.connect() as conn:
        for name, query in CROSS_SCOPE_QUERIES.items():
            counts[name] = (await conn.execute(text(query))).scalar_one()
        pages = (await conn.execute(text("SELECT id, tenant_id, owner_id, type, slug FROM wiki_pages"))).all()
    counts["pages whose id belongs to another scope"] = sum(
        1 for page in pages if page.id != ids.page_id(page.tenant_id, page.owner_id, page.type, page.slug))
    return counts


def isolation_breaches(counts: dict[str, int]) -> int:
    return sum(counts.values())


# ------------------------------------------------------------------------------------ the ledger


async def ledger_rows(engine: AsyncEngine, tenant: str, owner: str) -> list[dict[str, Any]]:
    """A scope's compile runs in the ledger, oldest first (the fault suite's and the benchmarks')."""
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT workflow_id, run_id, trigger, status, metrics, error FROM wiki_compile_jobs
            WHERE tenant_id = :t AND owner_id = :o ORDER BY started_at, run_id
        """), {"t": tenant, "o": owner})
        return [dict(row._mapping) for row in rows]


def ledger_sum(rows: list[dict[str, Any]], *keys: str) -> int:
    return sum(int((row["metrics"] or {}).get(key, 0) or 0) for row in rows for key in keys)


def ledger_llm_calls(rows: list[dict[str, Any]]) -> int:
    return ledger_sum(rows, *LLM_CALL_KEYS)


async def pending_memories(engine: AsyncEngine, tenant: str, owner: str) -> int:
    """Memories of the scope after its cursor: what no compile has read yet."""
    async with engine.connect() as conn:
        return (await conn.execute(text("""
            SELECT count(*) FROM memory_units m
            LEFT JOIN wiki_compile_cursors c ON (c.tenant_id, c.owner_id) = (m.tenant_id, m.owner_id)
            WHERE m.tenant_id = :t AND m.owner_id = :o
              AND (c.last_record_id IS NULL
                   OR (date_trunc('milliseconds', m.updated_at AT TIME ZONE 'UTC'), m.id)
                      > (date_trunc('milliseconds', c.last_record_updated_at AT TIME ZONE 'UTC'), c.last_record_id))
        """), {"t": tenant, "o": owner})).scalar_one()


# ---------------------------------------------------------------------------------- the histories


@dataclass
class HistoryStats:
    runs: int = 0
    events: int = 0
    retried_attempts: Counter = field(default_factory=Counter)  # activity type -> attempts beyond the first
    final_attempts: dict[tuple[str, str], int] = field(default_factory=dict)  # (run id, activity id) -> attempt
    model_calls_used: int = 0  # model activities that completed: the calls whose answer the compile used
    workflow_task_timeouts: int = 0
    workflow_task_failures: int = 0
    activity_timeouts: int = 0
    activity_failures: int = 0

    @property
    def retried_model_attempts(self) -> int:
        return sum(count for kind, count in self.retried_attempts.items() if kind in MODEL_ACTIVITY_TYPES)

    def describe_retries(self) -> str:
        if not self.retried_attempts:
            return "no activity needed a second attempt"
        return ", ".join(f"{kind} ×{count}" for kind, count in sorted(self.retried_attempts.items()))


async def history_stats(client: Client, workflow_id: str, run_ids: list[str]) -> HistoryStats:
    """Read every run's history: how many activity attempts were repeated, and why."""
    stats = HistoryStats(runs=len(run_ids))
    for run_id in run_ids:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        scheduled: dict[int, tuple[str, str]] = {}
        for event in history.events:
            stats.events += 1
            kind = event.event_type
            if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                attributes = event.activity_task_scheduled_event_attributes
                scheduled[event.event_id] = (attributes.activity_type.name, attributes.activity_id)
            elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                attributes = event.activity_task_started_event_attributes
                activity_type, activity_id = scheduled[attributes.scheduled_event_id]
                stats.final_attempts[(run_id, activity_id)] = attributes.attempt
                if attributes.attempt > 1:
                    stats.retried_attempts[activity_type] += attributes.attempt - 1
            elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
                attributes = event.activity_task_completed_event_attributes
                if scheduled[attributes.scheduled_event_id][0] in MODEL_ACTIVITY_TYPES:
                    stats.model_calls_used += 1
            elif (local := local_activity(event)) is not None:
                if local.attempt > 1:
                    stats.retried_attempts[local.activity_type] += local.attempt - 1
            elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
                stats.workflow_task_timeouts += 1
            elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
                stats.workflow_task_failures += 1
            elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
                stats.activity_timeouts += 1
            elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
                stats.activity_failures += 1
    return stats
