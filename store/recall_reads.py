"""The reads behind recall and context: every candidate a retriever enumerates, scoped by tenant AND
owner, active pages only.

Full text: a question is split and stemmed by the database exactly as the claims and memories were
(the stored `search_tsv`, migration 0010_recall); `text_rows` feed the per-process inverted index of
app/recall_cache.py (`domain.text_index`, the product's one BM25), which scores every text holding
ANY of the question's lexemes (OR semantics).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.search import escape_like
from store.claims import CLAIM_AT_LEAST, CLAIM_HELD

_SCOPE = "p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'"

_QUESTION_LEXEMES = """
    SELECT coalesce(array_agg(DISTINCT u.lexeme), '{}') AS wanted
    FROM unnest(to_tsvector('english', regexp_replace(:question, '[^[:alnum:]]+', ' ', 'g'))) AS u
"""


async def question_lexemes(conn: AsyncConnection, question: str) -> list[str]:
    """The question's lexemes, split and stemmed as the stored texts were (its stop words dropped)."""
    return list((await conn.execute(text(_QUESTION_LEXEMES), {"question": question})).scalar_one())


TextKind = Literal["claims", "memories"]

_TEXT_SOURCES = {
    "claims": ("wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id "
               "JOIN wiki_pages p ON p.id = s.page_id", "p.tenant_id = :tenant AND p.owner_id = :owner", "c"),
    "memories": ("memory_units c", "c.tenant_id = :tenant AND c.owner_id = :owner", "c"),
}
_VECTOR_TABLES = {"claims": ("wiki_claim_vectors", "claim_id"), "memories": ("wiki_memory_vectors", "memory_id")}


class RecallState(BaseModel):
    """What one recall needs to know first, in one round trip: the question's lexemes and the scope's
    revision (store/scope_revisions.py), which every kept index of the scope is keyed on."""

    lexemes: list[str]
    revision: int


async def recall_state(conn: AsyncConnection, tenant: str, owner: str, question: str) -> RecallState:
    """The question's lexemes and the scope's revision, read before any of the scope's rows.

    It also has every later statement of the transaction planned for its own arguments: recall's
    reads take arrays whose sizes vary from one question to the next (three page ids, or three
    thousand scored claims), and a plan the server caches for "any array" after five runs of a
    statement can cost seconds (a nested loop over thousands of claims for each scored id)."""
    row = (await conn.execute(text(f"""
        SELECT set_config('plan_cache_mode', 'force_custom_plan', true) AS plans, q.wanted AS lexemes,
               coalesce((SELECT revision FROM wiki_scope_revisions WHERE tenant_id = :tenant AND owner_id = :owner),
                        0) AS revision
        FROM ({_QUESTION_LEXEMES}) AS q
    """), {"question": question, "tenant": tenant, "owner": owner})).one()
    return RecallState(lexemes=list(row.lexemes), revision=int(row.revision))


async def row_counts(conn: AsyncConnection, tenant: str, owner: str, model: str, dimensions: int) -> dict[str, int]:
    """How many claims, memories and embeddings of each (by `model` at `dimensions`) the scope has:
    an index kept across a change learns from them whether a row went away. Index-only scans."""
    claims_source, claims_scope, _ = _TEXT_SOURCES["claims"]
    row = (await conn.execute(text(f"""
        SELECT (SELECT count(*) FROM {claims_source} WHERE {claims_scope}) AS claims,
               (SELECT count(*) FROM memory_units WHERE tenant_id = :tenant AND owner_id = :owner) AS memories,
               (SELECT count(*) FROM wiki_claim_vectors WHERE tenant_id = :tenant AND owner_id = :owner
                  AND model = :model AND dimensions = :dimensions) AS claim_vectors,
               (SELECT count(*) FROM wiki_memory_vectors WHERE tenant_id = :tenant AND owner_id = :owner
                  AND model = :model AND dimensions = :dimensions) AS memory_vectors
    """), {"tenant": tenant, "owner": owner, "model": model, "dimensions": dimensions})).one()
    return {"claims": int(row.claims), "memories": int(row.memories), "claim_vectors": int(row.claim_vectors),
            "memory_vectors": int(row.memory_vectors)}


