"""Claims as rows: each written section's lines, with their own citations, confidence and status.

`sync_claims` runs inside apply's transaction after the sections and their sources are written: it
attributes every line of each written section (`domain.claims.attribute_body`) and replaces the
section's claim rows. A claim cites only memories the section cites, so `wiki_section_sources` stays
the union of its claims' citations (a derived line cites all of them). The gate's rejections are
recorded by `record_rejected_claims` and read back by `rejected_claims`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain import ids
from domain.claims import ClaimDraft, Evidence, KnownClaim, attribute_body, confidence, evidence_of
from domain.resolved_plan import ProposedClaim


async def memory_evidence(conn: AsyncConnection, tenant: str, owner: str, refs: Sequence[str]) -> dict[str, Evidence]:
    """The evidence of the scope's memories among `refs` (text ids), with when each happened."""
    wanted = list(dict.fromkeys(str(r) for r in refs))
    if not wanted:
        return {}
    rows = await conn.execute(text("""
        SELECT id::text AS id, content, metadata, created_at FROM memory_units
        WHERE tenant_id = :tenant AND owner_id = :owner AND id::text = ANY(CAST(:ids AS text[]))
    """), {"tenant": tenant, "owner": owner, "ids": wanted})
    return {row.id: evidence_of(row.id, row.content, row.metadata, row.created_at) for row in rows}


async def sync_claims(conn: AsyncConnection, tenant: str, owner: str, section_ids: Sequence[Any],
                      proposed: dict[str, ProposedClaim], run_id: str | None, now: datetime) -> None:
    """Re-attribute the claims of the given sections of the scope from their stored bodies."""
    section_ids = list(dict.fromkeys(str(s) for s in section_ids))
    if not section_ids:
        return
    sections = (await conn.execute(text("""
        SELECT s.id, s.body_md, p.title,
               coalesce((SELECT array_agg(a.alias) FROM wiki_page_aliases a WHERE a.page_id = p.id), '{}') AS aliases,
               coalesce((SELECT array_agg(src.source_ref ORDER BY src.source_ref) FROM wiki_section_sources src
                         WHERE src.section_id = s.id AND src.source_kind = 'memory_unit'), '{}') AS refs
        FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
        WHERE s.id = ANY(CAST(:ids AS uuid[])) AND p.tenant_id = :tenant AND p.owner_id = :owner
    """), {"ids": section_ids, "tenant": tenant, "owner": owner})).all()
    evidence = await memory_evidence(conn, tenant, owner, [r for s in sections for r in s.refs])
    known = await _known_claims(conn, [str(s.id) for s in sections])
    drafts: dict[str, list[ClaimDraft]] = {}
    for section in sections:
        sources = [evidence[r] for r in section.refs if r in evidence]
        drafts[str(section.id)] = attribute_body(section.body_md, sources, proposed, known.get(str(section.id), {}),
                                                 [section.title, *section.aliases])
    await write_claims(conn, tenant, owner, drafts, evidence, run_id, now)


async def _known_claims(conn: AsyncConnection, section_ids: list[str]) -> dict[str, dict[str, KnownClaim]]:
    rows = await conn.execute(text("""
        SELECT c.section_id::text AS section_id, c.text_key, c.status, c.kind,
               coalesce(array_agg(cs.memory_id ORDER BY cs.memory_id) FILTER (WHERE cs.memory_id IS NOT NULL), '{}') AS refs
        FROM wiki_section_claims c LEFT JOIN wiki_claim_sources cs ON cs.claim_id = c.id
        WHERE c.section_id = ANY(CAST(:ids AS uuid[]))
        GROUP BY c.id
    """), {"ids": section_ids})
    out: dict[str, dict[str, KnownClaim]] = {}
    for row in rows:
        claims = out.setdefault(row.section_id, {})
        earlier = claims.get(row.text_key)
        refs = tuple(dict.fromkeys([*(earlier.refs if earlier else ()), *row.refs]))
        claims[row.text_key] = KnownClaim(refs=refs, status=row.status, kind=row.kind)
    return out


