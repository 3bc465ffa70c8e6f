"""Forgetting, the scope-wide part: what holds a forgotten memory's text beyond the sections citing it.

The blast radius (store/forget.py) follows citations. Text can also travel without one: a page's
summary or a link's context written by the plan that read the memory, a mention's count or sample,
an alias, a staged plan, a Message Batch request. This module finds those, read-only, for the preview
and for the pass alike (store/forget_apply.py changes them), so both count the same things:

- the scope's gone words (`gone_words`): the words of the forgotten memories no remaining memory of
  the scope holds. A text of the scope holding one was derived from a forgotten memory;
- summaries holding one, anywhere in the scope: recomputed from the page's lead section;
- links resting on a forgotten memory (`source_refs`) or whose context holds a gone word: a co-mention
  link moves to another memory both pages still cite, or goes; a planner link whose memories were
  all forgotten goes, any other loses its context (it was written from the forgotten memory's batch);
- compiler aliases holding a gone word, on any surviving page;
- staged plans and rejected lines holding a forgotten memory's id or a gone word; every stored Message
  Batch request of the scope; every batch of the scope the provider still holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.evidence import flat_values
from domain.forget import GoneWords, surface_forms, word_tokens
from domain.links import CO_MENTION_PREFIX, DETERMINISTIC_PREFIX, co_mention_context
from store.llm_batches import HeldBatch, held_batches

# A word whose stem this many remaining memories share is taken as held without reading them all.
STEM_SAMPLE = 20


async def gone_words(conn: AsyncConnection, tenant: str, owner: str, forgotten: Iterable[str]) -> GoneWords:
    """The words of the forgotten memories (content and metadata) that no other memory of the scope holds."""
    keys = sorted(set(forgotten))
    if not keys:
        return GoneWords()
    rows = (await conn.execute(text("""
        SELECT content, metadata FROM memory_units
        WHERE tenant_id = :tenant AND owner_id = :owner AND id = ANY(CAST(:ids AS uuid[]))
    """), {"tenant": tenant, "owner": owner, "ids": keys})).all()
    # The metadata's values, not its keys ("entities", "name"): those are every memory's.
    raw = " ".join(" ".join([row.content, *flat_values(row.metadata or {})]) for row in rows)
    candidates = sorted(word_tokens(raw))
    if not candidates:
        return GoneWords()
    # The full-text index (stemmed) narrows each word to the few remaining memories that may hold it;
    # their own words decide. A stop word (no lexeme) is in every scope: held.
    held: set[str] = set()
    for row in await conn.execute(text("""
        SELECT w.word, numnode(plainto_tsquery('english', w.word)) = 0 AS stop,
               coalesce(array_agg(m.content) FILTER (WHERE m.content IS NOT NULL), '{}') AS contents
        FROM unnest(CAST(:words AS text[])) AS w(word)
        LEFT JOIN LATERAL (
            SELECT content FROM memory_units m
            WHERE m.tenant_id = :tenant AND m.owner_id = :owner AND m.id <> ALL(CAST(:ids AS uuid[]))
              AND m.search_tsv @@ plainto_tsquery('english', w.word)
            LIMIT :sample) m ON true
        GROUP BY w.word
    """), {"tenant": tenant, "owner": owner, "ids": keys, "words": candidates, "sample": STEM_SAMPLE}):
        if row.stop or len(row.contents) >= STEM_SAMPLE or any(row.word in word_tokens(c) for c in row.contents):
            held.add(row.word)
    unheld = [w for w in candidates if w not in held]
    if unheld:
        # Metadata is not in the index: a word only another memory's metadata holds is held too.
        for row in await conn.execute(text("""
            SELECT w.word FROM unnest(CAST(:words AS text[])) AS w(word)
            WHERE EXISTS (SELECT 1 FROM memory_units m WHERE m.tenant_id = :tenant AND m.owner_id = :owner
                            AND m.id <> ALL(CAST(:ids AS uuid[])) AND m.metadata::text ILIKE '%' || w.word || '%'
                            AND m.metadata <> '{}'::jsonb)
        """), {"tenant": tenant, "owner": owner, "ids": keys, "words": unheld}):
            held.add(row.word)
    words = frozenset(w for w in candidates if w not in held)
    return GoneWords(words=words, surfaces=frozenset(surface_forms(raw, words)))


@dataclass
class PageText:
    id: str
    ref: str  # type/slug
    title: str
    value: str | None  # the summary, or the alias


async def summaries_holding(conn: AsyncConnection, tenant: str, owner: str, gone: GoneWords) -> list[PageText]:
    """Pages of the scope whose summary holds a gone word."""
    if not gone.words:
        return []
    rows = await conn.execute(text("""
        SELECT id::text AS id, type || '/' || slug AS ref, title, summary FROM wiki_pages
        WHERE tenant_id = :tenant AND owner_id = :owner AND summary ILIKE ANY(CAST(:patterns AS text[]))
        ORDER BY type, slug
    """), {"tenant": tenant, "owner": owner, "patterns": gone.patterns})
    return [PageText(row.id, row.ref, row.title, row.summary) for row in rows if gone.holds(row.summary)]


async def aliases_holding(conn: AsyncConnection, tenant: str, owner: str, gone: GoneWords) -> list[tuple[str, str, str]]:
    """(alias id, page id, alias) of the compiler's aliases holding a gone word (not a page's own title)."""
    if not gone.words:
        return []
    rows = await conn.execute(text("""
        SELECT a.id::text AS id, a.page_id::text AS page_id, a.alias, p.title FROM wiki_page_aliases a
        JOIN wiki_pages p ON p.id = a.page_id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND a.source = 'compiler'
          AND a.alias ILIKE ANY(CAST(:patterns AS text[]))
        ORDER BY a.page_id, a.alias
    """), {"tenant": tenant, "owner": owner, "patterns": gone.patterns})
    return [(row.id, row.page_id, row.alias) for row in rows
            if gone.holds(row.alias) and not gone.holds(row.title)]


@dataclass
class LinkFate:
    id: str
    from_page: str
    to_page: str
    remove: bool
    context: str | None  # the new context (when kept)
    source_refs: list[str] | None


async def link_fates(conn: AsyncConnection, tenant: str, owner: str, forgotten: Iterable[str],
                     gone: GoneWords) -> list[LinkFate]:
    """Links of the scope resting on a forgotten memory, or whose context holds a gone word."""
    keys = sorted(set(forgotten))
    if not keys:
        return []
    rows = await conn.execute(text("""
        SELECT l.id::text AS id, l.from_page_id::text AS from_page, l.to_page_id::text AS to_page, l.context,
               l.source_refs,
               (SELECT min(a.source_ref) FROM wiki_page_sections sa
                  JOIN wiki_section_sources a ON a.section_id = sa.id AND a.source_kind = 'memory_unit'
                  JOIN wiki_section_sources b ON b.source_ref = a.source_ref AND b.source_kind = 'memory_unit'
                  JOIN wiki_page_sections sb ON sb.id = b.section_id
                WHERE sa.page_id = l.from_page_id AND sb.page_id = l.to_page_id
                  AND a.source_ref <> ALL(CAST(:ids AS text[]))) AS shared
        FROM wiki_page_links l JOIN wiki_pages p ON p.id = l.from_page_id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND (
              l.source_refs && CAST(:ids AS text[]) OR l.context ILIKE ANY(CAST(:patterns AS text[])))
        ORDER BY l.id
    """), {"tenant": tenant, "owner": owner, "ids": keys, "patterns": gone.patterns})
    fates = []
    gone_ids = set(keys)
    for row in rows:
        context = row.context or ""
        refs = list(row.source_refs) if row.source_refs is not None else None
        rested = refs is not None and bool(set(refs) & gone_ids)
        if context.startswith(CO_MENTION_PREFIX):
            if not rested and context.removeprefix(CO_MENTION_PREFIX) not in gone_ids:
                continue
            # Two pages citing one memory: the link rests on another memory they both cite, or goes.
            fates.append(LinkFate(row.id, row.from_page, row.to_page, remove=row.shared is None,
                                  context=co_mention_context(row.shared) if row.shared else None,
                                  source_refs=[row.shared] if row.shared else None))
        elif context.startswith(DETERMINISTIC_PREFIX):
            continue  # names pages, not memories: it goes with its page, if at all
        elif rested:
            left = [r for r in refs or [] if r not in gone_ids]
            fates.append(LinkFate(row.id, row.from_page, row.to_page, remove=not left, context=None, source_refs=left))
        elif gone.holds(context):
            fates.append(LinkFate(row.id, row.from_page, row.to_page, remove=False, context=None, source_refs=refs))
    return fates


@dataclass
class Staged:
    """Rows of the compile's own bookkeeping holding a forgotten (or edited) memory."""

    plans: int = 0
    rejected: int = 0
    batch_requests: int = 0
    provider_batches: list[HeldBatch] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return self.plans + self.rejected


