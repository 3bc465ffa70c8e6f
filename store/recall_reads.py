"""The reads behind recall and context: every candidate a retriever enumerates, scoped by tenant AND
owner, active pages only.

Full text: a question is split and stemmed by the database exactly as the claims and memories were
(the stored `search_tsv`, migration 0010_recall); every row holding ANY of its lexemes is a
candidate (OR semantics, found through the GIN index), returned with the frequency of each query
lexeme in it and its length, so `domain.recall.bm25` scores them all with the true document
frequencies (every row holding a lexeme is among the candidates).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.recall import TermDoc
from domain.search import escape_like

# A bound on the rows one OR query returns: far above any scope's matches for a question's rarer
# words; a lexeme in more rows than this is near-worthless for BM25 (its IDF tends to zero).
MAX_TEXT_CANDIDATES = 20_000

_SCOPE = "p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'"

_QUERY = """
    WITH lexemes AS (
        SELECT coalesce(array_agg(DISTINCT u.lexeme), '{}') AS wanted
        FROM unnest(to_tsvector('english', regexp_replace(:question, '[^[:alnum:]]+', ' ', 'g'))) AS u
    ), q AS (
        SELECT wanted, CASE WHEN cardinality(wanted) > 0
                            THEN to_tsquery('simple', array_to_string(wanted, ' | ')) END AS query
        FROM lexemes
    )
"""


class TextMatches(BaseModel):
    """The rows holding any of a question's lexemes, and how many rows the scope has in all."""

    docs: list[TermDoc]
    total: int


def _term_docs(rows: Sequence) -> list[TermDoc]:
    return [TermDoc(key=str(row.id), length=max(int(row.len), 1),
                    tf={lex: int(n) for lex, n in zip(row.lexs or [], row.counts or [], strict=True)})
            for row in rows]


async def claim_text_matches(conn: AsyncConnection, tenant: str, owner: str, question: str) -> TextMatches:
    rows = (await conn.execute(text(_QUERY + f"""
        SELECT c.id, length(c.search_tsv) AS len,
               (SELECT array_agg(u.lexeme) FROM unnest(c.search_tsv) u WHERE u.lexeme = ANY(q.wanted)) AS lexs,
               (SELECT array_agg(cardinality(u.positions)) FROM unnest(c.search_tsv) u
                WHERE u.lexeme = ANY(q.wanted)) AS counts
        FROM q, wiki_section_claims c
        JOIN wiki_page_sections s ON s.id = c.section_id
        JOIN wiki_pages p ON p.id = s.page_id
        WHERE q.query IS NOT NULL AND c.search_tsv @@ q.query AND {_SCOPE}
        LIMIT :cap
    """), {"question": question, "tenant": tenant, "owner": owner, "cap": MAX_TEXT_CANDIDATES})).all()
    total = (await conn.execute(text(f"""
        SELECT count(*) FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id
        JOIN wiki_pages p ON p.id = s.page_id WHERE {_SCOPE}
    """), {"tenant": tenant, "owner": owner})).scalar_one()
    return TextMatches(docs=_term_docs(rows), total=int(total))


async def memory_text_matches(conn: AsyncConnection, tenant: str, owner: str, question: str,
                              as_of: datetime | None = None) -> TextMatches:
    rows = (await conn.execute(text(_QUERY + """
        SELECT m.id, length(m.search_tsv) AS len,
               (SELECT array_agg(u.lexeme) FROM unnest(m.search_tsv) u WHERE u.lexeme = ANY(q.wanted)) AS lexs,
               (SELECT array_agg(cardinality(u.positions)) FROM unnest(m.search_tsv) u
                WHERE u.lexeme = ANY(q.wanted)) AS counts
        FROM q, memory_units m
        WHERE q.query IS NOT NULL AND m.search_tsv @@ q.query AND m.tenant_id = :tenant AND m.owner_id = :owner
          AND (CAST(:as_of AS timestamptz) IS NULL OR m.created_at <= CAST(:as_of AS timestamptz))
        LIMIT :cap
    """), {"question": question, "tenant": tenant, "owner": owner, "cap": MAX_TEXT_CANDIDATES,
           "as_of": as_of})).all()
    total = (await conn.execute(text("SELECT count(*) FROM memory_units WHERE tenant_id = :tenant AND owner_id = :owner"),
                                {"tenant": tenant, "owner": owner})).scalar_one()
    return TextMatches(docs=_term_docs(rows), total=int(total))


