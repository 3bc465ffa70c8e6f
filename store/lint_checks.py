"""The nightly lint's reads and ledger writes over every scope.

Each check counts findings per scope in one statement; scopes are paged in (tenant, owner) order so
that no result grows with the number of scopes.
"""

from __future__ import annotations

import json

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from domain import ids
from domain.lint import (
    MAX_PROMOTIONS_PER_SCOPE,
    OVERSIZE_BODY_CHARS,
    PROVENANCE_PAGES_PER_SCOPE,
    STALE_DAYS,
    CheckCount,
    LintCheck,
    LintChecks,
    LintChecksInput,
    PageProvenance,
    PromotionCandidate,
    RecordLintInput,
)
from domain.promotion import PROMOTION_MIN_SIGHTINGS, PROMOTION_WINDOW_DAYS

# Provenance problems of the active pages, one row per (page, problem). A section cites nothing while it
# has text (rendered link lists, a rollup's or a promoted section's, cite no memory of their own); a
# citation names a memory the scope does not hold; a rollup cites a memory none of its member pages cites.
_PROVENANCE_PROBLEMS = """
    WITH sections AS (
        SELECT p.tenant_id AS tenant, p.owner_id AS owner, p.id AS page_id, s.id AS section_id, s.body_md,
               coalesce(s.aggregation -> 'linked_page_ids', '[]'::jsonb) AS linked,
               coalesce(s.aggregation ->> 'promotion_status', 'none') AS promotion
        FROM wiki_pages p JOIN wiki_page_sections s ON s.page_id = p.id
        WHERE p.status = 'active'
    )
    SELECT tenant, owner, page_id, 'uncited' AS problem, count(*) AS n FROM sections sec
    WHERE btrim(body_md) <> '' AND jsonb_array_length(linked) = 0 AND promotion <> 'promoted'
      AND NOT EXISTS (SELECT 1 FROM wiki_section_sources ss WHERE ss.section_id = sec.section_id)
    GROUP BY tenant, owner, page_id
    UNION ALL
    SELECT sec.tenant, sec.owner, sec.page_id, 'missing', count(*) FROM sections sec
    JOIN wiki_section_sources ss ON ss.section_id = sec.section_id AND ss.source_kind = 'memory_unit'
    WHERE NOT EXISTS (
        SELECT 1 FROM memory_units m WHERE m.tenant_id = sec.tenant AND m.owner_id = sec.owner
          AND m.id = CASE WHEN ss.source_ref ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$'
                          THEN CAST(ss.source_ref AS uuid) END)
    GROUP BY sec.tenant, sec.owner, sec.page_id
    UNION ALL
    SELECT sec.tenant, sec.owner, sec.page_id, 'stray', count(*) FROM sections sec
    JOIN wiki_section_sources ss ON ss.section_id = sec.section_id
    WHERE jsonb_array_length(sec.linked) > 0 AND NOT EXISTS (
        SELECT 1 FROM wiki_page_sections member JOIN wiki_section_sources ms ON ms.section_id = member.id
        WHERE member.page_id IN (SELECT CAST(linked_id AS uuid) FROM jsonb_array_elements_text(sec.linked) AS linked_id)
          AND ms.source_ref = ss.source_ref)
    GROUP BY sec.tenant, sec.owner, sec.page_id
"""
# The pages with problems of the page of scopes being checked, most problems first, a few per scope.
_PROVENANCE_PAGES = f"""
    SELECT tenant, owner, type, slug, title, uncited, missing, stray FROM (
        SELECT f.tenant, f.owner, p.type, p.slug, p.title,
               sum(f.n) FILTER (WHERE f.problem = 'uncited') AS uncited,
               sum(f.n) FILTER (WHERE f.problem = 'missing') AS missing,
               sum(f.n) FILTER (WHERE f.problem = 'stray') AS stray,
               row_number() OVER (PARTITION BY f.tenant, f.owner ORDER BY sum(f.n) DESC, p.type, p.slug) AS rank,
               dense_rank() OVER (ORDER BY f.tenant COLLATE "C", f.owner COLLATE "C") AS scope_rank
        FROM ({_PROVENANCE_PROBLEMS}) f JOIN wiki_pages p ON p.id = f.page_id
        WHERE (f.tenant COLLATE "C", f.owner COLLATE "C") > (:after_tenant, :after_owner)
        GROUP BY f.tenant, f.owner, p.type, p.slug, p.title
    ) ranked WHERE rank <= :provenance_per_scope AND scope_rank <= :scope_limit
    ORDER BY tenant COLLATE "C", owner COLLATE "C", rank
"""

