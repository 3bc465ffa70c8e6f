"""What one scope's wiki looks like, read from Postgres: the numbers `wiki demo` and `wiki status` print."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from domain.lint import RETRYING_ATTEMPTS
from messages.compile import Scope
from store.compile_attempts import RetriedStep, attempt_counts, retried_steps

TITLES_PER_TYPE = 6


@dataclass
class JobRow:
    """A ledger row of any scope or kind (lint rows have no tenant or owner)."""

    kind: str
    tenant: str | None
    owner: str | None
    workflow_id: str
    run_id: str
    trigger: str
    status: str
    metrics: dict[str, Any]
    error: str | None
    started_at: datetime
    finished_at: datetime | None


@dataclass
class HubSummary:
    """A page with rollup sections: what the aggregation pass built."""

    title: str
    slug: str
    hubness: int
    rollups: list[tuple[str, int, str]]  # (section heading, linked pages, promotion status)
    children: list[str]  # titles of pages promoted out of it


@dataclass
class ScopeReport:
    pages_by_type: dict[str, int] = field(default_factory=dict)
    links_by_kind: dict[str, int] = field(default_factory=dict)
    mentions_by_status: dict[str, int] = field(default_factory=dict)
    sections: int = 0
    section_sources: int = 0
    alias_dedup_merged: int = 0
    fuzzy_dedupe_merges: int = 0
    ladder_merges: int = 0  # the resolution ladder's other confident rungs (core, reorder, typo)
    judged_merges: int = 0
    judged_apart: int = 0
    titles_by_type: dict[str, list[str]] = field(default_factory=dict)
    ledger: list[JobRow] = field(default_factory=list)
    memories: int = 0
    pending_memories: int = 0
    hubs: list[HubSummary] = field(default_factory=list)
    parent_sections_updated: int = 0
    sections_promoted: int = 0


_PAGES_BY_TYPE = """
    SELECT type, count(*) FROM wiki_pages
    WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active' GROUP BY type
"""
_LINKS_BY_KIND = """
    SELECT l.kind, count(*) FROM wiki_page_links l JOIN wiki_pages p ON p.id = l.from_page_id
    WHERE p.tenant_id = :tenant AND p.owner_id = :owner GROUP BY l.kind
"""
_MENTIONS_BY_STATUS = """
    SELECT status, count(*) FROM wiki_unresolved_mentions
    WHERE tenant_id = :tenant AND owner_id = :owner GROUP BY status
"""
_SECTIONS = """
    SELECT count(DISTINCT s.id), count(src.id)
    FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
    LEFT JOIN wiki_section_sources src ON src.section_id = s.id
    WHERE p.tenant_id = :tenant AND p.owner_id = :owner
"""
# The best-connected pages first: they are the ones a reader would open.
_TOP_TITLES = """
    SELECT type, title FROM (
        SELECT p.type, p.title, row_number() OVER (
            PARTITION BY p.type
            ORDER BY (SELECT count(*) FROM wiki_page_links l WHERE l.to_page_id = p.id) DESC, p.title
        ) AS rank
        FROM wiki_pages p WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
    ) ranked WHERE rank <= :per_type ORDER BY type, rank
"""
_LEDGER = """
    SELECT kind, tenant_id AS tenant, owner_id AS owner, workflow_id, run_id, trigger, status, metrics, error,
           started_at, finished_at
    FROM wiki_compile_jobs
    WHERE kind = 'compile' AND tenant_id = :tenant AND owner_id = :owner
    ORDER BY started_at, id
"""
_HUBS = """
    SELECT p.id, p.title, p.slug, p.hubness_score,
           json_agg(json_build_object('heading', s.heading,
                                      'linked', jsonb_array_length(coalesce(s.aggregation->'linked_page_ids', '[]')),
                                      'status', coalesce(s.aggregation->>'promotion_status', 'none'))
                    ORDER BY s.position) AS rollups,
           coalesce((SELECT json_agg(c.title ORDER BY c.title) FROM wiki_pages c WHERE c.parent_page_id = p.id),
                    '[]') AS children
    FROM wiki_pages p JOIN wiki_page_sections s ON s.page_id = p.id AND s.aggregation IS NOT NULL
    WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
    GROUP BY p.id ORDER BY p.hubness_score DESC, p.title
"""
# Same keyset as the compile's scan (memory_store._KEYSET_SQL): what the next compile would read.
_MEMORIES = """
    SELECT count(*) AS total,
           count(*) FILTER (WHERE c.last_record_id IS NULL OR
               (date_trunc('milliseconds', m.updated_at AT TIME ZONE 'UTC'), m.id)
               > (c.last_record_updated_at AT TIME ZONE 'UTC', c.last_record_id)) AS pending
    FROM memory_units m
    LEFT JOIN wiki_compile_cursors c ON c.tenant_id = m.tenant_id AND c.owner_id = m.owner_id
    WHERE m.tenant_id = :tenant AND m.owner_id = :owner
"""


_JOBS = """
    SELECT kind, tenant_id AS tenant, owner_id AS owner, workflow_id, run_id, trigger, status, metrics, error,
           started_at, finished_at
    FROM wiki_compile_jobs
    WHERE (CAST(:tenant AS text) IS NULL OR tenant_id = :tenant)
      AND (CAST(:owner AS text) IS NULL OR owner_id = :owner)
      AND (CAST(:status AS text) IS NULL OR status = :status)
    ORDER BY started_at DESC, id
    LIMIT :limit
