"""Apply a resolved plan: every write of the batch, in the caller's transaction (seed steps 1.5–1.9).

Order: pages and their sections (bodies linkified, wikilinks stripped, provenance only from
citations), aliases, unresolved mentions, promotions, planner links, then the deterministic parent
and co-mention links, and finally `body_md` re-rendered from the section rows of every touched page.
Every statement is an upsert keyed by natural keys with deterministic ids, so applying the same
plan again changes nothing — but the caller's cursor compare-and-set makes sure it never does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from activities.memory_store import load_memories
from domain import ids
from domain.compile_messages import ApplyBatchResult
from domain.guards import PageRef, linkify_known_entities, strip_wikilinks
from domain.links import co_mention_context, co_mention_pairs, deterministic_link_context
from domain.parents import (
    ParentCandidate,
    derive_parent_candidates,
    derive_parent_candidates_from_page_summaries,
    is_geo_qualified_extension,
)
from domain.render import render_body_markdown

MAX_SAMPLE_CONTEXTS = 5
PARENT_TITLE_FUZZY_THRESHOLD = 0.5
_BOLD = re.compile(r"\*\*(.+?)\*\*")


@dataclass
class _Apply:
    conn: AsyncConnection
    tenant: str
    owner: str
    now: datetime
    result: ApplyBatchResult = field(default_factory=ApplyBatchResult)
    # page id -> memory ids newly cited by its sections in this batch (the deterministic linkers' input)
    touched: dict[str, list[str]] = field(default_factory=dict)
    page_ids_by_key: dict[tuple[str, str], str] = field(default_factory=dict)

    def touch(self, page_id: str, refs: list[str]) -> None:
        cited = self.touched.setdefault(page_id, [])
        cited.extend(r for r in refs if r not in cited)


async def apply_resolved_plan(conn: AsyncConnection, tenant: str, owner: str, document: dict[str, Any],
                              drafts: dict[str, str], *, deterministic_linking: bool) -> ApplyBatchResult:
    now = (await conn.execute(text("SELECT now()"))).scalar_one()
    state = _Apply(conn=conn, tenant=tenant, owner=owner, now=now)
    writes = _section_writes(document, drafts)
    refs = await _linkable_pages(state, document, writes)
    for page in document["pages"]:
        await _write_page(state, page, [w for w in writes if w["page_id"] == page["page_id"]], refs)
    for mention in document["mentions"]:
        await _upsert_mention(state, mention)
    for promoted in document["promotions"]:
        await _mark_promoted(state, promoted)
    for link in document["links"]:
        await _planner_link(state, link)
    if deterministic_linking:
        memory_ids = [UUID(m) for m in document["memory_ids"]]
        await _deterministic_parent_links(state, memory_ids)
        await _co_mention_links(state)
    await _render_bodies(state)
    state.result.touched_page_ids = [UUID(p) for p in state.touched]
    return state.result


# ---------------------------------------------------------------------------------------------- pages


def _section_writes(document: dict[str, Any], drafts: dict[str, str]) -> list[dict[str, Any]]:
    """Final section bodies: the writer's draft for tasks, the planner's body for direct writes."""
    writes = []
    for page in document["pages"]:
        for section in page["sections"]:
            if "task" in section:
                task = document["tasks"][section["task"]]
                if section["task"] not in drafts:
                    continue  # the writer was not run for it (never happens after a complete batch)
                writes.append({"page_id": page["page_id"], "slug": task["slug"], "heading": task["heading"],
                               "body_md": drafts[section["task"]], "source_refs": task["source_refs"],
                               "rewritten": True})
            else:
                writes.append({"page_id": page["page_id"], **section})
    return writes


async def _linkable_pages(state: _Apply, document: dict[str, Any], writes: list[dict[str, Any]]) -> list[PageRef]:
    """Pages whose exact title appears in bold in this batch's bodies (the linkifier's candidates)."""
    bolded = sorted({match.group(1).strip() for w in writes for match in _BOLD.finditer(w["body_md"] or "")})
    refs = {(p["type"], p["slug"], p["title"]): None for p in document["pages"] if p["title"] in bolded}
    if bolded:
        rows = await state.conn.execute(text("""
            SELECT type, slug, title FROM wiki_pages
            WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active'
              AND title = ANY(CAST(:titles AS text[]))
            ORDER BY type, slug
        """), {"tenant": state.tenant, "owner": state.owner, "titles": bolded})
        for row in rows:
            refs.setdefault((row.type, row.slug, row.title), None)
    return [PageRef(type=t, slug=s, title=title) for t, s, title in refs]


async def _write_page(state: _Apply, page: dict[str, Any], writes: list[dict[str, Any]],
                      refs: list[PageRef]) -> None:
    if page["mode"] == "update" and not writes and not page["aliases"]:
        return  # every proposed section was skipped as unchanged: the page is not touched
    row = (await state.conn.execute(text("""
        INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title, summary, status, last_compiled_at)
        VALUES (:id, :tenant, :owner, :type, :slug, :title, :summary, 'active', :now)
        ON CONFLICT (tenant_id, owner_id, type, slug) DO UPDATE SET
            title = CASE WHEN :keep_title THEN wiki_pages.title ELSE excluded.title END,
            summary = CASE WHEN :keep_title THEN coalesce(wiki_pages.summary, excluded.summary)
                           ELSE coalesce(excluded.summary, wiki_pages.summary) END,
            status = 'active', last_compiled_at = :now, updated_at = :now
        RETURNING id, (xmax = 0) AS inserted
    """), {"id": page["page_id"], "tenant": state.tenant, "owner": state.owner, "type": page["type"],
           "slug": page["slug"], "title": page["title"], "summary": page["summary"], "now": state.now,
           "keep_title": page["keep_title"]})).one()
    page_id = str(row.id)
    state.page_ids_by_key[(page["type"], page["slug"])] = page_id
    state.result.pages_upserted += 1
    if row.inserted:
        state.result.pages_created += 1
    state.touch(page_id, [])
    for write in writes:
        await _upsert_section(state, page_id, write, refs)
    await _add_aliases(state, page_id, page["aliases"])


async def _upsert_section(state: _Apply, page_id: str, write: dict[str, Any], refs: list[PageRef]) -> None:
    body = linkify_known_entities(strip_wikilinks(write["body_md"]).strip(), refs)
    section_id = ids.section_id(UUID(page_id), write["slug"])
    section = (await state.conn.execute(text("""
        INSERT INTO wiki_page_sections (id, page_id, section_slug, heading, body_md, position, last_source_at)
        VALUES (:id, :page, :slug, :heading, :body,
                coalesce((SELECT max(position) FROM wiki_page_sections WHERE page_id = :page), 0) + 1, :now)
        ON CONFLICT (page_id, section_slug) DO UPDATE SET
            body_md = excluded.body_md, last_source_at = :now, updated_at = :now
        RETURNING id
    """), {"id": section_id, "page": page_id, "slug": write["slug"], "heading": write["heading"], "body": body,
           "now": state.now})).scalar_one()
    if write.get("rewritten"):
        state.result.sections_rewritten += 1  # through the section writer: what the per-run cap counts
    else:
        state.result.sections_written += 1
    sources = write["source_refs"]
    if sources:
        # Provenance only from this section's citations; zero cited memories means zero rows.
        await state.conn.execute(text("""
            INSERT INTO wiki_section_sources (id, section_id, source_kind, source_ref, first_seen_at)
            VALUES (:id, :section, 'memory_unit', :ref, :now)
            ON CONFLICT (section_id, source_kind, source_ref) DO NOTHING
        """), [{"id": ids.source_id(section, "memory_unit", ref), "section": section, "ref": ref, "now": state.now}
               for ref in sources])
    state.touch(page_id, sources)


async def _add_aliases(state: _Apply, page_id: str, aliases: list[str]) -> None:
    if not aliases:
        return
    await state.conn.execute(text("""
        INSERT INTO wiki_page_aliases (id, page_id, alias, source) VALUES (:id, :page, :alias, 'compiler')
        ON CONFLICT (page_id, alias) DO NOTHING
    """), [{"id": ids.alias_id(UUID(page_id), alias), "page": page_id, "alias": alias} for alias in aliases])


# ------------------------------------------------------------------------------------------ mentions


async def _upsert_mention(state: _Apply, mention: dict[str, Any]) -> None:
    context = None
    if mention["context"]:
        context = {"quote": mention["context"], "source_ref": mention["source_ref"], "seen_at": state.now.isoformat()}
    existing = (await state.conn.execute(text("""
        SELECT id, sample_contexts FROM wiki_unresolved_mentions
        WHERE tenant_id = :tenant AND owner_id = :owner AND alias_normalized = :alias AND status = 'open'
        FOR UPDATE
    """), {"tenant": state.tenant, "owner": state.owner, "alias": mention["alias_normalized"]})).first()
    if existing is not None:
        samples = list(existing.sample_contexts or [])
        if context is not None:
            samples = [context, *samples][:MAX_SAMPLE_CONTEXTS]
        await state.conn.execute(text("""
            UPDATE wiki_unresolved_mentions SET mention_count = mention_count + 1, last_seen_at = :now,
                sample_contexts = CAST(:samples AS jsonb), suggested_type = coalesce(:type, suggested_type),
                updated_at = :now
            WHERE id = :id
        """), {"id": existing.id, "now": state.now, "samples": json.dumps(samples),
               "type": mention["suggested_type"]})
    else:
        generation = (await state.conn.execute(text("""
            SELECT count(*) FROM wiki_unresolved_mentions
            WHERE tenant_id = :tenant AND owner_id = :owner AND alias_normalized = :alias
        """), {"tenant": state.tenant, "owner": state.owner, "alias": mention["alias_normalized"]})).scalar_one()
        await state.conn.execute(text("""
            INSERT INTO wiki_unresolved_mentions (id, tenant_id, owner_id, alias, alias_normalized, suggested_type,
                sample_contexts, first_seen_at, last_seen_at, updated_at)
            VALUES (:id, :tenant, :owner, :alias, :normalized, :type, CAST(:samples AS jsonb), :now, :now, :now)
        """), {"id": ids.mention_id(state.tenant, state.owner, mention["alias_normalized"], generation),
               "tenant": state.tenant, "owner": state.owner, "alias": mention["alias"],
               "normalized": mention["alias_normalized"], "type": mention["suggested_type"],
               "samples": json.dumps([context] if context else []), "now": state.now})
    state.result.unresolved_upserted += 1


async def _mark_promoted(state: _Apply, promoted: dict[str, Any]) -> None:
    already = (await state.conn.execute(text("""
        SELECT 1 FROM wiki_unresolved_mentions
        WHERE tenant_id = :tenant AND owner_id = :owner AND alias_normalized = :alias AND status = 'promoted'
    """), {"tenant": state.tenant, "owner": state.owner, "alias": promoted["alias_normalized"]})).first()
    params = {"id": promoted["mention_id"], "tenant": state.tenant, "owner": state.owner}
    if already:
        # The alias was promoted before (one promoted row per alias): the open row is simply retired.
        await state.conn.execute(text(
            "DELETE FROM wiki_unresolved_mentions WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner"
        ), params)
    else:
        await state.conn.execute(text("""
            UPDATE wiki_unresolved_mentions SET status = 'promoted', promoted_page_id = :page, updated_at = now()
            WHERE id = :id AND tenant_id = :tenant AND owner_id = :owner AND status = 'open'
        """), {**params, "page": promoted["page_id"]})
    state.result.unresolved_promoted += 1


# ---------------------------------------------------------------------------------------------- links


async def insert_reference_link(conn: AsyncConnection, from_page: str, to_page: str, context: str | None) -> bool:
    """A `reference` link; False when it is a self-link or already exists (its first context is kept)."""
    if from_page == to_page:
        return False
    inserted = (await conn.execute(text("""
        INSERT INTO wiki_page_links (id, from_page_id, to_page_id, kind, context)
        VALUES (:id, :from_page, :to_page, 'reference', :context)
        ON CONFLICT (from_page_id, to_page_id, kind) DO NOTHING
        RETURNING 1
    """), {"id": ids.link_id(UUID(from_page), UUID(to_page), "reference"), "from_page": from_page,
           "to_page": to_page, "context": context})).first()
    return inserted is not None


async def _page_id_by_type_slug(state: _Apply, page_type: str, slug: str) -> str | None:
    key = (page_type, slug)
    if key not in state.page_ids_by_key:
        found = (await state.conn.execute(text("""
            SELECT id FROM wiki_pages WHERE tenant_id = :tenant AND owner_id = :owner AND type = :type AND slug = :slug
              AND status = 'active'
        """), {"tenant": state.tenant, "owner": state.owner, "type": page_type, "slug": slug})).scalar_one_or_none()
        if found is None:
            return None
        state.page_ids_by_key[key] = str(found)
    return state.page_ids_by_key[key]


async def _planner_link(state: _Apply, link: dict[str, Any]) -> None:
    from_page = await _page_id_by_type_slug(state, link["fromType"], link["fromSlug"].strip())
    to_page = await _page_id_by_type_slug(state, link["toType"], link["toSlug"].strip())
    if from_page is None or to_page is None:
        state.result.dropped_invalid_ids += 1  # a link to a page that does not exist in this scope
        return
    if await insert_reference_link(state.conn, from_page, to_page, link.get("context")):
        state.result.links_upserted += 1


async def _touched_pages(state: _Apply) -> list[Any]:
    rows = await state.conn.execute(text("""
        SELECT p.id, p.type, p.title, p.summary,
               coalesce((SELECT array_agg(alias ORDER BY alias) FROM wiki_page_aliases WHERE page_id = p.id), '{}')
                   AS tags
        FROM wiki_pages p WHERE p.id = ANY(CAST(:ids AS uuid[])) ORDER BY p.slug
    """), {"ids": list(state.touched)})
    return list(rows)


async def _parent_page(state: _Apply, candidate: ParentCandidate) -> Any | None:
    exact = (await state.conn.execute(text("""
        SELECT id, type, slug, title FROM wiki_pages
        WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active' AND title = :title
          AND type IN ('topic', 'entity')
        ORDER BY (type = 'topic') DESC, slug LIMIT 1
    """), {"tenant": state.tenant, "owner": state.owner, "title": candidate.parent_title})).first()
    if exact is not None:
        return exact
    fuzzy = await state.conn.execute(text("""
        SELECT id, type, slug, title FROM wiki_pages
        WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active' AND type IN ('topic', 'entity')
          AND title % :title AND similarity(title, :title) >= :threshold
        ORDER BY similarity(title, :title) DESC, slug LIMIT 5
    """), {"tenant": state.tenant, "owner": state.owner, "title": candidate.parent_title,
           "threshold": PARENT_TITLE_FUZZY_THRESHOLD})
    return next((row for row in fuzzy if is_geo_qualified_extension(candidate.parent_title, row.title)), None)


async def _deterministic_parent_links(state: _Apply, memory_ids: list[UUID]) -> None:
    """Entity leaf pages of this batch -> their city / journal topic (seed step 1.9)."""
    if not state.touched:
        return
    records = await load_memories(state.conn, state.tenant, state.owner, memory_ids)
    pages = await _touched_pages(state)
    entity_pages = [p for p in pages if p.type == "entity"]
    candidates = derive_parent_candidates(records) + derive_parent_candidates_from_page_summaries(
        [_SummaryPage(str(p.id), p.title, p.summary, list(p.tags)) for p in pages])
    for candidate in candidates:
        parent = await _parent_page(state, candidate)
        if parent is None:
            continue
        supporting = set(candidate.source_record_ids)
        if candidate.source_kind == "summary":
            leaves = [p for p in entity_pages if str(p.id) in supporting]
        else:
            leaves = [p for p in entity_pages if supporting & set(state.touched[str(p.id)])]
        context = deterministic_link_context(candidate.reason, parent.slug)
        for leaf in leaves:
            if await insert_reference_link(state.conn, str(leaf.id), str(parent.id), context):
                state.result.links_written_deterministic += 1


@dataclass
class _SummaryPage:
    id: str
    title: str
    summary: str | None
    tags: list[str]


async def _co_mention_links(state: _Apply) -> None:
    """Entity pages citing the same memory link to each other, at most 10 directed edges per memory."""
    cited = sorted({ref for refs in state.touched.values() for ref in refs})
    if not cited:
        return
    rows = await state.conn.execute(text("""
        SELECT DISTINCT s.source_ref, p.slug, p.id
        FROM wiki_section_sources s
        JOIN wiki_page_sections sec ON sec.id = s.section_id
        JOIN wiki_pages p ON p.id = sec.page_id
        WHERE s.source_kind = 'memory_unit' AND s.source_ref = ANY(CAST(:refs AS text[]))
          AND p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active' AND p.type = 'entity'
        ORDER BY s.source_ref, p.slug
    """), {"refs": cited, "tenant": state.tenant, "owner": state.owner})
    pages_by_memory: dict[str, list[tuple[str, str]]] = {}
    for row in rows:
        pages_by_memory.setdefault(row.source_ref, []).append((row.slug, str(row.id)))
    for from_page, to_page, memory_id in co_mention_pairs(pages_by_memory):
        if await insert_reference_link(state.conn, from_page, to_page, co_mention_context(memory_id)):
            state.result.links_written_co_mention += 1


# ---------------------------------------------------------------------------------------------- bodies


async def _render_bodies(state: _Apply) -> None:
    """`body_md` is always rendered from the page's section rows, never written on its own."""
    if not state.touched:
        return
    rows = await state.conn.execute(text("""
        SELECT page_id, heading, body_md, position FROM wiki_page_sections
        WHERE page_id = ANY(CAST(:ids AS uuid[])) ORDER BY page_id, position, section_slug
    """), {"ids": list(state.touched)})
    sections: dict[str, list[Any]] = {page: [] for page in state.touched}
    for row in rows:
        sections[str(row.page_id)].append(row)
    await state.conn.execute(text("UPDATE wiki_pages SET body_md = :body WHERE id = :id"),
                             [{"id": page, "body": render_body_markdown(rows)} for page, rows in sections.items()])
