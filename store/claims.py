"""Claims as rows: each written section's lines, with their own citations, confidence and status.

`sync_claims` runs inside apply's transaction after the sections and their sources are written: it
attributes every line of each written section (`domain.attribution.attribute_body`: its citations,
what supports it, its status) and replaces the section's claim rows. A claim cites only memories the
section cites. Each citation records whether that memory supports the line on its own by a quote or
by the judge's word (`support`), and the claim's confidence rests on those alone. The gate's
rejections are recorded by `record_rejected_claims` and read back by `rejected_claims`.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain import ids
from domain.attribution import ClaimDraft, KnownClaim, attribute_body
from domain.claims import DURABLE_CONFIDENCE, confidence
from domain.evidence import Evidence, evidence_of
from domain.process_caches import register
from domain.resolved_plan import ProposedClaim
from store.claim_validity import MarkCounts, settle_validity


async def memory_evidence(conn: AsyncConnection, tenant: str, owner: str, refs: Sequence[str]) -> dict[str, Evidence]:
    """The evidence of the scope's memories among `refs` (text ids), with when each happened."""
    wanted = list(dict.fromkeys(str(r) for r in refs))
    if not wanted:
        return {}
    rows = await conn.execute(text("""
        SELECT id::text AS id, content, metadata, created_at, updated_at FROM memory_units
        WHERE tenant_id = :tenant AND owner_id = :owner AND id::text = ANY(CAST(:ids AS text[]))
    """), {"tenant": tenant, "owner": owner, "ids": wanted})
    out: dict[str, Evidence] = {}
    for row in rows:
        # A memory's evidence changes only when the memory is retained again (its updated_at moves).
        cache_key = (tenant, owner, row.id, row.updated_at)
        found = _EVIDENCE_CACHE.get(cache_key)
        if found is None:
            found = _EVIDENCE_CACHE[cache_key] = evidence_of(row.id, row.content, row.metadata, row.created_at)
            while len(_EVIDENCE_CACHE) > EVIDENCE_CACHE_SIZE:
                _EVIDENCE_CACHE.popitem(last=False)
        else:
            _EVIDENCE_CACHE.move_to_end(cache_key)
        out[row.id] = found
    return out


# The evidence of the memories apply attributed lately: a section is attributed again at every
# batch that writes it, with all its memories.
EVIDENCE_CACHE_SIZE = 50_000
_EVIDENCE_CACHE: OrderedDict[tuple[str, str, str, datetime], Evidence] = OrderedDict()


class _EvidenceCache:
    """The evidence cache as a forget sees it (domain/process_caches.py): it holds memory text."""

    name = "memory evidence"

    def evict_scope(self, tenant: str, owner: str) -> None:
        for key in [k for k in list(_EVIDENCE_CACHE) if k[0] == tenant and k[1] == owner]:
            _EVIDENCE_CACHE.pop(key, None)

    def clear(self) -> None:
        _EVIDENCE_CACHE.clear()

    def texts(self) -> Iterable[str]:
        for evidence in list(_EVIDENCE_CACHE.values()):
            yield evidence.text
            yield " ".join(sorted(evidence.words))


register(_EvidenceCache(), module_level=True)


async def sync_claims(conn: AsyncConnection, tenant: str, owner: str, section_ids: Sequence[Any],
                      proposed: dict[str, ProposedClaim], run_id: str | None, now: datetime) -> MarkCounts:
    """Re-attribute the claims of the given sections of the scope from their stored bodies; the
    plan's supersession marks kept and refused."""
    section_ids = list(dict.fromkeys(str(s) for s in section_ids))
    if not section_ids:
        return MarkCounts()
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
    return await settle_validity(conn, tenant, owner, [str(s.id) for s in sections], proposed, run_id)


async def _known_claims(conn: AsyncConnection, section_ids: list[str]) -> dict[str, dict[str, KnownClaim]]:
    rows = await conn.execute(text("""
        SELECT c.section_id::text AS section_id, c.text_key, c.status, c.kind,
               coalesce(array_agg(cs.memory_id ORDER BY cs.memory_id) FILTER (WHERE cs.memory_id IS NOT NULL), '{}') AS refs,
               coalesce(array_agg(cs.memory_id ORDER BY cs.memory_id) FILTER (WHERE cs.support = 'judge'), '{}') AS judged,
               coalesce(array_agg(cs.memory_id ORDER BY cs.memory_id) FILTER (WHERE cs.support = 'together'), '{}')
                   AS together
        FROM wiki_section_claims c LEFT JOIN wiki_claim_sources cs ON cs.claim_id = c.id
        WHERE c.section_id = ANY(CAST(:ids AS uuid[]))
        GROUP BY c.id
    """), {"ids": section_ids})
    out: dict[str, dict[str, KnownClaim]] = {}
    for row in rows:
        claims = out.setdefault(row.section_id, {})
        earlier = claims.get(row.text_key)
        refs = tuple(dict.fromkeys([*(earlier.refs if earlier else ()), *row.refs]))
        judged = tuple(dict.fromkeys([*(earlier.judged_by if earlier else ()), *row.judged]))
        together = tuple(dict.fromkeys([*(earlier.judged_together if earlier else ()), *row.together]))
        claims[row.text_key] = KnownClaim(refs=refs, status=row.status, kind=row.kind, judged_by=judged,
                                          judged_together=together)
    return out