"""
# Scopes whose most recent compile run is in one of :statuses (`running` included, it is a run that
# was terminated or timed out before it could close its row, unless it is really still running).
_SCOPES_BY_LATEST_STATUS = """
    SELECT tenant, owner, status FROM (
        SELECT DISTINCT ON (tenant_id, owner_id) tenant_id AS tenant, owner_id AS owner, status
        FROM wiki_compile_jobs WHERE kind = 'compile'
        ORDER BY tenant_id, owner_id, started_at DESC, id
    ) latest WHERE status = ANY(CAST(:statuses AS text[])) ORDER BY tenant, owner
"""


async def _counts(conn: AsyncConnection, sql: str, scope: dict[str, str]) -> dict[str, int]:
    return {key: count for key, count in (await conn.execute(text(sql), scope)).all()}


async def ledger_rows(conn: AsyncConnection, tenant: str, owner: str) -> list[JobRow]:
    rows = (await conn.execute(text(_LEDGER), {"tenant": tenant, "owner": owner})).all()
    return [JobRow(**row._mapping) for row in rows]


async def list_jobs(conn: AsyncConnection, *, tenant: str | None = None, owner: str | None = None,
                    status: str | None = None, limit: int = 20) -> list[JobRow]:
    """The ledger, newest first, optionally of one tenant / owner / status."""
    rows = await conn.execute(text(_JOBS), {"tenant": tenant, "owner": owner, "status": status, "limit": limit})
    return [JobRow(**row._mapping) for row in rows]


async def latest_compile_status(conn: AsyncConnection, tenant: str, owner: str) -> str | None:
    return (await conn.execute(text("""
        SELECT status FROM wiki_compile_jobs WHERE kind = 'compile' AND tenant_id = :tenant AND owner_id = :owner
        ORDER BY started_at DESC, id LIMIT 1
    """), {"tenant": tenant, "owner": owner})).scalar_one_or_none()


async def scopes_by_latest_status(conn: AsyncConnection, statuses: list[str]) -> list[tuple[str, str]]:
    rows = await conn.execute(text(_SCOPES_BY_LATEST_STATUS), {"statuses": statuses})
    return [(row.tenant, row.owner) for row in rows]


async def memory_counts(conn: AsyncConnection, tenant: str, owner: str) -> tuple[int, int]:
    """(memories stored, memories after the compile cursor) for the scope."""
    row = (await conn.execute(text(_MEMORIES), {"tenant": tenant, "owner": owner})).one()
    return row.total, row.pending


async def scope_report(engine: AsyncEngine, tenant: str, owner: str) -> ScopeReport:
    scope = {"tenant": tenant, "owner": owner}
    async with engine.connect() as conn:
        report = ScopeReport(
            pages_by_type=await _counts(conn, _PAGES_BY_TYPE, scope),
            links_by_kind=await _counts(conn, _LINKS_BY_KIND, scope),
            mentions_by_status=await _counts(conn, _MENTIONS_BY_STATUS, scope),
            ledger=await ledger_rows(conn, tenant, owner),
        )
        report.sections, report.section_sources = (await conn.execute(text(_SECTIONS), scope)).one()
        for page_type, title in await conn.execute(text(_TOP_TITLES), {**scope, "per_type": TITLES_PER_TYPE}):
            report.titles_by_type.setdefault(page_type, []).append(title)
        report.memories, report.pending_memories = await memory_counts(conn, tenant, owner)
        report.hubs = [
            HubSummary(title=row.title, slug=row.slug, hubness=row.hubness_score,
                       rollups=[(r["heading"], r["linked"], r["status"]) for r in row.rollups],
                       children=list(row.children))
            for row in await conn.execute(text(_HUBS), scope)
        ]
    report.alias_dedup_merged = sum(int(row.metrics.get("alias_dedup_merged", 0)) for row in report.ledger)
    report.fuzzy_dedupe_merges = sum(int(row.metrics.get("fuzzy_dedupe_merges", 0)) for row in report.ledger)
    report.ladder_merges = sum(int(row.metrics.get("ladder_merges", 0)) for row in report.ledger)
    report.judged_merges = sum(int(row.metrics.get("judged_merges", 0)) for row in report.ledger)
    report.judged_apart = sum(int(row.metrics.get("judged_apart", 0)) for row in report.ledger)
    report.parent_sections_updated = sum(int(r.metrics.get("parent_sections_updated", 0)) for r in report.ledger)
    report.sections_promoted = sum(int(r.metrics.get("sections_promoted", 0)) for r in report.ledger)
    return report


@dataclass
class RedoneWork:
    """A run's activity attempts that did not complete (activities/attempts.py), and its steps retried
    RETRYING_ATTEMPTS times or more."""

    timed_out: int = 0
    cancelled: int = 0
    failed: int = 0
    retrying: list[RetriedStep] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.timed_out or self.cancelled or self.failed)


async def redone_work(conn: AsyncConnection, tenant: str, owner: str, run_id: str) -> RedoneWork:
    scope = Scope(tenant=tenant, owner=owner)
    counts = await attempt_counts(conn, scope, run_id)
    return RedoneWork(timed_out=counts["timed_out"], cancelled=counts["cancelled"], failed=counts["failed"],
                      retrying=await retried_steps(conn, scope, run_id, RETRYING_ATTEMPTS))