class TextRow(BaseModel):
    id: str
    lexemes: str  # the stored tsvector's text form
    happened: datetime | None  # a memory's occurred_at
    changed: datetime  # the row's updated_at


async def text_rows(conn: AsyncConnection, tenant: str, owner: str, kind: TextKind,
                    changed_since: datetime | None = None) -> list[TextRow]:
    """The scope's texts of one kind (changed at or after `changed_since`, when given) as lexemes."""
    source, scope, alias = _TEXT_SOURCES[kind]
    happened = "c.created_at" if kind == "memories" else "NULL::timestamptz"
    rows = await conn.execute(text(f"""
        SELECT {alias}.id::text AS id, {alias}.search_tsv::text AS lexemes, {happened} AS happened,
               {alias}.updated_at AS changed FROM {source}
        WHERE {scope} AND (CAST(:since AS timestamptz) IS NULL OR {alias}.updated_at >= CAST(:since AS timestamptz))
    """), {"tenant": tenant, "owner": owner, "since": changed_since})
    return [TextRow(id=r.id, lexemes=r.lexemes, happened=r.happened, changed=r.changed) for r in rows]


class RecallClaimRow(BaseModel):
    id: str
    text: str
    text_key: str
    kind: str
    status: str
    confidence: float | None  # None: a derived or unverified line (domain/claims.py)
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
    sources: list[str]  # the first SOURCES_HEAD it cites (`corroboration` counts them all)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    validity: str = "current"  # current, superseded (an older value) or disputed (rival values)


# Memory ids read per claim: a count line may cite thousands; recall shows the best-matching ones
# (found from the memories' side) and then these.
SOURCES_HEAD = 20

_SOURCES_COLUMN = """coalesce((SELECT array_agg(h.memory_id) FROM (SELECT cs.memory_id FROM wiki_claim_sources cs
              WHERE cs.claim_id = c.id ORDER BY cs.memory_id LIMIT :sources_head) h), '{}') AS sources"""
_CLAIM_COLUMNS = f"""
    c.id::text AS id, c.text, c.text_key, c.kind, c.status, c.confidence, c.corroboration,
    c.first_seen_at, c.last_seen_at, s.section_slug, s.heading, p.id::text AS page_id, p.type, p.slug,
    p.title, p.summary, p.hubness_score, c.valid_from, c.valid_to, c.validity,
    {_SOURCES_COLUMN}
"""


def _claim_row(row) -> RecallClaimRow:
    return RecallClaimRow(
        id=row.id, text=row.text, text_key=row.text_key, kind=row.kind, status=row.status,
        confidence=None if row.confidence is None else float(row.confidence), corroboration=row.corroboration,
        first_seen=row.first_seen_at,
        last_seen=row.last_seen_at, section_slug=row.section_slug, heading=row.heading, page_id=row.page_id,
        page_type=row.type, page_slug=row.slug, page_title=row.title, page_summary=row.summary,
        hubness=row.hubness_score, sources=list(row.sources), valid_from=row.valid_from, valid_to=row.valid_to,
        validity=row.validity)


async def claim_details(conn: AsyncConnection, tenant: str, owner: str, claim_ids: Sequence[str],
                        as_of: datetime | None = None) -> dict[str, RecallClaimRow]:
    """The claims among `claim_ids` that hold now (current or disputed; a superseded one is an old
    value, never an answer), or with `as_of` those that held then (store/claims.py CLAIM_HELD)."""
    if not claim_ids:
        return {}
    # The claims by their primary key first, then their pages: never every claim of the scope
    # filtered by id, whatever the planner believes of the scope's size.
    rows = await conn.execute(text(f"""
        WITH chosen AS MATERIALIZED (SELECT * FROM wiki_section_claims WHERE id = ANY(CAST(:ids AS uuid[])))
        SELECT {_CLAIM_COLUMNS}
        FROM chosen c JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE {_SCOPE} AND {CLAIM_HELD}
    """), {"ids": list(claim_ids), "tenant": tenant, "owner": owner, "sources_head": SOURCES_HEAD,
           "as_of": as_of, "history": False})
    return {row.id: _claim_row(row) for row in rows}


class NamedPage(BaseModel):
    id: str
    alias: str
    type: str
    slug: str
    title: str
    summary: str | None