def _support(claim: ClaimDraft, ref: str) -> str | None:
    """How the memory `ref` supports the claim: 'quote', 'judge' (each on its own), 'together' (with
    others), or None (it is only cited)."""
    if ref in claim.support.quoted:
        return "quote"
    if ref in claim.support.judged:
        return "judge"
    if ref in claim.support.joint:
        return "together"
    return None


async def write_claims(conn: AsyncConnection, tenant: str, owner: str, drafts: dict[str, list[ClaimDraft]],
                       evidence: dict[str, Evidence], run_id: str | None, now: datetime) -> None:
    """Replace the claim rows of each section in `drafts` (an unchanged claim keeps its id and
    creating run)."""
    rows: list[dict[str, Any]] = []
    cited: list[tuple[str, str, str | None]] = []
    for section_id, claims in drafts.items():
        for position, claim in enumerate(claims, 1):
            claim_id = str(ids.claim_id(UUID(section_id), claim.key, claim.occurrence))
            days = [day for r in claim.refs if r in evidence and (day := evidence[r].happened) is not None]
            rows.append({"id": claim_id, "section": section_id, "position": position, "text": claim.text,
                         "key": claim.key, "kind": claim.kind, "status": claim.status,
                         "confidence": confidence(claim.support.count, claim.status),
                         "corroboration": len(claim.refs), "supporters": claim.support.count,
                         "first": min(days) if days else None, "last": max(days) if days else None})
            cited += [(claim_id, ref, _support(claim, ref)) for ref in claim.refs]
    keep = [row["id"] for row in rows]
    await conn.execute(text("""
        DELETE FROM wiki_section_claims
        WHERE section_id = ANY(CAST(:sections AS uuid[])) AND NOT (id = ANY(CAST(:keep AS uuid[])))
    """), {"sections": list(drafts), "keep": keep})
    # A section rewritten keeps most of its citations: only those that changed are deleted and written,
    # so a section citing thousands of memories does not rewrite them all (and their index entries) each time.
    sources = {"claims": [c for c, _, _ in cited], "refs": [r for _, r, _ in cited], "supports": [s for _, _, s in cited]}
    await conn.execute(text("""
        DELETE FROM wiki_claim_sources cs
        WHERE cs.claim_id = ANY(CAST(:keep AS uuid[]))
          AND NOT EXISTS (
              SELECT 1 FROM unnest(CAST(:claims AS uuid[]), CAST(:refs AS text[]), CAST(:supports AS text[]))
                  AS c(claim_id, memory_id, support)
              WHERE c.claim_id = cs.claim_id AND c.memory_id = cs.memory_id AND c.support IS NOT DISTINCT FROM cs.support)
    """), {"keep": keep, **sources})
    if not rows:
        return
    await conn.execute(text("""
        INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, status, confidence,
                                         corroboration, supporters, first_seen_at, last_seen_at, valid_from, valid_during,
                                         created_run_id, updated_run_id, created_at, updated_at)
        SELECT id, section_id, position, text, text_key, kind, status, confidence, corroboration, supporters,
               first_seen_at, last_seen_at, first_seen_at, tstzmultirange(tstzrange(first_seen_at, NULL, '[)')),
               :run, :run, :now, :now
        FROM unnest(CAST(:ids AS uuid[]), CAST(:sections AS uuid[]), CAST(:positions AS integer[]),
                    CAST(:texts AS text[]), CAST(:keys AS text[]), CAST(:kinds AS text[]),
                    CAST(:statuses AS text[]), CAST(:confidences AS numeric[]), CAST(:corroborations AS integer[]),
                    CAST(:supporters AS integer[]), CAST(:firsts AS timestamptz[]), CAST(:lasts AS timestamptz[]))
            AS c(id, section_id, position, text, text_key, kind, status, confidence, corroboration, supporters,
                 first_seen_at, last_seen_at)
        ON CONFLICT (id) DO UPDATE SET
            position = excluded.position, text = excluded.text, kind = excluded.kind, status = excluded.status,
            confidence = excluded.confidence, corroboration = excluded.corroboration,
            supporters = excluded.supporters,
            first_seen_at = excluded.first_seen_at, last_seen_at = excluded.last_seen_at,
            valid_from = excluded.valid_from,
            updated_run_id = CASE WHEN (wiki_section_claims.text, wiki_section_claims.corroboration,
                                        wiki_section_claims.status, wiki_section_claims.supporters)
                                       IS DISTINCT FROM (excluded.text, excluded.corroboration, excluded.status,
                                                         excluded.supporters)
                                  THEN excluded.updated_run_id ELSE wiki_section_claims.updated_run_id END,
            updated_at = excluded.updated_at
    """), {"run": run_id, "now": now, "ids": keep, "sections": [r["section"] for r in rows],
           "positions": [r["position"] for r in rows], "texts": [r["text"] for r in rows],
           "keys": [r["key"] for r in rows], "kinds": [r["kind"] for r in rows],
           "statuses": [r["status"] for r in rows], "confidences": [r["confidence"] for r in rows],
           "corroborations": [r["corroboration"] for r in rows], "supporters": [r["supporters"] for r in rows],
           "firsts": [r["first"] for r in rows], "lasts": [r["last"] for r in rows]})
    if cited:
        await conn.execute(text("""
            INSERT INTO wiki_claim_sources (claim_id, tenant_id, owner_id, memory_id, support)
            SELECT claim_id, :tenant, :owner, memory_id, support
            FROM unnest(CAST(:claims AS uuid[]), CAST(:refs AS text[]), CAST(:supports AS text[]))
                AS c(claim_id, memory_id, support)
            ON CONFLICT DO NOTHING
        """), {"tenant": tenant, "owner": owner, **sources})


