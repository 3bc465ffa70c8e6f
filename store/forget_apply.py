"""Forgetting and editing memories, part two: applying a prepared pass in one transaction.

Everything the pass changes commits together with its receipt (the ledger row `forget:<pass id>`,
kind `forget`: the report of domain/forget_report.py without names, so ids, time and counts, no
text), so a retried or replayed apply finds the receipt and returns what it recorded: a pass
completes once, and a worker killed before the commit leaves nothing half-done. Sections not citing
a touched memory are never written. The commit also tells every process to drop the scope from its
caches (store/cache_events.py).
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.forget import remaining_sightings
from domain.forget_report import ForgetReport, RederiveOutcome
from domain.guards import strip_wikilinks
from domain.markup import safe_markdown
from domain.render import first_sentence, render_body_markdown
from messages.forget import ForgetApplied
from store.cache_events import notify_forgotten
from store.claims import sync_claims
from store.forget import pass_requests
from store.forget_records import claim_keys_by_page, clear_marks, clear_records, derived_records
from store.forget_report import ForgetPlan, plan_forget, report_of
from store.mention_sightings import drop_sightings, move_sightings
from store.page_titles import retitle_by_attestation

# The sections a page's summary is read from when it is recomputed (as a new page's is).
LEAD_SECTIONS = ("overview", "summary", "context")


def receipt_run_id(pass_id: uuid.UUID) -> str:
    return f"forget:{pass_id}"


def applied_of(pass_id: uuid.UUID, report: ForgetReport, memories_forgotten: int,
               touched_page_ids: list[uuid.UUID]) -> ForgetApplied:
    """The counts the workflow's history carries (the receipt holds the whole report)."""
    outcome = report.outcome or RederiveOutcome()
    return ForgetApplied(
        pass_id=pass_id, memories_forgotten=memories_forgotten, memories_edited=len(report.edited_memory_ids),
        claims_removed=report.claims_removed, claims_rederived=report.claims_rederived,
        sections_rederived=len(report.sections_rederived),
        sections_removed=len(report.sections_removed) + outcome.sections_emptied,
        pages_removed=len(report.pages_removed) + outcome.pages_emptied, pages_demoted=len(report.pages_demoted),
        aliases_removed=len(report.aliases_removed), sightings_removed=report.sightings_removed,
        mentions_removed=len(report.mentions_removed), staged_rows_removed=report.staged_rows_removed,
        cost_usd=report.cost_usd or 0.0, touched_page_ids=touched_page_ids,
        provider_batch_ids=[b.batch_id for b in report.provider_batches])


