"""One account of a forget for its preview and its receipt (domain/forget_report.py).

`plan_forget` works out, read-only, everything forgetting (or editing) memories touches: the blast
radius of the citations (store/forget.py), the scope-wide part (store/forget_scan.py), the records
other features derived (store/forget_records.py). `report_of` turns that into the report. The dry run
shows it with names; the pass (store/forget_apply.py) applies the same plan and stores the same report
without names as its receipt, then adds what only the writer and the provider decide.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.aliases import normalize_alias
from domain.forget import GoneWords
from domain.forget_report import ForgetReport, ProviderBatch, Ref
from store.forget import Radius, existing_memories, radius
from store.forget_records import DerivedRecords, derived_records
from store.forget_scan import (
    LinkFate,
    PageText,
    Staged,
    aliases_holding,
    gone_words,
    link_fates,
    staged_rows,
    summaries_holding,
)
from store.mention_sightings import MentionFate, mention_fates


@dataclass
class ForgetPlan:
    r: Radius
    gone: GoneWords
    removed_pages: set[str]
    summaries: list[PageText]  # surviving pages whose summary is recomputed
    aliases: list[tuple[str, str, str]]  # (alias id, page id, alias) removed from surviving pages
    links: list[LinkFate]  # links of surviving pages removed or given a new context
    mentions: list[MentionFate]  # mention rows recounted or removed (not the demoted ones)
    records: DerivedRecords
    staged: Staged = field(default_factory=Staged)

    @property
    def surviving(self) -> list[str]:
        return sorted({s.page_id for s in self.r.sections} - self.removed_pages)


def _only_forgotten_words(value: str | None, r: Radius, page_id: str) -> bool:
    """The text holds a word a forgotten memory had and none of the page's remaining memories has."""
    forgotten = [r.evidence[m] for m in sorted(r.forgotten) if m in r.evidence]
    remaining = [r.evidence[m] for m in r.page_remaining.get(page_id, []) if m in r.evidence]
    gone = set().union(*(e.words for e in forgotten)) if forgotten else set()
    held = set().union(*(e.words for e in remaining)) if remaining else set()
    words = {w for w in normalize_alias(value or "").split() if len(w) >= 3}
    return bool((words & gone) - held)


async def plan_forget(conn: AsyncConnection, tenant: str, owner: str, forgotten: set[str], edited: set[str],
                      *, delete_staged: bool = False) -> ForgetPlan:
    """Everything the forget touches. With `delete_staged` (the pass only) the staged rows holding the
    memories are deleted as they are counted (the last read of the plan, so no later step sees them)."""
    r = await radius(conn, tenant, owner, forgotten, edited)
    gone = await gone_words(conn, tenant, owner, forgotten)
    removed = r.removed_pages()
    surviving = {s.page_id for s in r.sections} - removed
    summaries = [p for p in await summaries_holding(conn, tenant, owner, gone) if p.id not in removed]
    if forgotten and surviving:
        for row in await conn.execute(text("""
            SELECT id::text AS id, type || '/' || slug AS ref, title, summary FROM wiki_pages
            WHERE id = ANY(CAST(:ids AS uuid[])) AND summary IS NOT NULL ORDER BY type, slug
        """), {"ids": sorted(surviving)}):
            if row.id not in {p.id for p in summaries} and _only_forgotten_words(row.summary, r, row.id):
                summaries.append(PageText(row.id, row.ref, row.title, row.summary))
    aliases = [a for a in r.alias_ids if a[1] not in removed]
    aliases += [a for a in await aliases_holding(conn, tenant, owner, gone)
                if a[1] not in removed and a[0] not in {x[0] for x in aliases}]
    links = [f for f in await link_fates(conn, tenant, owner, forgotten, gone)
             if f.from_page not in removed and f.to_page not in removed]
    demoted = {mention.id for _, mention in r.demoted}
    mentions = [m for m in await mention_fates(conn, tenant, owner, sorted(forgotten), sorted(edited), r.evidence, gone)
                if m.id not in demoted]
    records = await derived_records(conn, r, {"tenant": tenant, "owner": owner}, removed, [a[0] for a in aliases])
    staged = await staged_rows(conn, tenant, owner, r.touched, gone, delete=delete_staged)
    return ForgetPlan(r=r, gone=gone, removed_pages=removed, summaries=summaries, aliases=aliases, links=links,
                      mentions=mentions, records=records, staged=staged)