async def pages_for_names(conn: AsyncConnection, tenant: str, owner: str, keys: Sequence[str],
                          first_names: Sequence[str]) -> list[NamedPage]:
    """Active pages an alias of which is one of `keys` exactly, or starts with one of `first_names`
    followed by a space; the longest matched alias first (the most specific name)."""
    if not keys and not first_names:
        return []
    rows = await conn.execute(text(f"""
        SELECT DISTINCT ON (p.id) p.id::text AS id, a.alias, p.hubness_score, p.type, p.slug, p.title, p.summary
        FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
        WHERE {_SCOPE} AND (a.alias = ANY(CAST(:keys AS text[])) OR a.alias LIKE ANY(CAST(:patterns AS text[])))
        ORDER BY p.id, (a.alias = ANY(CAST(:keys AS text[]))) DESC, length(a.alias) DESC
    """), {"tenant": tenant, "owner": owner, "keys": list(keys),
           "patterns": [escape_like(name) + " %" for name in first_names]})
    found = [(row.alias in keys, len(row.alias), row.hubness_score,
              NamedPage(id=row.id, alias=row.alias, type=row.type, slug=row.slug, title=row.title, summary=row.summary))
             for row in rows]
    found.sort(key=lambda f: (not f[0], -f[1], -f[2], f[3].id))
    return [f[3] for f in found]


async def claims_of_pages(conn: AsyncConnection, tenant: str, owner: str, page_ids: Sequence[str],
                          scored: Sequence[tuple[str, float]], limit: int, as_of: datetime | None = None) -> list[str]:
    """The claims of the pages that hold now (or held at `as_of`), best first: by their score in
    `scored` (claim id, how well the claim or the memories it cites match the question; the best
    MAX_SCORES_SENT of them), then facts before derived lines, then the surest, then in page order;
    the first `limit` of that full sort."""
    if not page_ids:
        return []
    rows = await conn.execute(text(f"""
        SELECT c.id::text AS id
        FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        LEFT JOIN unnest(CAST(:ids AS uuid[]), CAST(:scores AS float8[])) AS sc(id, score) ON sc.id = c.id
        WHERE p.id = ANY(CAST(:pages AS uuid[])) AND {_SCOPE} AND {CLAIM_HELD}
        ORDER BY coalesce(sc.score, 0) DESC, c.kind = 'fact' DESC, c.confidence DESC NULLS LAST, s.position, c.position, c.id
        LIMIT :limit
    """), {"pages": list(page_ids), "tenant": tenant, "owner": owner, "ids": [k for k, _ in scored],
           "scores": [v for _, v in scored], "limit": limit, "as_of": as_of, "history": False})
    return [row.id for row in rows]


# The best-scored claims whose scores order a page's claims; the rest sort as unscored.
MAX_SCORES_SENT = 3_000


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
    # The citations first (a few hundred), then each one's claim, section and page by primary key:
    # never a scan of every claim of the scope to join them, whatever the planner estimates (LIMIT 1
    # keeps each lookup a lookup: the planner would otherwise fold it into an ordinary join).
    rows = await conn.execute(text(f"""
        SELECT cs.memory_id, c.id::text AS claim_id, c.kind, c.corroboration
        FROM wiki_claim_sources cs
        CROSS JOIN LATERAL (SELECT c.id, c.kind, c.corroboration, c.section_id FROM wiki_section_claims c
                            WHERE c.id = cs.claim_id LIMIT 1) c
        CROSS JOIN LATERAL (SELECT s.page_id FROM wiki_page_sections s WHERE s.id = c.section_id LIMIT 1) s
        CROSS JOIN LATERAL (SELECT p.* FROM wiki_pages p WHERE p.id = s.page_id LIMIT 1) p
        WHERE cs.tenant_id = :tenant AND cs.owner_id = :owner AND cs.memory_id = ANY(CAST(:ids AS text[]))
          AND {_SCOPE}
        ORDER BY cs.memory_id, c.kind = 'fact' DESC, c.corroboration, c.id
    """), {"tenant": tenant, "owner": owner, "ids": list(memory_ids)})
    return [Citation(memory_id=r.memory_id, claim_id=r.claim_id, kind=r.kind, corroboration=r.corroboration)
            for r in rows]


class PageCiting(BaseModel):
    memory_id: str
    page_id: str
    type: str
    slug: str
    title: str
    summary: str | None