async def recorded_pass(conn: AsyncConnection, tenant: str, owner: str, pass_id: uuid.UUID) -> ForgetApplied | None:
    row = (await conn.execute(text("""
        SELECT metrics FROM wiki_compile_jobs WHERE run_id = :run AND tenant_id = :tenant AND owner_id = :owner
    """), {"run": receipt_run_id(pass_id), "tenant": tenant, "owner": owner})).first()
    if row is None:
        return None
    metrics = dict(row.metrics)
    try:
        report = ForgetReport.model_validate(metrics)
    except ValidationError:  # a receipt written before receipts held the report: counts only
        return ForgetApplied.model_validate({**metrics, "pass_id": pass_id})
    return applied_of(pass_id, report, int(metrics.get("memories_forgotten", 0)),
                      [uuid.UUID(p) for p in metrics.get("touched_page_ids", [])])


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
    plan = await plan_forget(conn, tenant, owner, requests.forgotten, requests.edited, delete_staged=True)
    r = plan.r
    report = report_of(plan, sorted(r.forgotten))
    outcome = RederiveOutcome()
    removed_pages = plan.removed_pages
    forgotten = sorted(r.forgotten)
    scope = {"tenant": tenant, "owner": owner}
    keys_before = await claim_keys_by_page(conn, sorted(r.page_refs))

    await _demote(conn, plan, scope)
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
        if any(fate == "redo" for _, _, fate in section.lines) and not section.rollup:
            outcome.lines_written += len([line for line in body.splitlines() if line.strip()]) \
                - sum(1 for _, _, fate in section.lines if fate == "kept")
    outcome.sections_emptied = len(emptied) - len(report.sections_removed)
    if emptied:
        await conn.execute(text("DELETE FROM wiki_page_sections WHERE id = ANY(CAST(:ids AS uuid[]))"),
                           {"ids": [s for s, _ in emptied]})
    if rewritten:
        await conn.execute(text("""
            UPDATE wiki_page_sections AS s SET body_md = w.body, updated_at = :now
            FROM unnest(CAST(:ids AS uuid[]), CAST(:bodies AS text[])) AS w(id, body) WHERE s.id = w.id
        """), {"now": now, "ids": [s for s, _ in rewritten], "bodies": [b for _, b in rewritten]})
    memories_forgotten = 0
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
        memories_forgotten = deleted.rowcount
    await sync_claims(conn, tenant, owner, [s for s, _ in rewritten], {}, None, now)
    left_empty = {row.id for row in await conn.execute(text("""
        DELETE FROM wiki_pages p WHERE p.id = ANY(CAST(:ids AS uuid[])) AND p.tenant_id = :tenant
          AND p.owner_id = :owner AND NOT EXISTS (SELECT 1 FROM wiki_page_sections s WHERE s.page_id = p.id)
        RETURNING p.id::text AS id
    """), {**scope, "ids": plan.surviving})}
    outcome.pages_emptied = len(left_empty)
    surviving = [p for p in plan.surviving if p not in left_empty]
    aliases = [alias_id for alias_id, page, _ in plan.aliases if page not in left_empty]
    if aliases:
        await conn.execute(text("DELETE FROM wiki_page_aliases WHERE id = ANY(CAST(:ids AS uuid[]))"), {"ids": aliases})
    await _mentions(conn, plan)
    await _links(conn, plan, left_empty)
    summaries = await _summaries(conn, plan, left_empty)
    await _rendered(conn, scope, surviving, now)
    await clear_records(conn, plan.records)
    if left_empty:  # records about the pages the writer emptied go too
        emptied_records = await derived_records(conn, r, scope, left_empty, [])
        await clear_records(conn, emptied_records)
        outcome.decisions_removed = len(emptied_records.decision_ids)
        outcome.merge_records_changed = len(emptied_records.merge_changes)
    outcome.marks_removed = await clear_marks(conn, r, scope, surviving, keys_before)
    touched_pages = sorted((set(surviving) | r.rollup_pages | set(summaries)) - removed_pages - left_empty)
    report.outcome, report.cost_usd = outcome, cost_usd
    receipt = report.receipt().model_dump(mode="json")
    await conn.execute(text("""
        INSERT INTO wiki_compile_jobs (id, kind, tenant_id, owner_id, workflow_id, run_id, trigger, status, metrics,
                                       started_at, finished_at)
        SELECT :id, 'forget', :tenant, :owner, :workflow, :run, 'forget', 'succeeded', CAST(:metrics AS jsonb),
               min(requested_at), :now
        FROM wiki_forget_requests WHERE tenant_id = :tenant AND owner_id = :owner AND pass_id = :pass
    """), {**scope, "id": pass_id, "workflow": workflow_id, "run": receipt_run_id(pass_id), "pass": pass_id,
           "now": now, "metrics": json.dumps({**receipt, "memories_forgotten": memories_forgotten,
                                              "memories_edited": len(r.edited), "touched_page_ids": touched_pages,
                                              "request_ids": requests.request_ids})})
    await conn.execute(text("""
        UPDATE wiki_forget_requests SET status = 'done', done_at = :now, tasks = '[]'::jsonb, drafts = '{}'::jsonb
        WHERE tenant_id = :tenant AND owner_id = :owner AND pass_id = :pass
    """), {**scope, "pass": pass_id, "now": now})
    await notify_forgotten(conn, tenant, owner)
    return applied_of(pass_id, report, memories_forgotten, [uuid.UUID(p) for p in touched_pages])


async def _demote(conn: AsyncConnection, plan: ForgetPlan, scope: dict[str, str]) -> None:
    """A promoted page whose evidence fell below the promotion rule goes back to an open mention
    holding the sightings it has left (merged into the alias's open row when there is one)."""
    r = plan.r
    for _, mention in r.demoted:
        kept, _ = remaining_sightings(mention.sample_contexts or [], r.forgotten)
        kept = [s for s in kept if not (isinstance(s, dict) and plan.gone.holds(str(s.get("quote") or "")))]
        page_refs = {ref for s in r.sections if s.page_id == mention.promoted_page_id for _, refs, _ in s.lines
                     for ref in refs if ref not in r.forgotten}
        left = len(page_refs) or len(kept)
        await drop_sightings(conn, [mention.id], sorted(r.forgotten))
        opened = (await conn.execute(text("""
            SELECT id FROM wiki_unresolved_mentions WHERE tenant_id = :tenant AND owner_id = :owner
              AND alias_normalized = :alias AND status = 'open'
        """), {**scope, "alias": mention.alias_normalized})).first()
        if left == 0 or opened is not None:
            if opened is not None and left:
                await move_sightings(conn, mention.id, opened.id)
                await conn.execute(text("UPDATE wiki_unresolved_mentions SET mention_count = mention_count + :n "
                                        "WHERE id = :id"), {"id": opened.id, "n": left})
            await conn.execute(text("DELETE FROM wiki_unresolved_mentions WHERE id = :id"), {"id": mention.id})
        else:
            await conn.execute(text("""
                UPDATE wiki_unresolved_mentions SET status = 'open', promoted_page_id = NULL, mention_count = :n,
                    sample_contexts = CAST(:samples AS jsonb), updated_at = now() WHERE id = :id
            """), {"id": mention.id, "n": left, "samples": json.dumps(kept)})