# Each query returns (tenant, owner, count) for the scopes with at least one finding; _page() keeps the
# scopes after the previous page's last one. Scope order is bytewise (COLLATE "C"), the order Python
# sorts the same ASCII ids in, so the workflow and the database agree on where a page ends.
_CHECK_QUERIES: dict[LintCheck, str] = {
    # A link is broken when its target is gone, archived, or (never written, but checked) in another scope.
    "broken_links": """
        SELECT f.tenant_id AS tenant, f.owner_id AS owner, count(*) AS count
        FROM wiki_page_links l
        JOIN wiki_pages f ON f.id = l.from_page_id
        LEFT JOIN wiki_pages t ON t.id = l.to_page_id AND t.status = 'active'
             AND t.tenant_id = f.tenant_id AND t.owner_id = f.owner_id
        WHERE t.id IS NULL
        GROUP BY f.tenant_id, f.owner_id
    """,
    # Groups (scope, type, alias) carried by more than one active page, as the original counts them.
    "duplicate_aliases": """
        SELECT tenant, owner, count(*) AS count FROM (
            SELECT p.tenant_id AS tenant, p.owner_id AS owner
            FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
            WHERE p.status = 'active'
            GROUP BY p.tenant_id, p.owner_id, p.type, a.alias HAVING count(DISTINCT p.id) > 1
        ) duplicated GROUP BY tenant, owner
    """,
    # duplicate_candidates_count: exact titles shared by active pages of one scope.
    "duplicate_titles": """
        SELECT tenant, owner, count(*) AS count FROM (
            SELECT tenant_id AS tenant, owner_id AS owner FROM wiki_pages WHERE status = 'active'
            GROUP BY tenant_id, owner_id, title HAVING count(*) > 1
        ) duplicated GROUP BY tenant, owner
    """,
    "stale_pages": """
        SELECT tenant_id AS tenant, owner_id AS owner, count(*) AS count FROM wiki_pages
        WHERE status = 'active' AND updated_at < now() - make_interval(days => :stale_days)
        GROUP BY tenant_id, owner_id
    """,
    "oversize_pages": """
        SELECT tenant_id AS tenant, owner_id AS owner, count(*) AS count FROM wiki_pages
        WHERE status = 'active' AND length(body_md) > :oversize_chars
        GROUP BY tenant_id, owner_id
    """,
    "provenance_problems": f"""
        SELECT tenant, owner, count(DISTINCT page_id) AS count FROM ({_PROVENANCE_PROBLEMS}) problems
        GROUP BY tenant, owner
    """,
    "promotion_candidates": """
        SELECT tenant_id AS tenant, owner_id AS owner, count(*) AS count FROM wiki_unresolved_mentions
        WHERE status = 'open' AND mention_count >= :min_count
          AND last_seen_at >= now() - make_interval(days => :within_days)
        GROUP BY tenant_id, owner_id
    """,
}
_CANDIDATES = """
    SELECT tenant, owner, id FROM (
        SELECT tenant_id AS tenant, owner_id AS owner, id,
               row_number() OVER (PARTITION BY tenant_id, owner_id
                                  ORDER BY mention_count DESC, last_seen_at DESC, id) AS rank,
               dense_rank() OVER (ORDER BY tenant_id COLLATE "C", owner_id COLLATE "C") AS scope_rank
        FROM wiki_unresolved_mentions
        WHERE status = 'open' AND mention_count >= :min_count
          AND last_seen_at >= now() - make_interval(days => :within_days)
          AND (tenant_id COLLATE "C", owner_id COLLATE "C") > (:after_tenant, :after_owner)
    ) ranked WHERE rank <= :per_scope AND scope_rank <= :scope_limit
    ORDER BY tenant COLLATE "C", owner COLLATE "C", rank
"""
_THRESHOLDS = {"stale_days": STALE_DAYS, "oversize_chars": OVERSIZE_BODY_CHARS, "min_count": PROMOTION_MIN_SIGHTINGS,
               "within_days": PROMOTION_WINDOW_DAYS, "per_scope": MAX_PROMOTIONS_PER_SCOPE,
               "provenance_per_scope": PROVENANCE_PAGES_PER_SCOPE}


