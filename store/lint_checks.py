"""The nightly lint's reads and ledger writes over every scope.

Each check counts findings per scope in one statement; scopes are paged in (tenant, owner) order so
that no result grows with the number of scopes. The page checks (provenance and bodies) also list
the pages behind their counts, a bounded number per scope.
"""

from __future__ import annotations

import json

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from domain import ids
from domain.lint import (
    MAX_PAGES_PER_CHECK,
    MAX_PROMOTIONS_PER_SCOPE,
    NAMED_PER_CHECK,
    OVERSIZE_BODY_CHARS,
    RETRYING_ATTEMPTS,
    RETRYING_WITHIN_HOURS,
    STALE_DAYS,
    CheckCount,
    LintCheck,
    LintChecks,
    LintChecksInput,
    LintFinding,
    PageCheck,
    PageFinding,
    PromotionCandidate,
    RecordLintInput,
)
from domain.promotion import PROMOTION_MIN_SIGHTINGS, PROMOTION_WINDOW_DAYS
from store.compile_attempts import prune_attempts

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
    # Groups (scope, type, alias) carried by more than one active page: one count per ambiguous alias.
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
    "promotion_candidates": """
        SELECT tenant_id AS tenant, owner_id AS owner, count(*) AS count FROM wiki_unresolved_mentions
        WHERE status = 'open' AND mention_count >= :min_count
          AND NOT EXISTS (SELECT 1 FROM wiki_scope_switches w WHERE w.tenant_id = wiki_unresolved_mentions.tenant_id
                          AND w.owner_id = wiki_unresolved_mentions.owner_id AND w.paused_at IS NOT NULL)
          AND last_seen_at >= now() - make_interval(days => :within_days)
        GROUP BY tenant_id, owner_id
    """,
    # Steps of a compile still running whose attempts keep failing or timing out (activities/attempts.py).
    "retrying_steps": """
        SELECT a.tenant_id AS tenant, a.owner_id AS owner, count(DISTINCT (a.run_id, a.activity_id)) AS count
        FROM wiki_compile_attempts a
        JOIN wiki_compile_jobs j ON j.run_id = a.run_id AND j.status = 'running'
        WHERE a.attempt >= :retrying_attempts AND a.recorded_at >= now() - make_interval(hours => :retrying_hours)
        GROUP BY a.tenant_id, a.owner_id
    """,
}
# Page checks: (tenant, owner, page, count) for each active page with a finding. Their scope counts
# are the sums; _PAGES lists the most affected pages of each scope of the page of scopes.
_UUID_TEXT = "'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'"
_PAGE_OF = "p.tenant_id AS tenant, p.owner_id AS owner, p.type || '/' || p.slug AS page"
_PAGE_CHECK_QUERIES: dict[PageCheck, str] = {
    "unsourced_sections": f"""
        SELECT {_PAGE_OF}, count(*) AS count
        FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.status = 'active'
          AND NOT EXISTS (SELECT 1 FROM wiki_section_sources src WHERE src.section_id = s.id)
        GROUP BY p.tenant_id, p.owner_id, p.type, p.slug
    """,
    # A citation must name a memory of the page's own scope (by primary key, never by text scan).
    "foreign_sources": f"""
        SELECT {_PAGE_OF}, count(*) AS count
        FROM wiki_section_sources src
        JOIN wiki_page_sections s ON s.id = src.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.status = 'active' AND src.source_kind = 'memory_unit'
          AND NOT EXISTS (
              SELECT 1 FROM memory_units m
              WHERE m.id = CASE WHEN src.source_ref ~ {_UUID_TEXT} THEN CAST(src.source_ref AS uuid) END
                AND m.tenant_id = p.tenant_id AND m.owner_id = p.owner_id)
        GROUP BY p.tenant_id, p.owner_id, p.type, p.slug
    """,
    "repeated_lines": f"""
        SELECT {_PAGE_OF}, sum(repeats.extra)::bigint AS count
        FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
        CROSS JOIN LATERAL (
            SELECT count(*) - count(DISTINCT btrim(line)) AS extra
            FROM regexp_split_to_table(s.body_md, E'\\n') AS line WHERE btrim(line) <> ''
        ) repeats
        WHERE p.status = 'active' AND repeats.extra > 0
        GROUP BY p.tenant_id, p.owner_id, p.type, p.slug
    """,
    "raw_html": f"""
        SELECT {_PAGE_OF}, count(*) AS count
        FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.status = 'active' AND s.body_md ~ '<[A-Za-z/!?]'
        GROUP BY p.tenant_id, p.owner_id, p.type, p.slug
    """,
}
_CHECK_QUERIES.update({check: f"SELECT tenant, owner, sum(count)::bigint AS count FROM ({query}) paged GROUP BY tenant, owner"
                       for check, query in _PAGE_CHECK_QUERIES.items()})
