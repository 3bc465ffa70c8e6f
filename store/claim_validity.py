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
    """Record the plan's marks on the pages of these sections, then re-derive their claims' validity."""
    if not section_ids:
        return
    rows = (await conn.execute(text("""
        SELECT p.id AS page_id, c.id, c.text_key, c.first_seen_at
        FROM wiki_pages p JOIN wiki_page_sections s ON s.page_id = p.id
        JOIN wiki_section_claims c ON c.section_id = s.id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner
          AND p.id IN (SELECT page_id FROM wiki_page_sections WHERE id = ANY(CAST(:sections AS uuid[])))
    """), {"tenant": tenant, "owner": owner, "sections": list(section_ids)})).all()
    keys_by_page: dict[str, set[str]] = {}
    for row in rows:
        keys_by_page.setdefault(str(row.page_id), set()).add(row.text_key)
    marks = [(page, key, replaced) for page, keys in keys_by_page.items() for key in sorted(keys)
             if (claim := proposed.get(key)) is not None
             for replaced in claim.supersedes if replaced in keys and replaced != key]
    if marks:
        await conn.execute(text("""
            INSERT INTO wiki_claim_supersessions (page_id, claim_key, replaced_key, run_id)
            SELECT page_id, claim_key, replaced_key, :run
            FROM unnest(CAST(:pages AS uuid[]), CAST(:keys AS text[]), CAST(:replaced AS text[]))
                AS m(page_id, claim_key, replaced_key)
            ON CONFLICT DO NOTHING
        """), {"run": run_id, "pages": [m[0] for m in marks], "keys": [m[1] for m in marks],
               "replaced": [m[2] for m in marks]})
    await refresh_validity(conn, list(keys_by_page), rows)


async def refresh_validity(conn: AsyncConnection, page_ids: list[str], rows: Sequence[Any] | None = None) -> None:
    """Re-derive the validity of every claim of the pages from their dates and the stored marks."""
    if not page_ids:
        return
    if rows is None:
        rows = (await conn.execute(text("""
            SELECT s.page_id, c.id, c.text_key, c.first_seen_at
            FROM wiki_page_sections s JOIN wiki_section_claims c ON c.section_id = s.id
            WHERE s.page_id = ANY(CAST(:pages AS uuid[]))
        """), {"pages": page_ids})).all()
    marks = (await conn.execute(text("""
        SELECT page_id, claim_key, replaced_key FROM wiki_claim_supersessions
        WHERE page_id = ANY(CAST(:pages AS uuid[]))
    """), {"pages": page_ids})).all()
    marks_by_page: dict[str, list[tuple[str, str]]] = {}
    for mark in marks:
        marks_by_page.setdefault(str(mark.page_id), []).append((mark.claim_key, mark.replaced_key))
    claims_by_page: dict[str, list[DatedClaim]] = {}
    for row in rows:
        claims_by_page.setdefault(str(row.page_id), []).append(
            DatedClaim(id=str(row.id), key=row.text_key, valid_from=row.first_seen_at))
    ids: list[str] = []
    froms: list[datetime | None] = []
    tos: list[datetime | None] = []
    bys: list[str | None] = []
    validities: list[str] = []
    for page, claims in claims_by_page.items():
        standing = standings(claims, marks_by_page.get(page, []))
        for claim in claims:
            ids.append(claim.id)
            froms.append(claim.valid_from)
            tos.append(standing[claim.id].valid_to)
            bys.append(standing[claim.id].superseded_by)
            validities.append(standing[claim.id].validity)
    if not ids:
        return
    await conn.execute(text("""
        UPDATE wiki_section_claims c SET valid_from = v.valid_from, valid_to = v.valid_to,
               superseded_by = v.superseded_by, validity = v.validity
        FROM unnest(CAST(:ids AS uuid[]), CAST(:froms AS timestamptz[]), CAST(:tos AS timestamptz[]),
                    CAST(:bys AS uuid[]), CAST(:validities AS text[]))
            AS v(id, valid_from, valid_to, superseded_by, validity)
        WHERE c.id = v.id AND (c.valid_from, c.valid_to, c.superseded_by, c.validity)
              IS DISTINCT FROM (v.valid_from, v.valid_to, v.superseded_by, v.validity)
    """), {"ids": ids, "froms": froms, "tos": tos, "bys": bys, "validities": validities})


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