class RejectedClaim(BaseModel):
    """A line the gate kept out of the wiki, and why."""

    page_ref: str  # the page's id, or type/slug of a page the plan proposed
    section_slug: str
    text: str
    cited: list[str] = Field(default_factory=list)
    stage: Literal["grounding", "judge"]
    reason: str
    # The judge's verdict on it ({"verdict": "unsupported", "problem": "negation"}); None for grounding.
    # (Stored in the column `scores`, which rows from before the verdicts hold the judge's scores in.)
    verdict: dict[str, Any] | None = None


async def record_rejected_claims(conn: AsyncConnection, scope_tenant: str, scope_owner: str, run_id: str | None,
                                 plan_id: UUID | None, rejected: Sequence[RejectedClaim]) -> None:
    """Record the gate's rejections of one plan (a re-planned plan records each line once)."""
    for claim in rejected:
        await conn.execute(text("""
            INSERT INTO wiki_rejected_claims (id, tenant_id, owner_id, run_id, plan_id, page_ref, section_slug, text,
                                              cited, stage, reason, scores)
            VALUES (:id, :tenant, :owner, :run, :plan, :page, :section, :text, CAST(:cited AS text[]), :stage,
                    :reason, CAST(:scores AS jsonb))
            ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, stage = excluded.stage, scores = excluded.scores,
                                           run_id = excluded.run_id
        """), {"id": ids.rejected_claim_id(plan_id or UUID(int=0), f"{claim.page_ref}/{claim.section_slug}",
                                           claim.text),
               "tenant": scope_tenant, "owner": scope_owner, "run": run_id, "plan": plan_id, "page": claim.page_ref,
               "section": claim.section_slug, "text": claim.text, "cited": claim.cited, "stage": claim.stage,
               "reason": claim.reason, "scores": json.dumps(claim.verdict) if claim.verdict is not None else None})