# A paused scope (`wiki scope pause`) is left alone: no findings, no compile woken for it.
_NOT_PAUSED = """NOT EXISTS (SELECT 1 FROM wiki_scope_switches w WHERE w.tenant_id = found.tenant
                                  AND w.owner_id = found.owner AND w.paused_at IS NOT NULL)"""
_PAGES = """
    SELECT tenant, owner, page, count FROM (
        SELECT found.*, row_number() OVER (PARTITION BY tenant, owner ORDER BY count DESC, page COLLATE "C") AS rank,
               dense_rank() OVER (ORDER BY tenant COLLATE "C", owner COLLATE "C") AS scope_rank
        FROM ({query}) found
        WHERE (tenant COLLATE "C", owner COLLATE "C") > (:after_tenant, :after_owner) AND {_NOT_PAUSED}
    ) ranked WHERE rank <= :pages_per_check AND scope_rank <= :scope_limit
    ORDER BY tenant COLLATE "C", owner COLLATE "C", rank
""".replace("{_NOT_PAUSED}", _NOT_PAUSED)
_CANDIDATES = """
    SELECT tenant, owner, id FROM (
        SELECT tenant_id AS tenant, owner_id AS owner, id,
               row_number() OVER (PARTITION BY tenant_id, owner_id
                                  ORDER BY mention_count DESC, last_seen_at DESC, id) AS rank,
               dense_rank() OVER (ORDER BY tenant_id COLLATE "C", owner_id COLLATE "C") AS scope_rank
        FROM wiki_unresolved_mentions
        WHERE status = 'open' AND mention_count >= :min_count
          AND NOT EXISTS (SELECT 1 FROM wiki_scope_switches w WHERE w.tenant_id = wiki_unresolved_mentions.tenant_id
                          AND w.owner_id = wiki_unresolved_mentions.owner_id AND w.paused_at IS NOT NULL)
          AND last_seen_at >= now() - make_interval(days => :within_days)
          AND (tenant_id COLLATE "C", owner_id COLLATE "C") > (:after_tenant, :after_owner)
    ) ranked WHERE rank <= :per_scope AND scope_rank <= :scope_limit
    ORDER BY tenant COLLATE "C", owner COLLATE "C", rank
"""
_THRESHOLDS = {"stale_days": STALE_DAYS, "oversize_chars": OVERSIZE_BODY_CHARS, "min_count": PROMOTION_MIN_SIGHTINGS,
               "within_days": PROMOTION_WINDOW_DAYS, "per_scope": MAX_PROMOTIONS_PER_SCOPE,
               "pages_per_check": MAX_PAGES_PER_CHECK, "retrying_attempts": RETRYING_ATTEMPTS,
               "retrying_hours": RETRYING_WITHIN_HOURS}