async def write_claims(conn: AsyncConnection, tenant: str, owner: str, drafts: dict[str, list[ClaimDraft]],
                       evidence: dict[str, Evidence], run_id: str | None, now: datetime) -> None:
    """Replace the claim rows of each section in `drafts` (an unchanged claim keeps its id and
    creating run)."""
    rows: list[dict[str, Any]] = []
    cited: list[tuple[str, str]] = []
    for section_id, claims in drafts.items():
        for position, claim in enumerate(claims, 1):
            claim_id = str(ids.claim_id(UUID(section_id), claim.key, claim.occurrence))
            days = [evidence[r].happened for r in claim.refs if r in evidence and evidence[r].happened]
            rows.append({"id": claim_id, "section": section_id, "position": position, "text": claim.text,
                         "key": claim.key, "kind": claim.kind, "status": claim.status,
                         "confidence": confidence(len(claim.refs)), "corroboration": len(claim.refs),
                         "first": min(days) if days else None, "last": max(days) if days else None})
            cited += [(claim_id, ref) for ref in claim.refs]
    keep = [row["id"] for row in rows]
    await conn.execute(text("""
        DELETE FROM wiki_section_claims
        WHERE section_id = ANY(CAST(:sections AS uuid[])) AND NOT (id = ANY(CAST(:keep AS uuid[])))
    """), {"sections": list(drafts), "keep": keep})
    await conn.execute(text("DELETE FROM wiki_claim_sources WHERE claim_id = ANY(CAST(:keep AS uuid[]))"),
                       {"keep": keep})
    if not rows:
        return
    await conn.execute(text("""
        INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, status, confidence,
                                         corroboration, first_seen_at, last_seen_at, created_run_id,
                                         updated_run_id, created_at, updated_at)
        SELECT id, section_id, position, text, text_key, kind, status, confidence, corroboration,
               first_seen_at, last_seen_at, :run, :run, :now, :now
        FROM unnest(CAST(:ids AS uuid[]), CAST(:sections AS uuid[]), CAST(:positions AS integer[]),
                    CAST(:texts AS text[]), CAST(:keys AS text[]), CAST(:kinds AS text[]),
                    CAST(:statuses AS text[]), CAST(:confidences AS real[]), CAST(:corroborations AS integer[]),
                    CAST(:firsts AS timestamptz[]), CAST(:lasts AS timestamptz[]))
            AS c(id, section_id, position, text, text_key, kind, status, confidence, corroboration,
                 first_seen_at, last_seen_at)
        ON CONFLICT (id) DO UPDATE SET
            position = excluded.position, text = excluded.text, kind = excluded.kind, status = excluded.status,
            confidence = excluded.confidence, corroboration = excluded.corroboration,
            first_seen_at = excluded.first_seen_at, last_seen_at = excluded.last_seen_at,
            updated_run_id = CASE WHEN (wiki_section_claims.text, wiki_section_claims.corroboration,
                                        wiki_section_claims.status)
                                       IS DISTINCT FROM (excluded.text, excluded.corroboration, excluded.status)
                                  THEN excluded.updated_run_id ELSE wiki_section_claims.updated_run_id END,
            updated_at = excluded.updated_at
    """), {"run": run_id, "now": now, "ids": keep, "sections": [r["section"] for r in rows],
           "positions": [r["position"] for r in rows], "texts": [r["text"] for r in rows],
           "keys": [r["key"] for r in rows], "kinds": [r["kind"] for r in rows],
           "statuses": [r["status"] for r in rows], "confidences": [r["confidence"] for r in rows],
           "corroborations": [r["corroboration"] for r in rows], "firsts": [r["first"] for r in rows],
           "lasts": [r["last"] for r in rows]})
    if cited:
        await conn.execute(text("""
            INSERT INTO wiki_claim_sources (claim_id, tenant_id, owner_id, memory_id)
            SELECT claim_id, :tenant, :owner, memory_id
            FROM unnest(CAST(:claims AS uuid[]), CAST(:refs AS text[])) AS c(claim_id, memory_id)
            ON CONFLICT DO NOTHING
        """), {"tenant": tenant, "owner": owner, "claims": [c for c, _ in cited], "refs": [r for _, r in cited]})