class RecallClaimRow(BaseModel):
    id: str
    text: str
    text_key: str
    kind: str
    status: str
    confidence: float
    corroboration: int
    first_seen: datetime | None
    last_seen: datetime | None
    section_slug: str
    heading: str
    page_id: str
    page_type: str
    page_slug: str
    page_title: str
    page_summary: str | None
    hubness: int
    sources: list[str]


_CLAIM_COLUMNS = """
    c.id::text AS id, c.text, c.text_key, c.kind, c.status, c.confidence, c.corroboration,
    c.first_seen_at, c.last_seen_at, s.section_slug, s.heading, p.id::text AS page_id, p.type, p.slug,
    p.title, p.summary, p.hubness_score,
    coalesce((SELECT array_agg(cs.memory_id ORDER BY cs.memory_id) FROM wiki_claim_sources cs
              WHERE cs.claim_id = c.id), '{}') AS sources
"""


def _claim_row(row) -> RecallClaimRow:
    return RecallClaimRow(
        id=row.id, text=row.text, text_key=row.text_key, kind=row.kind, status=row.status,
        confidence=float(row.confidence), corroboration=row.corroboration, first_seen=row.first_seen_at,
        last_seen=row.last_seen_at, section_slug=row.section_slug, heading=row.heading, page_id=row.page_id,
        page_type=row.type, page_slug=row.slug, page_title=row.title, page_summary=row.summary,
        hubness=row.hubness_score, sources=list(row.sources))


async def claim_details(conn: AsyncConnection, tenant: str, owner: str, claim_ids: Sequence[str]) -> dict[str, RecallClaimRow]:
    if not claim_ids:
        return {}
    rows = await conn.execute(text(f"""
        SELECT {_CLAIM_COLUMNS}
        FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE c.id = ANY(CAST(:ids AS uuid[])) AND {_SCOPE}
    """), {"ids": list(claim_ids), "tenant": tenant, "owner": owner})
    return {row.id: _claim_row(row) for row in rows}


class NamedPage(BaseModel):
    id: str
    alias: str


async def pages_for_names(conn: AsyncConnection, tenant: str, owner: str, keys: Sequence[str],
                          first_names: Sequence[str]) -> list[NamedPage]:
    """Active pages an alias of which is one of `keys` exactly, or starts with one of `first_names`
    followed by a space; the longest matched alias first (the most specific name)."""
    if not keys and not first_names:
        return []
    rows = await conn.execute(text(f"""
        SELECT DISTINCT ON (p.id) p.id::text AS id, a.alias, p.hubness_score
        FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
        WHERE {_SCOPE} AND (a.alias = ANY(CAST(:keys AS text[])) OR a.alias LIKE ANY(CAST(:patterns AS text[])))
        ORDER BY p.id, (a.alias = ANY(CAST(:keys AS text[]))) DESC, length(a.alias) DESC
    """), {"tenant": tenant, "owner": owner, "keys": list(keys),
           "patterns": [escape_like(name) + " %" for name in first_names]})
    found = [(row.alias in keys, len(row.alias), row.hubness_score, NamedPage(id=row.id, alias=row.alias))
             for row in rows]
    found.sort(key=lambda f: (not f[0], -f[1], -f[2], f[3].id))
    return [f[3] for f in found]


class PageClaim(BaseModel):
    id: str
    page_id: str
    kind: str
    confidence: float
    corroboration: int
    position: int


async def claims_of_pages(conn: AsyncConnection, tenant: str, owner: str, page_ids: Sequence[str]) -> list[PageClaim]:
    if not page_ids:
        return []
    rows = await conn.execute(text(f"""
        SELECT c.id::text AS id, p.id::text AS page_id, c.kind, c.confidence, c.corroboration,
               s.position * 100000 + c.position AS position
        FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.id = ANY(CAST(:pages AS uuid[])) AND {_SCOPE}
    """), {"pages": list(page_ids), "tenant": tenant, "owner": owner})
    return [PageClaim(id=r.id, page_id=r.page_id, kind=r.kind, confidence=float(r.confidence),
                      corroboration=r.corroboration, position=r.position) for r in rows]


async def linked_pages(conn: AsyncConnection, tenant: str, owner: str, page_ids: Sequence[str]) -> list[str]:
    """Active pages of the scope one link away from any of `page_ids`, either direction, not among them."""
    if not page_ids:
        return []
    rows = await conn.execute(text(f"""
        SELECT DISTINCT p.id::text AS id, p.hubness_score FROM wiki_page_links l
        JOIN wiki_pages p ON p.id = CASE WHEN l.from_page_id = ANY(CAST(:pages AS uuid[])) THEN l.to_page_id
                                         ELSE l.from_page_id END
        WHERE (l.from_page_id = ANY(CAST(:pages AS uuid[])) OR l.to_page_id = ANY(CAST(:pages AS uuid[])))
          AND {_SCOPE} AND NOT (p.id = ANY(CAST(:pages AS uuid[])))
        ORDER BY p.hubness_score DESC, id
    """), {"pages": list(page_ids), "tenant": tenant, "owner": owner})
    return [row.id for row in rows]