def _page(query: str) -> str:
    return f"""
        SELECT tenant, owner, count FROM ({query}) found
        WHERE (tenant COLLATE "C", owner COLLATE "C") > (:after_tenant, :after_owner) AND {_NOT_PAUSED}
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
            pages = [
                PageFinding(tenant=row.tenant, owner=row.owner, page=row.page, check=check, count=row.count)
                for check, query in _PAGE_CHECK_QUERIES.items()
                for row in await conn.execute(text(_PAGES.format(query=query)), params)
            ]
    return LintChecks(counts=counts, candidates=candidates, pages=pages)


async def prune_ledger(engine: AsyncEngine, retention_days: int) -> int:
    """Ledger rows older than the retention; a run still open keeps its row, and a forget's receipt
    (the proof of a deletion) is kept."""
    async with engine.begin() as conn:
        pruned = await conn.execute(text("""
            DELETE FROM wiki_compile_jobs
            WHERE status <> 'running' AND kind <> 'forget' AND created_at < now() - make_interval(days => :days)
        """), {"days": retention_days})
        await prune_attempts(conn, retention_days)
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


# The findings behind each check's count, named, for one scope: (subject pages or name, detail) rows in
# the order a reader would fix them. Same conditions as _CHECK_QUERIES.
_NAMED_QUERIES: dict[LintCheck, str] = {
    # A target in another scope is never named: its slug belongs to that scope.
    "broken_links": """
        SELECT ARRAY[f.type || '/' || f.slug] AS subject,
               CASE WHEN t.id IS NULL THEN 'links to a page that no longer exists'
                    WHEN t.tenant_id <> f.tenant_id OR t.owner_id <> f.owner_id THEN 'links to a page of another scope'
                    ELSE 'links to ' || t.type || '/' || t.slug || ', which is archived' END AS detail
        FROM wiki_page_links l
        JOIN wiki_pages f ON f.id = l.from_page_id
        LEFT JOIN wiki_pages t ON t.id = l.to_page_id
        WHERE f.tenant_id = :tenant AND f.owner_id = :owner
          AND (t.id IS NULL OR t.status <> 'active' OR t.tenant_id <> f.tenant_id OR t.owner_id <> f.owner_id)
        ORDER BY f.type, f.slug, detail
    """,
    "duplicate_aliases": """
        SELECT array_agg(DISTINCT p.type || '/' || p.slug) AS subject,
               'share the alias "' || a.alias || '"' AS detail
        FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
        WHERE p.status = 'active' AND p.tenant_id = :tenant AND p.owner_id = :owner
        GROUP BY p.type, a.alias HAVING count(DISTINCT p.id) > 1
        ORDER BY a.alias, p.type
    """,
    "duplicate_titles": """
        SELECT array_agg(type || '/' || slug ORDER BY type, slug) AS subject,
               'share the title "' || title || '"' AS detail
        FROM wiki_pages WHERE status = 'active' AND tenant_id = :tenant AND owner_id = :owner
        GROUP BY title HAVING count(*) > 1
        ORDER BY title
    """,
    "stale_pages": """
        SELECT ARRAY[type || '/' || slug] AS subject,
               'last updated ' || to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') || ', '
               || (current_date - CAST(updated_at AS date)) || ' days ago' AS detail
        FROM wiki_pages
        WHERE status = 'active' AND tenant_id = :tenant AND owner_id = :owner
          AND updated_at < now() - make_interval(days => :stale_days)
        ORDER BY updated_at, type, slug
    """,
    "oversize_pages": f"""
        SELECT ARRAY[type || '/' || slug] AS subject,
               'body of ' || length(body_md) || ' characters (the limit is {OVERSIZE_BODY_CHARS})' AS detail
        FROM wiki_pages
        WHERE status = 'active' AND tenant_id = :tenant AND owner_id = :owner AND length(body_md) > :oversize_chars
        ORDER BY length(body_md) DESC, type, slug
    """,
    "promotion_candidates": """
        SELECT ARRAY[alias] AS subject,
               'mentioned ' || mention_count || ' times, last on '
               || to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') || '; not a page yet' AS detail
        FROM wiki_unresolved_mentions
        WHERE status = 'open' AND tenant_id = :tenant AND owner_id = :owner AND mention_count >= :min_count
          AND last_seen_at >= now() - make_interval(days => :within_days)
        ORDER BY mention_count DESC, last_seen_at DESC, alias
    """,
    "retrying_steps": """
        SELECT ARRAY[a.activity_type] AS subject,
               a.step || ': attempt ' || a.attempt || ', the last ' || replace(a.outcome, '_', ' ')
               || coalesce(' (' || nullif(a.error_type, '') || ')', '') || ' at '
               || to_char(a.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') || ' UTC' AS detail
        FROM (SELECT DISTINCT ON (run_id, activity_id) * FROM wiki_compile_attempts
              WHERE tenant_id = :tenant AND owner_id = :owner AND attempt >= :retrying_attempts
                AND recorded_at >= now() - make_interval(hours => :retrying_hours)
              ORDER BY run_id, activity_id, attempt DESC) a
        JOIN wiki_compile_jobs j ON j.run_id = a.run_id AND j.status = 'running'
        ORDER BY a.attempt DESC, a.activity_type, a.step
    """,
}


async def named_findings(engine: AsyncEngine, tenant: str, owner: str,
                         per_check: int = NAMED_PER_CHECK) -> list[LintFinding]:
    """What the checks found in one scope, by name: at most `per_check` findings per check."""
    params = {**_THRESHOLDS, "tenant": tenant, "owner": owner, "limit": per_check}
    findings: list[LintFinding] = []
    async with engine.connect() as conn:
        for check, query in _NAMED_QUERIES.items():
            for row in await conn.execute(text(f"{query} LIMIT :limit"), params):
                findings.append(LintFinding(check=check, tenant=tenant, owner=owner, subject=list(row.subject),
                                            detail=row.detail))
    return findings


async def checked_counts(engine: AsyncEngine) -> tuple[int, int]:
    """(scopes, active pages) a lint checks: every scope with a page."""
    async with engine.connect() as conn:
        row = (await conn.execute(text(
            "SELECT count(DISTINCT (tenant_id, owner_id)) AS scopes, "
            "count(*) FILTER (WHERE status = 'active') AS pages FROM wiki_pages"))).one()
    return int(row.scopes), int(row.pages)