def _page(query: str) -> str:
    return f"""
        SELECT tenant, owner, count FROM ({query}) found
        WHERE (tenant COLLATE "C", owner COLLATE "C") > (:after_tenant, :after_owner)
        ORDER BY tenant COLLATE "C", owner COLLATE "C"
        LIMIT :scope_limit
    """


async def check_scopes(engine: AsyncEngine, page: LintChecksInput) -> LintChecks:
    """Every check's counts and the promotion candidates of one page of scopes, from one snapshot."""
    params = {**_THRESHOLDS, "after_tenant": page.after_tenant, "after_owner": page.after_owner,
              "scope_limit": page.scope_limit}
    async with engine.connect() as conn:
        # One snapshot for every check, so the counts of a page agree with each other.
        await conn.execution_options(isolation_level="REPEATABLE READ")
        async with conn.begin():
            counts = [
                CheckCount(check=check, tenant=row.tenant, owner=row.owner, count=row.count)
                for check, query in _CHECK_QUERIES.items()
                for row in await conn.execute(text(_page(query)), params)
            ]
            candidates = [
                PromotionCandidate(tenant=row.tenant, owner=row.owner, mention_id=row.id)
                for row in await conn.execute(text(_CANDIDATES), params)
            ]
            provenance = [
                PageProvenance(tenant=row.tenant, owner=row.owner, type=row.type, slug=row.slug, title=row.title,
                               uncited_sections=row.uncited or 0, missing_sources=row.missing or 0,
                               stray_rollup_sources=row.stray or 0)
                for row in await conn.execute(text(_PROVENANCE_PAGES), params)
            ]
    return LintChecks(counts=counts, candidates=candidates, provenance_pages=provenance)


async def prune_ledger(engine: AsyncEngine, retention_days: int) -> int:
    """Ledger rows older than the retention; a run still open keeps its row."""
    async with engine.begin() as conn:
        pruned = await conn.execute(text("""
            DELETE FROM wiki_compile_jobs
            WHERE status <> 'running' AND created_at < now() - make_interval(days => :days)
        """), {"days": retention_days})
    return pruned.rowcount


async def record_lint_run(engine: AsyncEngine, request: RecordLintInput) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("""
            INSERT INTO wiki_compile_jobs (id, kind, workflow_id, run_id, trigger, status, metrics, error,
                                           started_at, finished_at)
            VALUES (:id, 'lint', :workflow_id, :run_id, :trigger, :status, CAST(:metrics AS jsonb), :error,
                    :started_at, now())
            ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, metrics = excluded.metrics,
                error = excluded.error, finished_at = excluded.finished_at
        """), {"id": ids.ledger_id(request.run_id), "workflow_id": request.workflow_id,
               "run_id": request.run_id, "trigger": request.trigger, "status": request.status,
               "metrics": json.dumps(request.metrics), "error": request.error,
               "started_at": request.started_at})