async def claims_in_window(conn: AsyncConnection, tenant: str, owner: str, start: datetime | None,
                           end: datetime | None, limit: int = 2_000) -> list[str]:
    """Claims whose seen span [first_seen, last_seen] overlaps [start, end), newest first."""
    rows = await conn.execute(text(f"""
        SELECT c.id::text AS id FROM wiki_section_claims c
        JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE {_SCOPE} AND c.first_seen_at IS NOT NULL
          AND (CAST(:start AS timestamptz) IS NULL OR coalesce(c.last_seen_at, c.first_seen_at) >= CAST(:start AS timestamptz))
          AND (CAST(:end AS timestamptz) IS NULL OR c.first_seen_at < CAST(:end AS timestamptz))
        ORDER BY c.first_seen_at DESC, c.id LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "start": start, "end": end, "limit": limit})
    return [row.id for row in rows]


async def memories_in_window(conn: AsyncConnection, tenant: str, owner: str, start: datetime | None,
                             end: datetime | None, limit: int = 2_000) -> list[str]:
    """Memories that happened in [start, end), newest first."""
    rows = await conn.execute(text("""
        SELECT id::text AS id FROM memory_units
        WHERE tenant_id = :tenant AND owner_id = :owner
          AND (CAST(:start AS timestamptz) IS NULL OR created_at >= CAST(:start AS timestamptz))
          AND (CAST(:end AS timestamptz) IS NULL OR created_at < CAST(:end AS timestamptz))
        ORDER BY created_at DESC, id LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "start": start, "end": end, "limit": limit})
    return [row.id for row in rows]


class Citation(BaseModel):
    memory_id: str
    claim_id: str
    kind: str
    corroboration: int


async def claims_citing(conn: AsyncConnection, tenant: str, owner: str, memory_ids: Sequence[str]) -> list[Citation]:
    """The claims of active pages citing each memory (the reverse lookup), most specific first."""
    if not memory_ids:
        return []
    rows = await conn.execute(text(f"""
        SELECT cs.memory_id, c.id::text AS claim_id, c.kind, c.corroboration
        FROM wiki_claim_sources cs JOIN wiki_section_claims c ON c.id = cs.claim_id
        JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE cs.tenant_id = :tenant AND cs.owner_id = :owner AND cs.memory_id = ANY(CAST(:ids AS text[]))
          AND {_SCOPE}
        ORDER BY cs.memory_id, c.kind = 'fact' DESC, c.corroboration, c.id
    """), {"tenant": tenant, "owner": owner, "ids": list(memory_ids)})
    return [Citation(memory_id=r.memory_id, claim_id=r.claim_id, kind=r.kind, corroboration=r.corroboration)
            for r in rows]


class MemoryText(BaseModel):
    id: str
    content: str
    occurred_at: datetime


async def memory_texts(conn: AsyncConnection, tenant: str, owner: str, memory_ids: Sequence[str]) -> dict[str, MemoryText]:
    if not memory_ids:
        return {}
    rows = await conn.execute(text("""
        SELECT id::text AS id, content, created_at FROM memory_units
        WHERE tenant_id = :tenant AND owner_id = :owner AND id = ANY(CAST(:ids AS uuid[]))
    """), {"tenant": tenant, "owner": owner, "ids": [str(UUID(i)) for i in memory_ids]})
    return {r.id: MemoryText(id=r.id, content=r.content, occurred_at=r.created_at) for r in rows}


