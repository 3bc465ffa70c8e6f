"""Forgetting and editing memories, part two: applying a prepared pass in one transaction.

Everything the pass changes commits together with its receipt (the ledger row `forget:<pass id>`,
kind `forget`: memory ids, time and counts, no text), so a retried or replayed apply finds the
receipt and returns what it recorded: a pass completes once, and a worker killed before the commit
leaves nothing half-done. Sections not citing a touched memory are never written.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.aliases import normalize_alias
from domain.evidence import Evidence
from domain.forget import remaining_sightings
from domain.render import render_body_markdown
from messages.forget import ForgetApplied
from store.claims import sync_claims
from store.forget import Radius, pass_requests, radius
from store.forget_records import claim_keys_by_page, clear_derived_records
from store.page_titles import retitle_by_attestation


def receipt_run_id(pass_id: uuid.UUID) -> str:
    return f"forget:{pass_id}"


async def recorded_pass(conn: AsyncConnection, tenant: str, owner: str, pass_id: uuid.UUID) -> ForgetApplied | None:
    row = (await conn.execute(text("""
        SELECT metrics FROM wiki_compile_jobs WHERE run_id = :run AND tenant_id = :tenant AND owner_id = :owner
    """), {"run": receipt_run_id(pass_id), "tenant": tenant, "owner": owner})).first()
    return None if row is None else ForgetApplied.model_validate(row.metrics)


async def apply_pass(conn: AsyncConnection, tenant: str, owner: str, pass_id: uuid.UUID, workflow_id: str,
                     now: datetime, cost_usd: float = 0.0) -> ForgetApplied:
    """Apply the pass's requests: the writer's lines, the deletions, the receipt; once."""
    await conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"wiki-forget:{pass_id}"})
    if (done := await recorded_pass(conn, tenant, owner, pass_id)) is not None:
        return done
    requests = await pass_requests(conn, tenant, owner, pass_id)
    if not requests.request_ids:
        return ForgetApplied(pass_id=pass_id)
    drafts = (await conn.execute(text("""
        SELECT drafts FROM wiki_forget_requests WHERE tenant_id = :tenant AND owner_id = :owner AND pass_id = :pass
        ORDER BY requested_at, id LIMIT 1
    """), {"tenant": tenant, "owner": owner, "pass": pass_id})).scalar_one()
    r = await radius(conn, tenant, owner, requests.forgotten, requests.edited)
    result = ForgetApplied(pass_id=pass_id, cost_usd=cost_usd)
    removed_pages = r.removed_pages()
    forgotten, touched = sorted(r.forgotten), sorted(r.touched)
    scope = {"tenant": tenant, "owner": owner}
    keys_before = await claim_keys_by_page(conn, sorted(r.page_refs))

    await _demote(conn, r, scope, result)
    if removed_pages:
        await conn.execute(text("DELETE FROM wiki_pages WHERE id = ANY(CAST(:ids AS uuid[])) "
                                "AND tenant_id = :tenant AND owner_id = :owner"), {**scope, "ids": sorted(removed_pages)})
    rewritten: list[tuple[str, str]] = []
    emptied: list[tuple[str, str]] = []
    for section in r.sections:
        if section.page_id in removed_pages:
            continue
        body = drafts.get(section.section_id)
        if body is None:
            raise LookupError(f"forget pass {pass_id}: section {section.section_id} has no re-derived body")
        (rewritten if body.strip() else emptied).append((section.section_id, body))
        result.claims_removed += sum(1 for _, _, fate in section.lines if fate == "dropped")
        result.claims_rederived += sum(1 for _, _, fate in section.lines if fate == "redo")
    result.claims_removed += sum(len(s.lines) for s in r.sections if s.page_id in removed_pages)
    result.sections_rederived = sum(1 for s in r.sections if s.page_id not in removed_pages and not s.rollup
                                    and any(f == "redo" for _, _, f in s.lines))
    result.sections_removed = len(emptied) + sum(1 for s in r.sections if s.page_id in removed_pages)
    if emptied:
        await conn.execute(text("DELETE FROM wiki_page_sections WHERE id = ANY(CAST(:ids AS uuid[]))"),
                           {"ids": [s for s, _ in emptied]})
    if rewritten:
        await conn.execute(text("""
            UPDATE wiki_page_sections AS s SET body_md = w.body, updated_at = :now
            FROM unnest(CAST(:ids AS uuid[]), CAST(:bodies AS text[])) AS w(id, body) WHERE s.id = w.id
        """), {"now": now, "ids": [s for s, _ in rewritten], "bodies": [b for _, b in rewritten]})
    if forgotten:
        await conn.execute(text("""
            DELETE FROM wiki_section_sources ss USING wiki_page_sections s, wiki_pages p
            WHERE ss.section_id = s.id AND s.page_id = p.id AND p.tenant_id = :tenant AND p.owner_id = :owner
              AND ss.source_kind = 'memory_unit' AND ss.source_ref = ANY(CAST(:ids AS text[]))
        """), {**scope, "ids": forgotten})
        await conn.execute(text("""
            DELETE FROM wiki_claim_sources WHERE tenant_id = :tenant AND owner_id = :owner
              AND memory_id = ANY(CAST(:ids AS text[]))
        """), {**scope, "ids": forgotten})
        deleted = await conn.execute(text("""
            DELETE FROM memory_units WHERE tenant_id = :tenant AND owner_id = :owner AND id = ANY(CAST(:ids AS uuid[]))
        """), {**scope, "ids": forgotten})
        result.memories_forgotten = deleted.rowcount
    result.memories_edited = len(r.edited)
    await sync_claims(conn, tenant, owner, [s for s, _ in rewritten], {}, None, now)
    left_empty = {row.id for row in await conn.execute(text("""
        DELETE FROM wiki_pages p WHERE p.id = ANY(CAST(:ids AS uuid[])) AND p.tenant_id = :tenant
          AND p.owner_id = :owner AND NOT EXISTS (SELECT 1 FROM wiki_page_sections s WHERE s.page_id = p.id)
        RETURNING p.id::text AS id
    """), {**scope, "ids": sorted({s.page_id for s in r.sections} - removed_pages)})}
    result.pages_removed = len((removed_pages - {page for page, _ in r.demoted}) | left_empty)
    surviving = sorted({s.page_id for s in r.sections} - removed_pages - left_empty)
    aliases = [alias_id for alias_id, page, _ in r.alias_ids if page in surviving]
    if aliases:
        await conn.execute(text("DELETE FROM wiki_page_aliases WHERE id = ANY(CAST(:ids AS uuid[]))"), {"ids": aliases})
    result.aliases_removed = len(aliases)
    await _mentions(conn, r, scope, result)
    await _scrub_pages(conn, r, scope, surviving, now)
    records = await clear_derived_records(conn, r, scope, removed_pages | left_empty, surviving, keys_before, aliases)
    result.staged_rows_removed = await _staging(conn, scope, touched)
    result.touched_page_ids = [uuid.UUID(p) for p in sorted((set(surviving) | r.rollup_pages) - removed_pages - left_empty)]
    await conn.execute(text("""
        INSERT INTO wiki_compile_jobs (id, kind, tenant_id, owner_id, workflow_id, run_id, trigger, status, metrics,
                                       started_at, finished_at)
        SELECT :id, 'forget', :tenant, :owner, :workflow, :run, 'forget', 'succeeded', CAST(:metrics AS jsonb),
               min(requested_at), :now
        FROM wiki_forget_requests WHERE tenant_id = :tenant AND owner_id = :owner AND pass_id = :pass
    """), {**scope, "id": pass_id, "workflow": workflow_id, "run": receipt_run_id(pass_id), "pass": pass_id,
           "now": now, "metrics": json.dumps({**result.model_dump(mode="json"), "memory_ids": forgotten,
                                              "edited_memory_ids": sorted(r.edited),
                                              "records_cleared": dataclasses.asdict(records),
                                              "request_ids": requests.request_ids})})
    await conn.execute(text("""
        UPDATE wiki_forget_requests SET status = 'done', done_at = :now, tasks = '[]'::jsonb, drafts = '{}'::jsonb
        WHERE tenant_id = :tenant AND owner_id = :owner AND pass_id = :pass
    """), {**scope, "pass": pass_id, "now": now})
    return result


async def _demote(conn: AsyncConnection, r: Radius, scope: dict[str, str], result: ForgetApplied) -> None:
    """A promoted page whose evidence fell below the promotion rule goes back to an open mention
    holding the sightings it has left (merged into the alias's open row when there is one)."""
    for _, mention in r.demoted:
        kept, _ = remaining_sightings(mention.sample_contexts or [], r.forgotten)
        page_refs = {ref for s in r.sections if s.page_id == mention.promoted_page_id for _, refs, _ in s.lines
                     for ref in refs if ref not in r.forgotten}
        left = len(page_refs) or len(kept)
        opened = (await conn.execute(text("""
            SELECT id FROM wiki_unresolved_mentions WHERE tenant_id = :tenant AND owner_id = :owner
              AND alias_normalized = :alias AND status = 'open'
        """), {**scope, "alias": mention.alias_normalized})).first()
        if left == 0 or opened is not None:
            await conn.execute(text("DELETE FROM wiki_unresolved_mentions WHERE id = :id"), {"id": mention.id})
            if opened is not None and left:
                await conn.execute(text("UPDATE wiki_unresolved_mentions SET mention_count = mention_count + :n "
                                        "WHERE id = :id"), {"id": opened.id, "n": left})
        else:
            await conn.execute(text("""
                UPDATE wiki_unresolved_mentions SET status = 'open', promoted_page_id = NULL, mention_count = :n,
                    sample_contexts = CAST(:samples AS jsonb), updated_at = now() WHERE id = :id
            """), {"id": mention.id, "n": left, "samples": json.dumps(kept)})
        result.pages_demoted += 1


async def _mentions(conn: AsyncConnection, r: Radius, scope: dict[str, str], result: ForgetApplied) -> None:
    """Sightings of a forgotten memory go (a mention left without any goes too); an edited memory's
    sightings lose their quote of the old text and keep their count."""
    demoted = {mention.id for _, mention in r.demoted}
    rows = list(r.mentions)
    if r.edited:
        rows += (await conn.execute(text("""
            SELECT id::text AS id, alias, status, mention_count, sample_contexts FROM wiki_unresolved_mentions m
            WHERE tenant_id = :tenant AND owner_id = :owner AND EXISTS (SELECT 1 FROM jsonb_array_elements(m.sample_contexts) e
                  WHERE e->>'source_ref' = ANY(CAST(:ids AS text[])))
        """), {**scope, "ids": sorted(r.edited)})).all()
    seen: set[str] = set()
    for mention in rows:
        if mention.id in demoted or mention.id in seen:
            continue
        seen.add(mention.id)
        samples = mention.sample_contexts or []
        kept, lost_forgotten = remaining_sightings(samples, r.forgotten)
        kept, _ = remaining_sightings(kept, r.edited)
        left = mention.mention_count - lost_forgotten
        result.sightings_removed += lost_forgotten
        if left <= 0:
            await conn.execute(text("DELETE FROM wiki_unresolved_mentions WHERE id = :id"), {"id": mention.id})
            result.mentions_removed += 1
        else:
            await conn.execute(text("""
                UPDATE wiki_unresolved_mentions SET mention_count = :n, sample_contexts = CAST(:samples AS jsonb),
                    updated_at = now() WHERE id = :id
            """), {"id": mention.id, "n": left, "samples": json.dumps(kept)})


def _words(value: str | None) -> set[str]:
    return {w for w in normalize_alias(value or "").split() if len(w) >= 3}


def _only_forgotten(value: str | None, forgotten: list[Evidence], remaining: list[Evidence]) -> bool:
    """The text holds a word a forgotten (or edited-away) memory had and no remaining memory has."""
    gone = set().union(*(e.words for e in forgotten)) if forgotten else set()
    held = set().union(*(e.words for e in remaining)) if remaining else set()
    return bool((_words(value) & gone) - held)


async def _scrub_pages(conn: AsyncConnection, r: Radius, scope: dict[str, str], pages: list[str],
                       now: datetime) -> None:
    """The surviving pages the pass touched: titles from their remaining citations, a summary or link
    context holding a word only the forgotten memories had cleared, `body_md` re-rendered."""
    if not pages:
        return
    await retitle_by_attestation(conn, scope["tenant"], scope["owner"], pages)
    forgotten = [r.evidence[m] for m in sorted(r.forgotten) if m in r.evidence]
    rows = (await conn.execute(text("""
        SELECT p.id::text AS id, p.summary,
               coalesce((SELECT array_agg(DISTINCT src.source_ref) FROM wiki_page_sections s
                         JOIN wiki_section_sources src ON src.section_id = s.id WHERE s.page_id = p.id), '{}') AS refs
        FROM wiki_pages p WHERE p.id = ANY(CAST(:ids AS uuid[]))
    """), {"ids": pages})).all()
    for row in rows:
        remaining = [r.evidence[ref] for ref in row.refs if ref in r.evidence and ref not in r.forgotten]
        if forgotten and _only_forgotten(row.summary, forgotten, remaining):
            await conn.execute(text("UPDATE wiki_pages SET summary = NULL WHERE id = CAST(:id AS uuid)"), {"id": row.id})
        if forgotten:
            for link in await conn.execute(text("""
                SELECT id, context FROM wiki_page_links
                WHERE (from_page_id = CAST(:id AS uuid) OR to_page_id = CAST(:id AS uuid)) AND context IS NOT NULL
            """), {"id": row.id}):
                if _only_forgotten(link.context, forgotten, remaining):
                    await conn.execute(text("UPDATE wiki_page_links SET context = NULL WHERE id = :id"), {"id": link.id})
    sections: dict[str, list[Any]] = {page: [] for page in pages}
    for row in await conn.execute(text("""
        SELECT page_id::text AS page_id, heading, body_md, position FROM wiki_page_sections
        WHERE page_id = ANY(CAST(:ids AS uuid[])) ORDER BY page_id, position, section_slug
    """), {"ids": pages}):
        sections[row.page_id].append(row)
    await conn.execute(text("UPDATE wiki_pages SET body_md = :body, updated_at = :now WHERE id = CAST(:id AS uuid)"),
                       [{"id": page, "body": render_body_markdown(rows), "now": now} for page, rows in sections.items()])


async def _staging(conn: AsyncConnection, scope: dict[str, str], touched: list[str]) -> int:
    """Staged plans, section drafts, batch requests and rejected lines that hold a touched memory
    (by id, so by its text too): removed."""
    if not touched:
        return 0
    params = {**scope, "ids": touched}
    plans = await conn.execute(text("""
        DELETE FROM wiki_compile_plans p WHERE p.tenant_id = :tenant AND p.owner_id = :owner
          AND (p.memory_ids && CAST(:ids AS uuid[]) OR EXISTS (
               SELECT 1 FROM unnest(CAST(:ids AS text[])) AS i(id)
               WHERE strpos(p.plan::text, i.id) > 0 OR strpos(coalesce(p.resolved::text, ''), i.id) > 0))
    """), params)
    batches = await conn.execute(text("""
        DELETE FROM wiki_llm_batch_requests WHERE tenant_id = :tenant AND owner_id = :owner
          AND memory_ids && CAST(:ids AS uuid[])
    """), params)
    rejected = await conn.execute(text("""
        DELETE FROM wiki_rejected_claims WHERE tenant_id = :tenant AND owner_id = :owner AND cited && CAST(:ids AS text[])
    """), params)
    return plans.rowcount + batches.rowcount + rejected.rowcount