def report_of(plan: ForgetPlan, memory_ids: Sequence[str]) -> ForgetReport:
    """The report of a plan, with names (a receipt strips them: `ForgetReport.receipt`)."""
    r = plan.r
    removed = plan.removed_pages

    def page(page_id: str) -> Ref:
        ref, title = r.page_refs.get(page_id, (page_id, ""))
        return Ref(id=page_id, name=f"{ref} ({title})" if title else ref)

    sections_removed = [s for s in r.removed_sections() if s.page_id not in removed]
    rederived = [s for s in r.sections if any(f == "redo" for _, _, f in s.lines) and s.page_id not in removed
                 and not s.rollup]  # a rollup is re-derived by the aggregation pass (rollups_affected)
    rollup_sections = [s for s in r.sections if s.rollup and s.page_id not in removed]
    hub_pages = [p for p in sorted(r.rollup_pages) if p not in {s.page_id for s in rollup_sections}]
    claims_removed = sum(1 for s in r.sections if s.page_id not in removed for _, _, f in s.lines if f == "dropped")
    claims_removed += sum(len(s.lines) for s in r.sections if s.page_id in removed)
    return ForgetReport(
        memory_ids=list(memory_ids), edited_memory_ids=sorted(r.edited),
        claims_removed=claims_removed,
        claims_rederived=sum(1 for s in r.sections if s.page_id not in removed for _, _, f in s.lines if f == "redo"),
        sections_rederived=[Ref(id=s.section_id, name=f"{s.page} · {s.heading}") for s in rederived],
        sections_removed=[Ref(id=s.section_id, name=f"{s.page} · {s.heading}") for s in sections_removed],
        pages_removed=[page(p) for p in sorted(removed - {p for p, _ in r.demoted})],
        pages_demoted=[page(p) for p, _ in r.demoted],
        aliases_removed=[Ref(id=alias_id, name=f"{r.page_refs.get(page_id, (page_id, ''))[0]}: {alias}")
                         for alias_id, page_id, alias in plan.aliases],
        sightings_removed=sum(m.lost for m in plan.mentions),
        mentions_removed=[Ref(id=m.id, name=m.alias) for m in plan.mentions if m.left == 0],
        mentions_recounted=[Ref(id=m.id, name=m.alias) for m in plan.mentions if m.left > 0],
        summaries_recomputed=[Ref(id=p.id, name=f"{p.ref} ({p.title})") for p in plan.summaries],
        links_removed=sum(1 for f in plan.links if f.remove),
        link_contexts_recomputed=sum(1 for f in plan.links if not f.remove),
        rollups_affected=[Ref(id=s.section_id, name=f"{s.page} · {s.heading}") for s in rollup_sections]
        + [Ref(id=p, name=f"{r.page_refs.get(p, (p, ''))[0]} · (hub lists)") for p in hub_pages],
        decisions_removed=len(plan.records.decision_ids),
        merge_records_changed=len(plan.records.merge_changes),
        staged_rows_removed=plan.staged.rows,
        batch_requests_discarded=plan.staged.batch_requests,
        provider_batches=[ProviderBatch(batch_id=b.batch_id, provider=b.provider) for b in plan.staged.provider_batches],
        provider_erasure="to do" if plan.staged.provider_batches else "none",
    )


async def blast_radius(conn: AsyncConnection, tenant: str, owner: str, asked: Sequence[str]) -> ForgetReport:
    """What forgetting the memories `asked` (ids of this scope; others are reported not found) touches."""
    found = await existing_memories(conn, tenant, owner, list(dict.fromkeys(asked)))
    plan = await plan_forget(conn, tenant, owner, set(found), set())
    report = report_of(plan, found)
    report.not_found = [k for k in asked if k not in set(found)]
    return report


async def record_erasure(conn: AsyncConnection, tenant: str, owner: str, pass_id: uuid.UUID,
                         statuses: Sequence[tuple[str, str]]) -> None:
    """The provider step's outcome on the pass's receipt: each batch's status, and the step done."""
    row = (await conn.execute(text("""
        SELECT metrics FROM wiki_compile_jobs WHERE run_id = :run AND tenant_id = :tenant AND owner_id = :owner
        FOR UPDATE
    """), {"run": f"forget:{pass_id}", "tenant": tenant, "owner": owner})).first()
    if row is None:
        return
    metrics = dict(row.metrics)
    status = dict(statuses)
    metrics["provider_batches"] = [{**b, "status": status.get(b["batch_id"], b.get("status"))}
                                   for b in metrics.get("provider_batches", [])]
    done = all(b["status"] in ("deleted", "gone") for b in metrics["provider_batches"])
    metrics["provider_erasure"] = "done" if done else "pending"
    await conn.execute(text("""
        UPDATE wiki_compile_jobs SET metrics = CAST(:metrics AS jsonb) WHERE run_id = :run
          AND tenant_id = :tenant AND owner_id = :owner
    """), {"run": f"forget:{pass_id}", "tenant": tenant, "owner": owner, "metrics": json.dumps(metrics)})