async def uncompiled_memories(conn: AsyncConnection, tenant: str, owner: str, limit: int = 5_000) -> list[str]:
    """Memories retained after the scope's compile cursor (not compiled yet), newest first."""
    rows = await conn.execute(text("""
        SELECT m.id::text AS id FROM memory_units m
        LEFT JOIN wiki_compile_cursors cur ON cur.tenant_id = m.tenant_id AND cur.owner_id = m.owner_id
        WHERE m.tenant_id = :tenant AND m.owner_id = :owner
          AND (cur.last_record_updated_at IS NULL
               OR (date_trunc('milliseconds', m.updated_at AT TIME ZONE 'UTC'), m.id)
                  > (date_trunc('milliseconds', cur.last_record_updated_at AT TIME ZONE 'UTC'),
                     coalesce(cur.last_record_id, CAST('00000000-0000-0000-0000-000000000000' AS uuid))))
        ORDER BY date_trunc('milliseconds', m.updated_at AT TIME ZONE 'UTC') DESC, m.id DESC
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "limit": limit})
    return [row.id for row in rows]


async def important_claims(conn: AsyncConnection, tenant: str, owner: str, min_confidence: float,
                           limit: int = 2_000) -> list[RecallClaimRow]:
    """The scope's fact claims at least `min_confidence` sure, surest and most corroborated first (the
    pool `context` scores in full)."""
    rows = await conn.execute(text(f"""
        SELECT {_CLAIM_COLUMNS}
        FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE {_SCOPE} AND c.kind = 'fact' AND c.confidence >= round(CAST(CAST(:min AS float8) AS numeric), 6)
        ORDER BY c.confidence DESC, c.corroboration DESC, c.last_seen_at DESC NULLS LAST, c.id
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "min": min_confidence, "limit": limit})
    return [_claim_row(row) for row in rows]


class PageSummary(BaseModel):
    id: str
    type: str
    slug: str
    title: str
    summary: str | None


async def page_summaries(conn: AsyncConnection, tenant: str, owner: str, page_ids: Sequence[str]) -> list[PageSummary]:
    """The pages' summary lines, in the order asked."""
    if not page_ids:
        return []
    rows = await conn.execute(text(f"""
        SELECT p.id::text AS id, p.type, p.slug, p.title, p.summary FROM wiki_pages p
        WHERE p.id = ANY(CAST(:pages AS uuid[])) AND {_SCOPE}
    """), {"pages": list(page_ids), "tenant": tenant, "owner": owner})
    found = {row.id: PageSummary(id=row.id, type=row.type, slug=row.slug, title=row.title, summary=row.summary)
             for row in rows}
    return [found[p] for p in page_ids if p in found]


class ClaimVectors(BaseModel):
    ids: list[str]
    blob: bytes  # their float32 vectors, concatenated in the order of `ids`


async def claim_vectors(conn: AsyncConnection, tenant: str, owner: str, model: str) -> ClaimVectors:
    """Every vector of the scope's claims on active pages made by `model` from the claim's current text."""
    rows = (await conn.execute(text(f"""
        SELECT v.claim_id::text AS id, v.vector FROM wiki_claim_vectors v
        JOIN wiki_section_claims c ON c.id = v.claim_id AND c.text_key = v.text_key
        JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE v.tenant_id = :tenant AND v.owner_id = :owner AND v.model = :model AND {_SCOPE}
        ORDER BY v.claim_id
    """), {"tenant": tenant, "owner": owner, "model": model})).all()
    return ClaimVectors(ids=[r.id for r in rows], blob=b"".join(bytes(r.vector) for r in rows))


class ClaimText(BaseModel):
    id: str
    text: str
    text_key: str


async def claims_without_vectors(conn: AsyncConnection, tenant: str, owner: str, model: str,
                                 limit: int = 5_000) -> list[ClaimText]:
    """Claims of the scope with no vector by `model` for their current text (new or changed claims)."""
    rows = await conn.execute(text("""
        SELECT c.id::text AS id, c.text, c.text_key FROM wiki_section_claims c
        JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        LEFT JOIN wiki_claim_vectors v ON v.claim_id = c.id AND v.model = :model AND v.text_key = c.text_key
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND v.claim_id IS NULL
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "model": model, "limit": limit})
    return [ClaimText(id=r.id, text=r.text, text_key=r.text_key) for r in rows]


async def store_claim_vectors(conn: AsyncConnection, tenant: str, owner: str, model: str,
                              claims: Sequence[ClaimText], vectors: Sequence[bytes]) -> None:
    if not claims:
        return
    await conn.execute(text("""
        INSERT INTO wiki_claim_vectors (claim_id, tenant_id, owner_id, model, text_key, vector)
        SELECT c.id, :tenant, :owner, :model, c.key, c.vector
        FROM unnest(CAST(:ids AS uuid[]), CAST(:keys AS text[]), CAST(:vectors AS bytea[])) AS c(id, key, vector)
        JOIN wiki_section_claims sc ON sc.id = c.id
        ON CONFLICT (claim_id) DO UPDATE SET model = excluded.model, text_key = excluded.text_key,
                                             vector = excluded.vector, created_at = now()
    """), {"tenant": tenant, "owner": owner, "model": model, "ids": [c.id for c in claims],
           "keys": [c.text_key for c in claims], "vectors": list(vectors)})
