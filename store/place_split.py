"""One name, two places: a proposal whose page name is taken by a page placed elsewhere gets its own.

When a proposed page's (type, slug) is already a page of the scope, and the place records of the
memories the proposal cites are all in cities none of that page's memories is in ("Piari Coffee" in
Tucson beside a Piari Coffee in Raleigh), the proposal is a second place of that name: it is titled
with its city ("Piari Coffee (Tucson)") and compared from there, so the ladder meets the two on the
qualifier rung and the judge decides (it keeps them apart unless the evidence joins them).
`proposal_as_resolved` applies this after an operator's merge (store/page_merges.py).
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.aliases import normalize_alias, slugify_title, title_in_city
from store.merge_records import Proposal
from store.page_merges import follow_operator_merge


async def _cities(conn: AsyncConnection, tenant: str, owner: str, refs: list[str]) -> list[str]:
    rows = await conn.execute(text("""
        SELECT DISTINCT metadata -> 'place' ->> 'city' AS city FROM memory_units
        WHERE tenant_id = :tenant AND owner_id = :owner AND id::text = ANY(CAST(:ids AS text[]))
          AND metadata -> 'place' ->> 'city' IS NOT NULL
    """), {"tenant": tenant, "owner": owner, "ids": refs})
    return sorted(row.city for row in rows if normalize_alias(row.city))


async def _page_cities(conn: AsyncConnection, tenant: str, owner: str, page_type: str, slug: str) -> list[str] | None:
    """The cities of the memories the scope's page (type, slug) cites; None when there is no such page."""
    rows = (await conn.execute(text("""
        SELECT DISTINCT m.metadata -> 'place' ->> 'city' AS city
        FROM wiki_pages p LEFT JOIN wiki_page_sections s ON s.page_id = p.id
        LEFT JOIN wiki_section_sources ss ON ss.section_id = s.id AND ss.source_kind = 'memory_unit'
        LEFT JOIN memory_units m ON m.tenant_id = p.tenant_id AND m.owner_id = p.owner_id AND m.id::text = ss.source_ref
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.type = :type AND p.slug = :slug
    """), {"tenant": tenant, "owner": owner, "type": page_type, "slug": slug})).all()
    if not rows:
        return None
    return sorted(row.city for row in rows if row.city and normalize_alias(row.city))


async def proposal_as_resolved(conn: AsyncConnection, tenant: str, owner: str, proposal: Proposal) -> Proposal:
    """The proposal after an operator's merge of its slug, and split from a same-named page elsewhere."""
    proposal = await follow_operator_merge(conn, tenant, owner, proposal)
    if not proposal.refs:
        return proposal
    theirs = await _page_cities(conn, tenant, owner, proposal.type, proposal.slug)
    if not theirs:
        return proposal
    mine = await _cities(conn, tenant, owner, list(proposal.refs))
    if not mine or {normalize_alias(c) for c in mine} & {normalize_alias(c) for c in theirs}:
        return proposal
    title = title_in_city(proposal.title, mine[0])
    plain = normalize_alias(proposal.title)
    return replace(proposal, title=title, slug=slugify_title(title) or proposal.slug,
                   aliases=tuple(a for a in proposal.aliases if normalize_alias(a) != plain))
