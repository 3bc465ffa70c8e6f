"""Which claims hold now: the plans' supersession marks, and each claim's validity derived from them.

Runs inside apply's transaction, after the claims of the written sections are stored
(`store/claims.py` `sync_claims`): the marks the plan gave its lines (a line replaces an older line
of the same page as the value of one single-valued fact) are kept by page and claim key in
`wiki_claim_supersessions`, then every claim of the touched pages gets its validity from
`domain/facts.py` `standings`: valid from its earliest memory's occurred_at, valid until the claim
that replaced it began, current, superseded or disputed. A mark outlives the plan that made it (a
later batch that rewrites the section still knows which line replaced which); a page deleted (a
rebuild) takes its marks with it, and the rebuild's plans mark again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.facts import DatedClaim, standings
from domain.resolved_plan import ProposedClaim


async def settle_validity(conn: AsyncConnection, tenant: str, owner: str, section_ids: Sequence[str],
                          proposed: dict[str, ProposedClaim], run_id: str | None) -> None:
    """Record the plan's marks on the pages of these sections, then re-derive their claims' validity.
    One read (the pages' claims and stored marks), and a write only for new marks and changed claims."""
    if not section_ids:
        return
    rows = (await conn.execute(text("""
        WITH pages AS (
            SELECT DISTINCT s.page_id FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
            WHERE s.id = ANY(CAST(:sections AS uuid[])) AND p.tenant_id = :tenant AND p.owner_id = :owner
        )
        SELECT 'claim' AS row_kind, s.page_id, c.id, c.text_key, NULL AS replaced_key, c.first_seen_at,
               c.valid_from, c.valid_to, c.superseded_by, c.validity
        FROM pages JOIN wiki_page_sections s ON s.page_id = pages.page_id
        JOIN wiki_section_claims c ON c.section_id = s.id
        UNION ALL
        SELECT 'mark', m.page_id, NULL, m.claim_key, m.replaced_key, NULL, NULL, NULL, NULL, NULL
        FROM pages JOIN wiki_claim_supersessions m ON m.page_id = pages.page_id
    """), {"tenant": tenant, "owner": owner, "sections": list(section_ids)})).all()
    claims = [row for row in rows if row.row_kind == "claim"]
    stored = {(str(row.page_id), row.text_key, row.replaced_key) for row in rows if row.row_kind == "mark"}
    keys_by_page: dict[str, set[str]] = {}
    for row in claims:
        keys_by_page.setdefault(str(row.page_id), set()).add(row.text_key)
    marks = [(page, key, replaced) for page, keys in keys_by_page.items() for key in sorted(keys)
             if (claim := proposed.get(key)) is not None
             for replaced in claim.supersedes if replaced in keys and replaced != key]
    new = [mark for mark in dict.fromkeys(marks) if mark not in stored]
    if new:
        await conn.execute(text("""
            INSERT INTO wiki_claim_supersessions (page_id, claim_key, replaced_key, run_id)
            SELECT page_id, claim_key, replaced_key, :run
            FROM unnest(CAST(:pages AS uuid[]), CAST(:keys AS text[]), CAST(:replaced AS text[]))
                AS m(page_id, claim_key, replaced_key)
            ON CONFLICT DO NOTHING
        """), {"run": run_id, "pages": [m[0] for m in new], "keys": [m[1] for m in new],
               "replaced": [m[2] for m in new]})
    await _write_standings(conn, claims, [*stored, *new])


async def _write_standings(conn: AsyncConnection, rows: Sequence[Any], marks: Sequence[tuple[str, str, str]]) -> None:
    """Each claim's standing from its page's claims and marks, written where it changed."""
    marks_by_page: dict[str, list[tuple[str, str]]] = {}
    for page, key, replaced in marks:
        marks_by_page.setdefault(page, []).append((key, replaced))
    by_page: dict[str, list[Any]] = {}
    for row in rows:
        by_page.setdefault(str(row.page_id), []).append(row)
    changed: list[tuple[str, datetime | None, datetime | None, str | None, str]] = []
    for page, page_rows in by_page.items():
        claims = [DatedClaim(id=str(r.id), key=r.text_key, valid_from=r.first_seen_at) for r in page_rows]
        standing = standings(claims, marks_by_page.get(page, []))
        for row in page_rows:
            now = standing[str(row.id)]
            after = (row.first_seen_at, now.valid_to, now.superseded_by, now.validity)
            before = (row.valid_from, row.valid_to, str(row.superseded_by) if row.superseded_by else None,
                      row.validity)
            if after != before:
                changed.append((str(row.id), *after))
    if not changed:
        return
    await conn.execute(text("""
        UPDATE wiki_section_claims c SET valid_from = v.valid_from, valid_to = v.valid_to,
               superseded_by = v.superseded_by, validity = v.validity
        FROM unnest(CAST(:ids AS uuid[]), CAST(:froms AS timestamptz[]), CAST(:tos AS timestamptz[]),
                    CAST(:bys AS uuid[]), CAST(:validities AS text[]))
            AS v(id, valid_from, valid_to, superseded_by, validity)
        WHERE c.id = v.id
    """), {"ids": [c[0] for c in changed], "froms": [c[1] for c in changed], "tos": [c[2] for c in changed],
           "bys": [c[3] for c in changed], "validities": [c[4] for c in changed]})


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