async def rejected_claims(conn: AsyncConnection, tenant: str, owner: str, limit: int = 100) -> list[dict[str, Any]]:
    """The scope's most recent rejected claims, newest first."""
    rows = await conn.execute(text("""
        SELECT r.created_at, r.run_id, r.page_ref, r.section_slug, r.text, r.cited, r.stage, r.reason, r.scores,
               p.type || '/' || p.slug AS page
        FROM wiki_rejected_claims r
        LEFT JOIN wiki_pages p ON p.id::text = r.page_ref AND p.tenant_id = r.tenant_id AND p.owner_id = r.owner_id
        WHERE r.tenant_id = :tenant AND r.owner_id = :owner
        ORDER BY r.created_at DESC, r.id LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "limit": limit})
    return [{"at": row.created_at.isoformat(), "run_id": row.run_id, "page": row.page or row.page_ref,
             "section": row.section_slug, "text": row.text, "cited": list(row.cited), "stage": row.stage,
             "reason": row.reason, "verdict": row.scores} for row in rows]


# Confidences are stored as numeric(3, 2); compared with the float 0.8 they would read 0.80 < 0.8000…04.
_DURABLE = Decimal(str(DURABLE_CONFIDENCE))


class ClaimView(BaseModel):
    """One claim as readers get it. `confidence` rests on `supporters`, the memories that each
    support it on their own (a quote of it, or the judge's word); None for a derived or unverified
    line. `corroboration` counts the memories it cites."""

    text: str
    kind: str
    status: str
    confidence: float | None
    corroboration: int
    supporters: int = 0
    sources: list[str]
    first_seen: datetime | None
    last_seen: datetime | None
    # When the fact began to hold (its earliest memory), until when (the claim that replaced it
    # began), and whether it holds now: current, superseded (history) or disputed (a rival value
    # with no clear order).
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    validity: str = "current"
    # Every interval in which it held, [from, to) (None: open): a value said again after another
    # replaced it holds in several.
    intervals: list[tuple[datetime | None, datetime | None]] = Field(default_factory=list)


ClaimsShown = Literal["current", "history"]

# Whether claim `c` is at least `:min` sure: with a floor of 0 every claim is (one with no confidence,
# derived or unverified, too); above 0 only claims with a confidence that high.
CLAIM_AT_LEAST = """(CAST(:min AS float8) <= 0
    OR c.confidence >= round(CAST(CAST(:min AS float8) AS numeric), 6))"""

# Whether claim `c` is shown: with `:as_of` (a timestamptz or NULL) set, it held then (within one of
# its intervals `valid_during`: begun by that moment and not yet replaced, or asserted again since;
# a computed line only once all its memories had happened); without,
# it holds now (current or disputed), or with `:history` true, superseded too. Every reader of
# claims by validity (pages, recall, context) filters with this one condition.
CLAIM_HELD = """(
    (CAST(:as_of AS timestamptz) IS NOT NULL OR :history OR c.validity <> 'superseded')
    AND (CAST(:as_of AS timestamptz) IS NULL OR (
          coalesce(c.valid_during, tstzmultirange(tstzrange(c.valid_from, c.valid_to, '[)')))
              @> CAST(:as_of AS timestamptz)
          AND (c.kind = 'fact' OR c.last_seen_at IS NULL OR c.last_seen_at <= CAST(:as_of AS timestamptz)))))"""


async def page_claims(conn: AsyncConnection, tenant: str, owner: str, page_id: UUID,
                      min_confidence: float = 0.0, *, shown: ClaimsShown = "current",
                      as_of: datetime | None = None) -> dict[str, list[ClaimView]]:
    """The page's claims by section slug, in order, at least `min_confidence` sure: those that hold now
    (current and disputed), or with `shown="history"` the superseded ones too; with `as_of`, those that
    held then (begun by that moment and not yet replaced), of facts whose memories had happened, and
    of computed lines only those whose memories all had."""
    rows = await conn.execute(text(f"""
        SELECT s.section_slug, c.text, c.kind, c.status, c.confidence, c.corroboration, c.supporters, c.first_seen_at,
               c.last_seen_at, c.valid_from, c.valid_to, c.validity, c.valid_during,
               coalesce((SELECT array_agg(cs.memory_id ORDER BY cs.memory_id) FROM wiki_claim_sources cs
                         WHERE cs.claim_id = c.id), '{{}}') AS sources
        FROM wiki_section_claims c
        JOIN wiki_page_sections s ON s.id = c.section_id
        JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.id = :page AND p.tenant_id = :tenant AND p.owner_id = :owner
          AND {CLAIM_AT_LEAST}
          AND {CLAIM_HELD}
        ORDER BY s.position, c.position
    """), {"page": page_id, "tenant": tenant, "owner": owner, "min": min_confidence, "as_of": as_of,
           "history": shown == "history"})
    out: dict[str, list[ClaimView]] = {}
    for row in rows:
        out.setdefault(row.section_slug, []).append(ClaimView(
            text=row.text, kind=row.kind, status=row.status,
            confidence=None if row.confidence is None else float(row.confidence),
            corroboration=row.corroboration, supporters=row.supporters, sources=list(row.sources),
            first_seen=row.first_seen_at, last_seen=row.last_seen_at, valid_from=row.valid_from,
            valid_to=row.valid_to, validity=row.validity,
            intervals=[(r.lower, r.upper) for r in row.valid_during or []]))
    return out


async def page_has_history(conn: AsyncConnection, page_id: UUID) -> bool:
    """Whether any claim of the page has been superseded or is disputed (its current view differs
    from its stored body)."""
    return bool((await conn.execute(text("""
        SELECT EXISTS (SELECT 1 FROM wiki_page_sections s JOIN wiki_section_claims c ON c.section_id = s.id
                       WHERE s.page_id = :page AND c.validity <> 'current')
    """), {"page": page_id})).scalar_one())


class ClaimTotals(BaseModel):
    """One scope's claims: the compression ratio is its memories to its durable claims (facts at
    least DURABLE_CONFIDENCE sure)."""

    tenant: str
    owner: str
    memories: int
    claims: int
    durable_claims: int
    rejected_claims: int

    @property
    def compression(self) -> str:
        return f"{self.memories / self.durable_claims:.1f}:1" if self.durable_claims else "no durable claim"


async def claim_totals(conn: AsyncConnection, limit: int = 100, tenant: str | None = None,
                       owner: str | None = None) -> list[ClaimTotals]:
    """Claim counts of the scopes that have claims or rejections (or of the one scope asked for)."""
    rows = await conn.execute(text("""
        WITH claimed AS (
            SELECT p.tenant_id, p.owner_id, count(c.id) AS claims,
                   count(c.id) FILTER (WHERE c.confidence >= :durable AND c.kind = 'fact') AS durable
            FROM wiki_pages p JOIN wiki_page_sections s ON s.page_id = p.id
            JOIN wiki_section_claims c ON c.section_id = s.id
            WHERE p.status = 'active' AND (CAST(:tenant AS text) IS NULL OR (p.tenant_id = :tenant AND p.owner_id = :owner))
            GROUP BY p.tenant_id, p.owner_id
        ), rejected AS (
            SELECT tenant_id, owner_id, count(*) AS rejected FROM wiki_rejected_claims
            WHERE CAST(:tenant AS text) IS NULL OR (tenant_id = :tenant AND owner_id = :owner)
            GROUP BY tenant_id, owner_id
        ), scopes AS (
            SELECT tenant_id, owner_id FROM claimed UNION SELECT tenant_id, owner_id FROM rejected
        )
        SELECT sc.tenant_id, sc.owner_id, coalesce(c.claims, 0) AS claims, coalesce(c.durable, 0) AS durable,
               coalesce(r.rejected, 0) AS rejected,
               (SELECT count(*) FROM memory_units m WHERE m.tenant_id = sc.tenant_id AND m.owner_id = sc.owner_id)
                   AS memories
        FROM scopes sc LEFT JOIN claimed c USING (tenant_id, owner_id) LEFT JOIN rejected r USING (tenant_id, owner_id)
        ORDER BY sc.tenant_id COLLATE "C", sc.owner_id COLLATE "C" LIMIT :limit
    """), {"durable": _DURABLE, "tenant": tenant, "owner": owner, "limit": limit})
    return [ClaimTotals(tenant=row.tenant_id, owner=row.owner_id, memories=row.memories, claims=row.claims,
                        durable_claims=row.durable, rejected_claims=row.rejected) for row in rows]


class PageListing(BaseModel):
    type: str
    slug: str
    title: str
    status: str
    sections: int
    claims: int
    durable_claims: int


async def page_list(conn: AsyncConnection, tenant: str, owner: str) -> list[PageListing]:
    """Every page of the scope, with its sections and claims counted."""
    rows = await conn.execute(text("""
        SELECT p.type, p.slug, p.title, p.status,
               (SELECT count(*) FROM wiki_page_sections s WHERE s.page_id = p.id) AS sections,
               (SELECT count(*) FROM wiki_page_sections s JOIN wiki_section_claims c ON c.section_id = s.id
                WHERE s.page_id = p.id) AS claims,
               (SELECT count(*) FROM wiki_page_sections s JOIN wiki_section_claims c ON c.section_id = s.id
                WHERE s.page_id = p.id AND c.kind = 'fact' AND c.confidence >= :durable) AS durable
        FROM wiki_pages p WHERE p.tenant_id = :tenant AND p.owner_id = :owner
        ORDER BY p.type COLLATE "C", p.slug COLLATE "C"
    """), {"tenant": tenant, "owner": owner, "durable": _DURABLE})
    return [PageListing(type=r.type, slug=r.slug, title=r.title, status=r.status, sections=r.sections,
                        claims=r.claims, durable_claims=r.durable) for r in rows]
