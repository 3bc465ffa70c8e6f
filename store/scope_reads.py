"""Reads of one scope that feed the planner: candidate pages chosen by relevance, open mentions.

Candidate pages are bounded (200 by default) whatever the scope's size: first pages whose aliases
or titles match names in the batch exactly, then pages the resolution ladder could call the same
thing (an alias that starts or ends with a name's core: "uchi austin" or "the driskill" for a batch
naming "Uchi" or "Driskill"; a shared blocking key, store/name_index.py: "emmer and rye" for "Emmer &
Rye"), then by trigram similarity, then by full-text match (these two WEAK_MATCH_BUDGET in all, the
closest first), then the most recently compiled. So the prompt stays the same size as a scope grows to thousands
of pages, and the pages a batch talks about are always in it (the most recent pages alone would miss
merges once a scope outgrows them).
"""

from __future__ import annotations

import re
from typing import Any
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.context import CandidateFact, CandidatePage, CandidateSection, MemoryRecord, OpenMention
from domain.resolution import name_blocking_keys, search_keys

MAX_NAMES = 200
# Low enough for a transposition in a one-word name ("margeurite" / "marguerite": 0.47).
TRIGRAM_THRESHOLD = 0.4
MATCHES_PER_NAME = 3  # pages each name may bring in per relevance tier (core, trigram, full text)
# Pages matched by a similar spelling (trigram) or by a name in their text (full text), in all, the
# closest first: weak evidence that a page is what a batch talks about, and the tier that grows as a
# scope ages (an aged page's text names many things), so it gets a budget of its own rather than one
# per name. Pages a name matches as an alias, its core or its blocking key are never cut by it.
WEAK_MATCH_BUDGET = 8
# Recently compiled pages pad the relevant ones up to this many: context for a memory that refers to
# a recent page without naming it. Few: measured on the sample (bench/candidates.py), padding 100
# pages or none gives the same wiki, page for page and citation for citation, while the padding
# was the largest share of the planner's prompt; 25 keeps the most recent ones for what the
# batch's names miss.
MAX_RECENT_PADDING = 25
# Open mentions the batch does not name pad the ones it names (and lint's promotion candidates) up to
# this many, most seen first: the names closest to promotion, for a memory that writes a held name in
# a form the lookup misses. Few, for the same reason as the pages: in an aged scope the padding was
# most of a plan's prompt (100 open mentions with their sightings, ~5,000 tokens, in the 10th thousand
# memories of one scope) and on the sample every padding gives the same wiki (bench/candidates.py).
# Ten: a young scope holds few open mentions, so a larger padding is paid only by an aged one.
MAX_MENTION_PADDING = 10
# A padding mention is shown with its newest sighting only: enough to recognise the name in another
# form, and the same size however many sightings an aged mention has collected (a named or required
# mention, which a plan may promote citing its sightings, keeps all it holds).
PADDING_SIGHTINGS_SHOWN = 1
# Characters of each section's body read for the prompt's excerpt (which shows fewer).
SECTION_EXCERPT_READ = 1000
# A page's claims, newest first (the current ones, and those a newer line replaced, with when), shown
# to the planner so a new line can say which one it replaces, and a memory that arrives late can be
# placed between them (any attribute: the model decides; offline, domain/facts.py). Only for the
# pages the batch names (a page only padding the candidates holds no subject of the batch's lines),
# and at most this many each, like every other part of the context.
FACT_ROWS_READ = 24
FACTS_SHOWN = 20
# Capitalised phrases ("Lady Bird Lake", "Café de Flore" is caught by its metadata instead).
_PROPER_NAME = re.compile(r"\b([A-ZÀ-Þ][\w'’-]+(?:\s+[A-ZÀ-Þ][\w'’-]+)*)")


def names_in_batch(memories: list[MemoryRecord]) -> list[str]:
    """Normalised names the batch talks about, each followed by its core when that differs ("uchi austin",
    "uchi" for "Uchi (Austin)"): metadata hints first, then capitalised phrases."""
    names: dict[str, None] = {}

    def add(raw: Any) -> None:
        if isinstance(raw, str):
            for key in search_keys([raw]):
                if len(key) >= 3:
                    names.setdefault(key, None)

    for memory in memories:
        meta = memory.metadata or {}
        for entity in meta.get("entities") or []:
            if isinstance(entity, dict):
                add(entity.get("name"))
                for alias in entity.get("aliases") or []:
                    add(alias)
        place = meta.get("place")
        if isinstance(place, dict):
            add(place.get("name"))
            add(place.get("city"))
        journal = meta.get("journal")
        if isinstance(journal, dict):
            add(journal.get("title"))
    for memory in memories:
        for match in _PROPER_NAME.finditer(memory.content):
            add(match.group(1))
    return list(names)[:MAX_NAMES]