async def pages_citing(conn: AsyncConnection, tenant: str, owner: str, memory_ids: Sequence[str]) -> list[PageCiting]:
    """The active pages of the scope whose sections cite each memory."""
    if not memory_ids:
        return []
    rows = await conn.execute(text(f"""
        SELECT DISTINCT src.source_ref AS memory_id, p.id::text AS page_id, p.type, p.slug, p.title, p.summary
        FROM wiki_section_sources src JOIN wiki_page_sections s ON s.id = src.section_id
        JOIN wiki_pages p ON p.id = s.page_id
        WHERE src.source_ref = ANY(CAST(:ids AS text[])) AND src.source_kind = 'memory_unit' AND {_SCOPE}
    """), {"tenant": tenant, "owner": owner, "ids": list(memory_ids)})
    return [PageCiting(memory_id=r.memory_id, page_id=r.page_id, type=r.type, slug=r.slug, title=r.title,
                       summary=r.summary) for r in rows]


async def memory_validity(conn: AsyncConnection, tenant: str, owner: str, memory_ids: Sequence[str],
                          as_of: datetime | None = None) -> dict[str, str]:
    """For each of the memories a claim of an active page cites: the validity of the claims citing it
    that hold now (or held at `as_of`), the most current first (current, disputed, superseded), or
    "replaced" when none does (its fact changed since: an older value, never an answer). A memory no
    claim cites is left out."""
    if not memory_ids:
        return {}
    rows = await conn.execute(text(f"""
        SELECT cs.memory_id, bool_or({CLAIM_HELD}) AS held,
               min(CASE c.validity WHEN 'current' THEN 0 WHEN 'disputed' THEN 1 ELSE 2 END)
                   FILTER (WHERE {CLAIM_HELD}) AS best
        FROM wiki_claim_sources cs
        JOIN wiki_section_claims c ON c.id = cs.claim_id JOIN wiki_page_sections s ON s.id = c.section_id
        JOIN wiki_pages p ON p.id = s.page_id
        WHERE cs.tenant_id = :tenant AND cs.owner_id = :owner AND cs.memory_id = ANY(CAST(:ids AS text[]))
          AND {_SCOPE}
        GROUP BY cs.memory_id
    """), {"tenant": tenant, "owner": owner, "ids": list(memory_ids), "as_of": as_of, "history": False})
    names = ("current", "disputed", "superseded")
    return {r.memory_id: names[r.best] if r.held else "replaced" for r in rows}


class MemoryText(BaseModel):
    id: str
    content: str
    occurred_at: datetime


async def memory_texts(conn: AsyncConnection, tenant: str, owner: str, memory_ids: Sequence[str]) -> dict[str, MemoryText]:
    if not memory_ids:
        return {}
    rows = await conn.execute(text("""
        WITH chosen AS MATERIALIZED (SELECT * FROM memory_units WHERE id = ANY(CAST(:ids AS uuid[])))
        SELECT id::text AS id, content, created_at FROM chosen WHERE tenant_id = :tenant AND owner_id = :owner
    """), {"tenant": tenant, "owner": owner, "ids": [str(UUID(i)) for i in memory_ids]})
    return {r.id: MemoryText(id=r.id, content=r.content, occurred_at=r.created_at) for r in rows}