_STAGED_PLANS = """
    FROM wiki_compile_plans p WHERE p.tenant_id = :tenant AND p.owner_id = :owner
      AND (p.memory_ids && CAST(:ids AS uuid[]) OR EXISTS (
           SELECT 1 FROM unnest(CAST(:ids AS text[])) AS i(id)
           WHERE strpos(p.plan::text, i.id) > 0 OR strpos(coalesce(p.resolved::text, ''), i.id) > 0)
        OR p.plan::text ILIKE ANY(CAST(:patterns AS text[]))
        OR coalesce(p.resolved::text, '') ILIKE ANY(CAST(:patterns AS text[])))
"""
_STAGED_REJECTED = """
    FROM wiki_rejected_claims WHERE tenant_id = :tenant AND owner_id = :owner
      AND (cited && CAST(:ids AS text[]) OR text ILIKE ANY(CAST(:patterns AS text[])))
"""


async def staged_rows(conn: AsyncConnection, tenant: str, owner: str, touched: Iterable[str], gone: GoneWords,
                      *, delete: bool) -> Staged:
    """Staged plans (their drafts go with them) and rejected lines holding a touched memory's id or a
    gone word, the scope's stored batch requests and the batches the provider still holds: counted,
    or, with `delete`, removed (the batches are deleted at the provider by the pass's last step)."""
    params = {"tenant": tenant, "owner": owner, "ids": sorted(set(touched)), "patterns": gone.patterns}
    found = Staged(provider_batches=await held_batches(conn, tenant, owner))
    scope = {"tenant": tenant, "owner": owner}
    if delete:
        found.plans = (await conn.execute(text(f"DELETE {_STAGED_PLANS}"), params)).rowcount
        found.rejected = (await conn.execute(text(f"DELETE {_STAGED_REJECTED}"), params)).rowcount
        found.batch_requests = (await conn.execute(text(
            "DELETE FROM wiki_llm_batch_requests WHERE tenant_id = :tenant AND owner_id = :owner"), scope)).rowcount
    else:
        found.plans = (await conn.execute(text(f"SELECT count(*) {_STAGED_PLANS}"), params)).scalar_one()
        found.rejected = (await conn.execute(text(f"SELECT count(*) {_STAGED_REJECTED}"), params)).scalar_one()
        found.batch_requests = (await conn.execute(text(
            "SELECT count(*) FROM wiki_llm_batch_requests WHERE tenant_id = :tenant AND owner_id = :owner"),
            scope)).scalar_one()
    return found