# Each relevance tier is bounded per name (LATERAL ... LIMIT), so the read costs the same whether the
# scope has a hundred pages or ten thousand; recency only pads what relevance leaves.
_CANDIDATES_SQL = """
WITH names AS (SELECT unnest(CAST(:names AS text[])) AS name),
exact AS (
    SELECT DISTINCT p.id, 0 AS tier, 1.0::float8 AS score
    FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
    WHERE a.alias IN (SELECT name FROM names)
      AND p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
),
core AS (
    SELECT hit.id, 1 AS tier, hit.score
    FROM names n CROSS JOIN LATERAL (
        SELECT p.id, similarity(a.alias, n.name)::float8 AS score
        FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
        WHERE (a.alias LIKE n.name || ' %' OR a.alias LIKE '% ' || n.name)
          AND p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY score DESC, p.id LIMIT :per_name
    ) hit
),
blocked AS (
    SELECT hit.id, 1 AS tier, hit.score
    FROM unnest(CAST(:keys AS text[])) AS b(key) CROSS JOIN LATERAL (
        SELECT DISTINCT k.page_id AS id, 0.5::float8 AS score
        FROM wiki_alias_keys k JOIN wiki_pages p ON p.id = k.page_id
        WHERE k.tenant_id = :tenant AND k.owner_id = :owner AND k.key = b.key AND p.status = 'active'
        ORDER BY k.page_id LIMIT :per_name
    ) hit
),
fuzzy AS (
    SELECT hit.id, 2 AS tier, hit.score
    FROM names n CROSS JOIN LATERAL (
        SELECT p.id, similarity(a.alias, n.name)::float8 AS score
        FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
        WHERE a.alias % n.name AND p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY score DESC, p.id LIMIT :per_name
    ) hit
),
fulltext AS (
    SELECT hit.id, 3 AS tier, hit.score
    FROM names n CROSS JOIN LATERAL (
        SELECT p.id, ts_rank(p.search_tsv, plainto_tsquery('english', n.name))::float8 AS score
        FROM wiki_pages p
        WHERE p.search_tsv @@ plainto_tsquery('english', n.name)
          AND p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
        ORDER BY score DESC, p.id LIMIT :per_name
    ) hit
),
recent AS (
    SELECT id, 4 AS tier, extract(epoch FROM coalesce(last_compiled_at, 'epoch'))::float8 AS score
    FROM wiki_pages WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active'
    ORDER BY last_compiled_at DESC NULLS LAST, id LIMIT :recent
),
ranked AS (
    SELECT id, min(tier) AS tier, max(score) AS score
    FROM (SELECT * FROM exact UNION ALL SELECT * FROM core UNION ALL SELECT * FROM blocked UNION ALL SELECT * FROM fuzzy
          UNION ALL SELECT * FROM fulltext
          UNION ALL SELECT * FROM recent) hits
    GROUP BY id
)
SELECT p.id, p.type, p.slug, p.title, p.summary, r.tier,
       coalesce((SELECT array_agg(alias ORDER BY alias) FROM wiki_page_aliases WHERE page_id = p.id), '{}') AS aliases,
       coalesce((SELECT json_agg(json_build_object('slug', s.section_slug, 'heading', s.heading,
                                                   'body_md', left(s.body_md, :excerpt))
                                 ORDER BY s.position, s.section_slug)
                 FROM wiki_page_sections s WHERE s.page_id = p.id), '[]') AS sections,
       coalesce((SELECT json_agg(json_build_object('text', c.text, 'since', c.valid_from, 'until', c.valid_to)
                                 ORDER BY c.valid_from DESC NULLS LAST, c.id)
                 FROM (SELECT c.text, c.valid_from, c.valid_to, c.id FROM wiki_page_sections s
                       JOIN wiki_section_claims c ON c.section_id = s.id
                       WHERE s.page_id = p.id AND c.kind = 'fact'
                         AND r.tier <= 1  -- a page the batch names: exact, core or blocking-key match
                       ORDER BY c.valid_from DESC NULLS LAST, c.id LIMIT :fact_rows) c), '[]') AS facts
FROM ranked r JOIN wiki_pages p ON p.id = r.id
ORDER BY r.tier, r.score DESC, p.slug
LIMIT :limit
"""


WEAK_TIERS = (2, 3)  # the SQL's tiers of trigram and full-text matches