async def uncompiled_memories(conn: AsyncConnection, tenant: str, owner: str, limit: int = 5_000) -> list[str]:
    """Memories retained after the scope's compile cursor (not compiled yet), newest first: the
    keyset the compile reads by, so its index answers."""
    rows = await conn.execute(text("""
        WITH cursor AS (
            SELECT coalesce(max(date_trunc('milliseconds', last_record_updated_at AT TIME ZONE 'UTC')),
                            'epoch'::timestamp) AS since,
                   coalesce(max(last_record_id::text), :no_id)::uuid AS since_id
            FROM wiki_compile_cursors WHERE tenant_id = :tenant AND owner_id = :owner)
        SELECT m.id::text AS id FROM memory_units m, cursor
        WHERE m.tenant_id = :tenant AND m.owner_id = :owner
          AND (date_trunc('milliseconds', m.updated_at AT TIME ZONE 'UTC'), m.id) > (cursor.since, cursor.since_id)
        ORDER BY date_trunc('milliseconds', m.updated_at AT TIME ZONE 'UTC') DESC, m.id DESC
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "no_id": str(UUID(int=0)), "limit": limit})
    return [row.id for row in rows]


async def important_claims(conn: AsyncConnection, tenant: str, owner: str, min_confidence: float,
                           limit: int = 2_000) -> list[RecallClaimRow]:
    """The scope's fact claims that hold now (never a superseded one) at least `min_confidence` sure,
    surest and most corroborated first (the pool `context` scores in full), without their sources
    (`claim_details` reads those of the chosen)."""
    rows = await conn.execute(text(f"""
        SELECT {_CLAIM_COLUMNS.replace(_SOURCES_COLUMN, "CAST('{{}}' AS text[]) AS sources")}
        FROM wiki_section_claims c JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE {_SCOPE} AND c.kind = 'fact' AND {CLAIM_AT_LEAST}
          AND {CLAIM_HELD}
        ORDER BY c.confidence DESC NULLS LAST, c.corroboration DESC, c.last_seen_at DESC NULLS LAST, c.id
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "min": min_confidence, "limit": limit, "as_of": None, "history": False})
    return [_claim_row(row) for row in rows]


async def vector_rows(conn: AsyncConnection, tenant: str, owner: str, kind: TextKind, model: str, dimensions: int,
                      made_since: datetime | None = None) -> list[tuple[str, bytes, datetime]]:
    """The scope's embeddings of `kind` by `model` at `dimensions` (made at or after `made_since`,
    when given), with when each was made. A claim of an archived page is dropped later, when the
    answers' details are read."""
    table, column = _VECTOR_TABLES[kind]
    rows = await conn.execute(text(f"""
        SELECT {column}::text AS id, vector, created_at FROM {table}
        WHERE tenant_id = :tenant AND owner_id = :owner AND model = :model AND dimensions = :dimensions
          AND (CAST(:since AS timestamptz) IS NULL OR created_at >= CAST(:since AS timestamptz))
    """), {"tenant": tenant, "owner": owner, "model": model, "dimensions": dimensions, "since": made_since})
    return [(r.id, bytes(r.vector), r.created_at) for r in rows]


class ClaimText(BaseModel):
    id: str
    text: str
    text_key: str


async def claims_without_vectors(conn: AsyncConnection, tenant: str, owner: str, model: str, dimensions: int,
                                 limit: int = 5_000) -> list[ClaimText]:
    """Claims of the scope with no vector by `model` at `dimensions` for their current text (new or
    changed claims, and every claim once the settings name another model or size)."""
    rows = await conn.execute(text("""
        SELECT c.id::text AS id, c.text, c.text_key FROM wiki_section_claims c
        JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
        LEFT JOIN wiki_claim_vectors v ON v.claim_id = c.id AND v.model = :model AND v.dimensions = :dimensions
                                       AND v.text_key = c.text_key
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND v.claim_id IS NULL
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "model": model, "dimensions": dimensions, "limit": limit})
    return [ClaimText(id=r.id, text=r.text, text_key=r.text_key) for r in rows]


async def store_claim_vectors(conn: AsyncConnection, tenant: str, owner: str, model: str, dimensions: int,
                              claims: Sequence[ClaimText], vectors: Sequence[bytes]) -> None:
    """One embedding per claim (float32 bytes, `dimensions` of them each), replacing the claim's
    embedding by any other model or size."""
    if not claims:
        return
    await conn.execute(text("""
        INSERT INTO wiki_claim_vectors (claim_id, tenant_id, owner_id, model, dimensions, text_key, vector)
        SELECT c.id, :tenant, :owner, :model, :dimensions, c.key, c.vector
        FROM unnest(CAST(:ids AS uuid[]), CAST(:keys AS text[]), CAST(:vectors AS bytea[])) AS c(id, key, vector)
        JOIN wiki_section_claims sc ON sc.id = c.id
        ON CONFLICT (claim_id) DO UPDATE SET model = excluded.model, dimensions = excluded.dimensions,
                                             text_key = excluded.text_key, vector = excluded.vector,
                                             created_at = now()
    """), {"tenant": tenant, "owner": owner, "model": model, "dimensions": dimensions, "ids": [c.id for c in claims],
           "keys": [c.text_key for c in claims], "vectors": list(vectors)})
