"""Which claims hold when: the plans' supersession marks, checked, and each claim's intervals derived
from them.

Runs inside apply's transaction, after the claims of the written sections are stored
(`store/claims.py` `sync_claims`). A mark says a line replaces an older line of the same page as the
value of one attribute; apply keeps it (by page and claim key, with the planner's reason, in
`wiki_claim_supersessions`) only when the replaced claim exists on that page and is older by when
its memories happened (its first memory no later than the replacing claim's last): any other mark
is refused and counted. Then every claim of the touched pages gets its standing from
`domain/fact_validity.py` `standings`, from the moments of all the memories citing it: the
intervals in which it held (`valid_during`), the latest interval's bounds, whether it holds now,
and which claim replaced it. A mark outlives the plan that made it (a later batch that rewrites the
section still knows which line replaced which); a page deleted (a rebuild) takes its marks with it,
and the rebuild's plans mark again. Pairs the offline rules could not tell apart are kept as marks of
kind `unsure`: they change no standing, and the lint names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.fact_validity import DatedClaim, Interval, standings
from domain.resolved_plan import ProposedClaim


@dataclass
class MarkCounts:
    """What apply did with a plan's marks: kept, and refused (the replaced claim was not on the
    page, or was newer than the line replacing it)."""

    marked: int = 0
    refused: int = 0


@dataclass(frozen=True)
class _Mark:
    page: str
    key: str
    replaced: str
    reason: str | None
    kind: str = "replaces"


def _candidates(page: str, keys: set[str], proposed: dict[str, ProposedClaim]) -> list[_Mark]:
    """The marks the plan asks for on one page: (replacing key, replaced key), either end a line of
    the plan or a claim already on the page."""
    out = []
    for key in sorted(keys):
        claim = proposed.get(key)
        if claim is None:
            continue
        out += [_Mark(page, key, replaced, claim.reasons.get(replaced)) for replaced in claim.supersedes]
        out += [_Mark(page, replacing, key, None) for replacing in claim.superseded_by]
        out += [_Mark(page, key, other, None, "unsure") for other in claim.unsure]
    return out


async def settle_validity(conn: AsyncConnection, tenant: str, owner: str, section_ids: Sequence[str],
                          proposed: dict[str, ProposedClaim], run_id: str | None) -> MarkCounts:
    """Check and record the plan's marks on the pages of these sections, then re-derive their
    claims' standing. One read (the pages' claims with their memories' moments, and stored marks),
    and a write only for new marks and changed claims."""
    counts = MarkCounts()
    if not section_ids:
        return counts
    rows = (await conn.execute(text("""
        WITH pages AS (
            SELECT DISTINCT s.page_id FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
            WHERE s.id = ANY(CAST(:sections AS uuid[])) AND p.tenant_id = :tenant AND p.owner_id = :owner
        )
        SELECT 'claim' AS row_kind, s.page_id, c.id, c.text_key, NULL AS replaced_key, NULL AS mark_kind,
               c.first_seen_at, c.valid_from, c.valid_to, c.superseded_by, c.validity, c.valid_during,
               (SELECT array_agg(DISTINCT m.created_at) FROM wiki_claim_sources cs
                JOIN memory_units m ON m.tenant_id = :tenant AND m.owner_id = :owner AND m.id::text = cs.memory_id
                WHERE cs.claim_id = c.id) AS moments
        FROM pages JOIN wiki_page_sections s ON s.page_id = pages.page_id
        JOIN wiki_section_claims c ON c.section_id = s.id
        UNION ALL
        SELECT 'mark', m.page_id, NULL, m.claim_key, m.replaced_key, m.kind, NULL, NULL, NULL, NULL, NULL, NULL,
               NULL
        FROM pages JOIN wiki_claim_supersessions m ON m.page_id = pages.page_id
    """), {"tenant": tenant, "owner": owner, "sections": list(section_ids)})).all()
    claims = [row for row in rows if row.row_kind == "claim"]
    stored = {(str(row.page_id), row.text_key, row.replaced_key): row.mark_kind for row in rows
              if row.row_kind == "mark"}
    keys_by_page: dict[str, set[str]] = {}
    moments: dict[tuple[str, str], list[datetime]] = {}
    for row in claims:
        keys_by_page.setdefault(str(row.page_id), set()).add(row.text_key)
        moments.setdefault((str(row.page_id), row.text_key), []).extend(row.moments or [])
    new: list[_Mark] = []
    asked: dict[tuple[str, str], bool] = {}  # (key, replaced) of a "replaces" mark -> kept on some page
    for page, keys in keys_by_page.items():
        for mark in _candidates(page, keys, proposed):
            pair = (mark.key, mark.replaced)
            if mark.kind == "replaces":
                asked.setdefault(pair, False)
            if mark.key == mark.replaced or mark.key not in keys or mark.replaced not in keys:
                continue
            if mark.kind == "replaces" and not _older(moments.get((page, mark.replaced), []),
                                                      moments.get((page, mark.key), [])):
                continue
            if mark.kind == "replaces":
                asked[pair] = True
            if stored.get((page, mark.key, mark.replaced)) in (mark.kind, "replaces"):
                continue
            new.append(mark)
    counts.marked = sum(1 for mark in new if mark.kind == "replaces")
    counts.refused = sum(1 for kept in asked.values() if not kept)
    new = list({(m.page, m.key, m.replaced): m for m in new}.values())
    if new:
        await conn.execute(text("""
            INSERT INTO wiki_claim_supersessions (page_id, claim_key, replaced_key, run_id, reason, kind)
            SELECT page_id, claim_key, replaced_key, :run, reason, kind
            FROM unnest(CAST(:pages AS uuid[]), CAST(:keys AS text[]), CAST(:replaced AS text[]),
                        CAST(:reasons AS text[]), CAST(:kinds AS text[]))
                AS m(page_id, claim_key, replaced_key, reason, kind)
            ON CONFLICT (page_id, claim_key, replaced_key) DO UPDATE
                SET kind = excluded.kind, reason = coalesce(excluded.reason, wiki_claim_supersessions.reason),
                    run_id = excluded.run_id
        """), {"run": run_id, "pages": [m.page for m in new], "keys": [m.key for m in new],
               "replaced": [m.replaced for m in new], "reasons": [m.reason for m in new],
               "kinds": [m.kind for m in new]})
    marks = {(page, key, replaced) for (page, key, replaced), kind in stored.items() if kind == "replaces"}
    marks |= {(m.page, m.key, m.replaced) for m in new if m.kind == "replaces"}
    await _write_standings(conn, claims, marks)
    return counts


def _older(replaced: list[datetime], replacing: list[datetime]) -> bool:
    """Whether the replaced claim is the older: its first memory happened no later than the
    replacing claim's last (equal moments are kept, as rivals of one moment: disputed). A claim with
    no dated memory cannot be ordered and is kept (disputed too)."""
    if not replaced or not replacing:
        return True
    return min(replaced) <= max(replacing)


def _same_intervals(stored: Any, intervals: Sequence[Interval]) -> bool:
    """Whether the stored multirange (asyncpg's list of ranges) holds exactly these intervals."""
    if stored is None:
        return False
    return [(r.lower, r.upper) for r in stored] == list(intervals)


async def _write_standings(conn: AsyncConnection, rows: Sequence[Any], marks: set[tuple[str, str, str]]) -> None:
    """Each claim's standing from its page's claims and marks, written where it changed."""
    marks_by_page: dict[str, list[tuple[str, str]]] = {}
    for page, key, replaced in marks:
        marks_by_page.setdefault(page, []).append((key, replaced))
    by_page: dict[str, list[Any]] = {}
    for row in rows:
        by_page.setdefault(str(row.page_id), []).append(row)
    changed: list[tuple[str, datetime | None, datetime | None, str | None, str, Sequence[Interval]]] = []
    for page, page_rows in by_page.items():
        claims = [DatedClaim(id=str(r.id), key=r.text_key, valid_from=r.first_seen_at,
                             asserted=tuple(r.moments or ())) for r in page_rows]
        standing = standings(claims, sorted(marks_by_page.get(page, [])))
        for row in page_rows:
            now = standing[str(row.id)]
            after = (now.valid_from, now.valid_to, now.superseded_by, now.validity)
            before = (row.valid_from, row.valid_to, str(row.superseded_by) if row.superseded_by else None,
                      row.validity)
            if after != before or not _same_intervals(row.valid_during, now.intervals):
                changed.append((str(row.id), *after, now.intervals))
    if not changed:
        return
    spans = [(claim_id, start, end) for claim_id, *_, intervals in changed for start, end in intervals]
    await conn.execute(text("""
        WITH spans AS (
            SELECT id, range_agg(tstzrange(f, t, '[)')) AS during
            FROM unnest(CAST(:span_ids AS uuid[]), CAST(:span_froms AS timestamptz[]),
                        CAST(:span_tos AS timestamptz[])) AS i(id, f, t)
            GROUP BY id
        )
        UPDATE wiki_section_claims c SET valid_from = v.valid_from, valid_to = v.valid_to,
               superseded_by = v.superseded_by, validity = v.validity, valid_during = spans.during
        FROM unnest(CAST(:ids AS uuid[]), CAST(:froms AS timestamptz[]), CAST(:tos AS timestamptz[]),
                    CAST(:bys AS uuid[]), CAST(:validities AS text[]))
            AS v(id, valid_from, valid_to, superseded_by, validity)
        JOIN spans ON spans.id = v.id
        WHERE c.id = v.id
    """), {"ids": [c[0] for c in changed], "froms": [c[1] for c in changed], "tos": [c[2] for c in changed],
           "bys": [c[3] for c in changed], "validities": [c[4] for c in changed],
           "span_ids": [s[0] for s in spans], "span_froms": [s[1] for s in spans], "span_tos": [s[2] for s in spans]})


async def disputed_claims(conn: AsyncConnection, limit: int = 100, tenant: str | None = None,
                          owner: str | None = None) -> list[dict[str, Any]]:
    """Disputed claims (facts that conflict with no clear order) of active pages, by scope and page."""
    rows = await conn.execute(text("""
        SELECT p.tenant_id, p.owner_id, p.type || '/' || p.slug AS page, s.section_slug, c.text, c.valid_from
        FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id
        JOIN wiki_pages p ON p.id = s.page_id
        WHERE c.validity = 'disputed' AND p.status = 'active'
          AND (CAST(:tenant AS text) IS NULL OR (p.tenant_id = :tenant AND p.owner_id = :owner))
        ORDER BY p.tenant_id COLLATE "C", p.owner_id COLLATE "C", p.type COLLATE "C", p.slug COLLATE "C", s.position,
                 c.position
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "limit": limit})
    return [{"tenant": r.tenant_id, "owner": r.owner_id, "page": r.page, "section": r.section_slug, "text": r.text,
             "valid_from": r.valid_from.isoformat() if r.valid_from else None} for r in rows]


async def unsure_pairs(conn: AsyncConnection, limit: int = 100, tenant: str | None = None,
                       owner: str | None = None) -> list[dict[str, Any]]:
    """Pairs of current claims of one page that may be one fact replacing another, which the rules
    could not tell apart and kept both current: (page, line, line), for a person to look at."""
    rows = await conn.execute(text("""
        SELECT p.tenant_id, p.owner_id, p.type || '/' || p.slug AS page,
               (SELECT c.text FROM wiki_page_sections s JOIN wiki_section_claims c ON c.section_id = s.id
                WHERE s.page_id = p.id AND c.text_key = m.claim_key AND c.validity <> 'superseded'
                ORDER BY c.id LIMIT 1) AS line,
               (SELECT c.text FROM wiki_page_sections s JOIN wiki_section_claims c ON c.section_id = s.id
                WHERE s.page_id = p.id AND c.text_key = m.replaced_key AND c.validity <> 'superseded'
                ORDER BY c.id LIMIT 1) AS other
        FROM wiki_claim_supersessions m JOIN wiki_pages p ON p.id = m.page_id
        WHERE m.kind = 'unsure' AND p.status = 'active'
          AND (CAST(:tenant AS text) IS NULL OR (p.tenant_id = :tenant AND p.owner_id = :owner))
        ORDER BY p.tenant_id COLLATE "C", p.owner_id COLLATE "C", p.type COLLATE "C", p.slug COLLATE "C",
                 m.claim_key COLLATE "C", m.replaced_key COLLATE "C"
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "limit": limit})
    return [{"tenant": r.tenant_id, "owner": r.owner_id, "page": r.page, "line": r.line, "other": r.other}
            for r in rows if r.line and r.other]