async def candidate_pages(conn: AsyncConnection, tenant: str, owner: str, names: list[str],
                          limit: int) -> list[CandidatePage]:
    # SET LOCAL: the threshold of `%` (and so the index scan) for this transaction only.
    await conn.execute(text(f"SET LOCAL pg_trgm.similarity_threshold = {TRIGRAM_THRESHOLD}"))
    rows = (await conn.execute(text(_CANDIDATES_SQL), {
        "tenant": tenant, "owner": owner, "names": names, "limit": limit, "per_name": MATCHES_PER_NAME,
        # Pages sharing a blocking key (store/name_index.py) with a name: "emmer and rye" for "Emmer & Rye".
        "keys": name_blocking_keys(names),
        "recent": min(limit, MAX_RECENT_PADDING), "excerpt": SECTION_EXCERPT_READ, "fact_rows": FACT_ROWS_READ,
    })).all()
    # The rows come best first (tier, then score): the weak matches past the budget are the farthest.
    cut = {row.id for row in [row for row in rows if row.tier in WEAK_TIERS][WEAK_MATCH_BUDGET:]}
    rows = [row for row in rows if row.id not in cut]
    return [
        CandidatePage(id=row.id, type=row.type, slug=row.slug, title=row.title, summary=row.summary,
                      aliases=list(row.aliases or []),
                      sections=[CandidateSection.model_validate(section) for section in row.sections or []],
                      facts=changing_facts(row.facts or []))
        for row in rows
    ]


def changing_facts(claims: list[dict[str, Any]]) -> list[CandidateFact]:
    """The page's claims (newest first), each text once: the lines a new memory's line may replace, or
    be replaced by."""
    out: list[CandidateFact] = []
    for claim in claims:
        if all(f.text != claim["text"] for f in out):
            out.append(CandidateFact.model_validate(claim))
        if len(out) == FACTS_SHOWN:
            break
    return out


async def open_mentions(conn: AsyncConnection, tenant: str, owner: str, names: list[str], limit: int,
                        must_include: list[UUID]) -> list[OpenMention]:
    """Open mentions: those the batch names (and lint's promotion candidates), then the most seen up to
    MAX_MENTION_PADDING more; `limit` in all."""
    rows = (await conn.execute(text("""
        SELECT id, alias, alias_normalized, mention_count, suggested_type, last_seen_at, sample_contexts
        FROM wiki_unresolved_mentions
        WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'open'
        ORDER BY (id = ANY(CAST(:must AS uuid[]))) DESC, (alias_normalized = ANY(CAST(:names AS text[]))) DESC,
                 mention_count DESC, alias_normalized
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "names": names, "must": list(must_include), "limit": limit})).all()
    wanted, named = set(must_include), set(names)
    padding = 0
    kept = []
    for row in rows:  # the named and required ones come first (the ORDER BY)
        padded = row.id not in wanted and row.alias_normalized not in named
        if padded:
            padding += 1
            if padding > MAX_MENTION_PADDING:
                break
        contexts = list(row.sample_contexts or [])
        kept.append((row, contexts[:PADDING_SIGHTINGS_SHOWN] if padded else contexts))
    return [
        OpenMention(id=row.id, alias=row.alias, alias_normalized=row.alias_normalized,
                    mention_count=row.mention_count, suggested_type=row.suggested_type,
                    last_seen_at=row.last_seen_at, sample_contexts=contexts)
        for row, contexts in kept
    ]


def held_sighting_ids(mentions: list[OpenMention]) -> list[str]:
    """The memories the mentions' sample contexts cite, each once, in mention order."""
    refs = (str(context.get("source_ref") or "") for mention in mentions for context in mention.sample_contexts
            if isinstance(context, dict))
    return [ref for ref in dict.fromkeys(refs) if ref]


async def section_source_refs(conn: AsyncConnection, tenant: str, owner: str, page_id: str, slug: str) -> list[str]:
    """The memories a section of a page of the scope cites, in citation order (first cited first)."""
    rows = await conn.execute(text("""
        SELECT s.source_ref FROM wiki_section_sources s
        JOIN wiki_page_sections sec ON sec.id = s.section_id
        JOIN wiki_pages p ON p.id = sec.page_id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.id = CAST(:page AS uuid)
          AND sec.section_slug = :slug AND s.source_kind = 'memory_unit'
        ORDER BY s.first_seen_at, s.source_ref
    """), {"tenant": tenant, "owner": owner, "page": page_id, "slug": slug})
    return [row.source_ref for row in rows]