async def _mentions(conn: AsyncConnection, plan: ForgetPlan) -> None:
    """Each mention resting on a forgotten memory loses those sightings, counted whether or not its
    samples showed them (a mention left without any goes); a sample quoting a forgotten or edited
    memory, or holding a word only the forgotten memories had, goes (the count keeps an edit's)."""
    forgotten = sorted(plan.r.forgotten)
    for mention in plan.mentions:
        if mention.left <= 0:
            await conn.execute(text("DELETE FROM wiki_unresolved_mentions WHERE id = CAST(:id AS uuid)"),
                               {"id": mention.id})
            continue
        await drop_sightings(conn, [mention.id], forgotten)
        await conn.execute(text("""
            UPDATE wiki_unresolved_mentions SET mention_count = :n, sample_contexts = CAST(:samples AS jsonb),
                updated_at = now() WHERE id = CAST(:id AS uuid)
        """), {"id": mention.id, "n": mention.left, "samples": json.dumps(mention.kept_samples)})


async def _links(conn: AsyncConnection, plan: ForgetPlan, left_empty: set[str]) -> None:
    """Links resting on a forgotten memory, or whose context holds its text: moved, cleared or removed."""
    fates = [f for f in plan.links if f.from_page not in left_empty and f.to_page not in left_empty]
    gone = [f.id for f in fates if f.remove]
    if gone:
        await conn.execute(text("DELETE FROM wiki_page_links WHERE id = ANY(CAST(:ids AS uuid[]))"), {"ids": gone})
    for fate in fates:
        if not fate.remove:
            await conn.execute(text("""
                UPDATE wiki_page_links SET context = :context, source_refs = CAST(:refs AS text[])
                WHERE id = CAST(:id AS uuid)
            """), {"id": fate.id, "context": fate.context, "refs": fate.source_refs})


async def _summaries(conn: AsyncConnection, plan: ForgetPlan, left_empty: set[str]) -> list[str]:
    """Each summary holding forgotten text, recomputed as a new page's is (its lead section's first
    sentence), or cleared when that holds it too. The pages whose summary changed."""
    pages = [p.id for p in plan.summaries if p.id not in left_empty]
    if not pages:
        return []
    leads: dict[str, str] = {}
    for row in await conn.execute(text("""
        SELECT DISTINCT ON (page_id) page_id::text AS page_id, body_md FROM wiki_page_sections
        WHERE page_id = ANY(CAST(:ids AS uuid[])) AND section_slug = ANY(CAST(:leads AS text[])) AND body_md <> ''
        ORDER BY page_id, array_position(CAST(:leads AS text[]), section_slug)
    """), {"ids": pages, "leads": list(LEAD_SECTIONS)}):
        leads[row.page_id] = first_sentence(strip_wikilinks(row.body_md))
    updates: list[dict[str, Any]] = []
    for page in pages:
        summary = leads.get(page) or None
        if summary is not None and plan.gone.holds(summary):
            summary = None
        updates.append({"id": page, "summary": safe_markdown(summary) if summary else None})
    await conn.execute(text("UPDATE wiki_pages SET summary = :summary WHERE id = CAST(:id AS uuid)"), updates)
    return pages


async def _rendered(conn: AsyncConnection, scope: dict[str, str], pages: list[str], now: datetime) -> None:
    """The surviving pages the pass touched: titles from their remaining citations, `body_md` rendered."""
    if not pages:
        return
    await retitle_by_attestation(conn, scope["tenant"], scope["owner"], pages)
    sections: dict[str, list[Any]] = {page: [] for page in pages}
    for row in await conn.execute(text("""
        SELECT page_id::text AS page_id, heading, body_md, position FROM wiki_page_sections
        WHERE page_id = ANY(CAST(:ids AS uuid[])) ORDER BY page_id, position, section_slug
    """), {"ids": pages}):
        sections[row.page_id].append(row)
    await conn.execute(text("UPDATE wiki_pages SET body_md = :body, updated_at = :now WHERE id = CAST(:id AS uuid)"),
                       [{"id": page, "body": render_body_markdown(rows), "now": now} for page, rows in sections.items()])
