"""Forgetting and editing memories, part one: the request queue, the blast radius and the pass's tasks.

A request (`wiki_forget_requests`) names memory ids of one scope, never text. The scope's compile
serves every pending request in one pass between batches: `prepare_pass` claims them, works out the
blast radius (`blast_radius`: the claims, sections, pages, aliases, sightings and rollups resting on
the memories) and stores, per section, either its new body at once (lines dropped, nothing to
re-derive) or a writer task for the lines that cite a touched memory and others. The writer's lines
are stored with the request (`store_rederived`), and store/forget_apply.py applies the pass in one
transaction. A preview (`wiki memory forget --dry-run`) is the same blast radius, read-only, with
the scope-wide part (store/forget_scan.py), reported by store/forget_report.py.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.claim_text import body_lines
from domain.evidence import Evidence
from domain.forget import (
    LineFate,
    RederiveLine,
    RederiveMemory,
    RederiveTask,
    alias_goes,
    line_fate,
    splice,
)
from domain.guards import is_valid_uuid
from domain.promotion import PROMOTION_MIN_SIGHTINGS
from store.claims import memory_evidence

MAX_FORGET_IDS = 1000  # one request; a larger forget is several requests, still served in one pass


def memory_key(value: Any) -> str | None:
    """A memory id as every table stores it (lowercase uuid text), or None for what is no id."""
    raw = str(value).strip()
    return str(uuid.UUID(raw)) if is_valid_uuid(raw) else None


async def existing_memories(conn: AsyncConnection, tenant: str, owner: str, keys: Sequence[str]) -> list[str]:
    """The ids among `keys` that are memories of this scope (another scope's id is simply absent)."""
    if not keys:
        return []
    rows = await conn.execute(text("""
        SELECT id::text AS id FROM memory_units
        WHERE tenant_id = :tenant AND owner_id = :owner AND id = ANY(CAST(:ids AS uuid[]))
    """), {"tenant": tenant, "owner": owner, "ids": list(keys)})
    found = {row.id for row in rows}
    return [k for k in keys if k in found]


async def enqueue(conn: AsyncConnection, tenant: str, owner: str, kind: str, keys: Sequence[str]) -> uuid.UUID:
    """Queue a forget or an edit of the scope's memories `keys` for the compile to serve."""
    request_id = uuid.uuid4()
    await conn.execute(text("""
        INSERT INTO wiki_forget_requests (id, tenant_id, owner_id, kind, memory_ids)
        VALUES (:id, :tenant, :owner, :kind, CAST(:ids AS uuid[]))
    """), {"id": request_id, "tenant": tenant, "owner": owner, "kind": kind, "ids": list(keys)})
    return request_id


async def cited_memories(conn: AsyncConnection, tenant: str, owner: str, keys: Sequence[str]) -> list[str]:
    """The ids among `keys` that some claim or section of the scope cites (what an edit must re-derive)."""
    if not keys:
        return []
    rows = await conn.execute(text("""
        SELECT DISTINCT memory_id FROM wiki_claim_sources
        WHERE tenant_id = :tenant AND owner_id = :owner AND memory_id = ANY(CAST(:ids AS text[]))
    """), {"tenant": tenant, "owner": owner, "ids": list(keys)})
    return sorted(row.memory_id for row in rows)


# ------------------------------------------------------------------------------------ the blast radius


@dataclass
class SectionRadius:
    section_id: str
    page_id: str
    page: str  # type/slug
    page_title: str
    page_type: str
    slug: str
    heading: str
    rollup: bool  # a section the aggregation pass writes (its lines list pages)
    lines: list[tuple[str, list[str], LineFate]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(fate != "kept" for _, _, fate in self.lines)

    @property
    def left(self) -> int:
        """Lines surely left after the pass (re-derived lines may still vanish)."""
        return sum(1 for _, _, fate in self.lines if fate != "dropped")


@dataclass
class Radius:
    """The blast radius with what applying it needs (ids, evidence)."""

    forgotten: set[str]
    edited: set[str]
    sections: list[SectionRadius]
    page_sections: dict[str, int]  # page id -> how many sections it has
    page_refs: dict[str, tuple[str, str]]  # page id -> (type/slug, title)
    alias_ids: list[tuple[str, str, str]]  # (alias id, page id, alias) to remove
    demoted: list[tuple[str, Any]]  # (page id, promoted mention row)
    rollup_pages: set[str]  # pages whose rollups or hub lists list a removed page (or cite a memory)
    evidence: dict[str, Evidence]
    page_remaining: dict[str, list[str]] = field(default_factory=dict)  # page id -> memories it still cites

    @property
    def touched(self) -> set[str]:
        return self.forgotten | self.edited

    def removed_sections(self) -> list[SectionRadius]:
        return [s for s in self.sections if s.left == 0]

    def removed_pages(self) -> set[str]:
        gone: dict[str, int] = {}
        for section in self.removed_sections():
            gone[section.page_id] = gone.get(section.page_id, 0) + 1
        removed = {page for page, count in gone.items() if count >= self.page_sections.get(page, 0)}
        return removed | {page for page, _ in self.demoted}


async def radius(conn: AsyncConnection, tenant: str, owner: str, forgotten: set[str], edited: set[str]) -> Radius:
    touched = sorted(forgotten | edited)
    params = {"tenant": tenant, "owner": owner, "ids": touched}
    section_rows = (await conn.execute(text("""
        SELECT s.id::text AS id, s.page_id::text AS page_id, s.section_slug, s.heading, s.body_md,
               s.aggregation IS NOT NULL AS rollup, p.type, p.slug, p.title,
               coalesce((SELECT array_agg(src.source_ref ORDER BY src.source_ref) FROM wiki_section_sources src
                         WHERE src.section_id = s.id AND src.source_kind = 'memory_unit'), '{}') AS refs
        FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND (
            EXISTS (SELECT 1 FROM wiki_section_sources ss WHERE ss.section_id = s.id
                    AND ss.source_kind = 'memory_unit' AND ss.source_ref = ANY(CAST(:ids AS text[])))
            OR EXISTS (SELECT 1 FROM wiki_section_claims c JOIN wiki_claim_sources cs ON cs.claim_id = c.id
                       WHERE c.section_id = s.id AND cs.tenant_id = :tenant AND cs.owner_id = :owner
                         AND cs.memory_id = ANY(CAST(:ids AS text[]))))
        ORDER BY p.type, p.slug, s.position, s.section_slug
    """), params)).all()
    section_ids = [row.id for row in section_rows]
    claims: dict[str, list[tuple[str, list[str]]]] = {}
    for row in await conn.execute(text("""
        SELECT c.section_id::text AS section_id, c.text,
               coalesce(array_agg(cs.memory_id ORDER BY cs.memory_id) FILTER (WHERE cs.memory_id IS NOT NULL),
                        '{}') AS refs
        FROM wiki_section_claims c LEFT JOIN wiki_claim_sources cs ON cs.claim_id = c.id
        WHERE c.section_id = ANY(CAST(:sections AS uuid[]))
        GROUP BY c.id ORDER BY c.section_id, c.position
    """), {"sections": section_ids}):
        claims.setdefault(row.section_id, []).append((row.text, list(row.refs)))
    sections: list[SectionRadius] = []
    for row in section_rows:
        # A section with no claim rows yet cites all its memories with every line.
        lines = claims.get(row.id) or [(line, list(row.refs)) for line in body_lines(row.body_md)]
        sections.append(SectionRadius(
            section_id=row.id, page_id=row.page_id, page=f"{row.type}/{row.slug}", page_title=row.title,
            page_type=row.type, slug=row.section_slug, heading=row.heading, rollup=row.rollup,
            lines=[(line, refs, line_fate(refs, forgotten, edited)) for line, refs in lines]))
    page_ids = sorted({s.page_id for s in sections})
    pages = (await conn.execute(text("""
        SELECT p.id::text AS id, p.type || '/' || p.slug AS ref, p.title, p.parent_page_id::text AS parent,
               (SELECT count(*) FROM wiki_page_sections s WHERE s.page_id = p.id) AS sections,
               coalesce((SELECT array_agg(DISTINCT src.source_ref) FROM wiki_page_sections s
                         JOIN wiki_section_sources src ON src.section_id = s.id AND src.source_kind = 'memory_unit'
                         WHERE s.page_id = p.id), '{}') AS refs
        FROM wiki_pages p WHERE p.id = ANY(CAST(:pages AS uuid[]))
    """), {"pages": page_ids})).all()
    remaining_refs = {p.id: sorted(set(p.refs) - forgotten) for p in pages}
    evidence = await memory_evidence(conn, tenant, owner,
                                     [*touched, *(r for refs in remaining_refs.values() for r in refs)])
    forgotten_evidence = [evidence[m] for m in sorted(forgotten) if m in evidence]
    aliases: list[tuple[str, str, str]] = []
    if forgotten_evidence and page_ids:
        titles = {p.id: p.title for p in pages}
        for row in await conn.execute(text("""
            SELECT id::text AS id, page_id::text AS page_id, alias FROM wiki_page_aliases
            WHERE page_id = ANY(CAST(:pages AS uuid[])) AND source = 'compiler' ORDER BY page_id, alias
        """), {"pages": page_ids}):
            remaining = [evidence[r] for r in remaining_refs.get(row.page_id, []) if r in evidence]
            if alias_goes(row.alias, titles[row.page_id], forgotten_evidence, remaining):
                aliases.append((row.id, row.page_id, row.alias))
    demoted = []
    if forgotten and page_ids:
        for row in await conn.execute(text("""
            SELECT id::text AS id, alias, alias_normalized, status, mention_count, sample_contexts,
                   promoted_page_id::text AS promoted_page_id
            FROM wiki_unresolved_mentions WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'promoted'
              AND promoted_page_id = ANY(CAST(:pages AS uuid[]))
        """), {**params, "pages": page_ids}):
            # A page promoted from a mention goes back to one when its evidence falls below the rule.
            if len(remaining_refs.get(row.promoted_page_id, [])) < PROMOTION_MIN_SIGHTINGS:
                demoted.append((row.promoted_page_id, row))
    result = Radius(forgotten=forgotten, edited=edited, sections=sections,
                    page_sections={p.id: p.sections for p in pages},
                    page_refs={p.id: (p.ref, p.title) for p in pages}, alias_ids=aliases,
                    demoted=demoted, rollup_pages=set(), evidence=evidence, page_remaining=remaining_refs)
    removed = result.removed_pages()
    parents = {p.parent for p in pages if p.id in removed and p.parent}
    listing = set()
    if removed:
        listing = {row.page_id for row in await conn.execute(text("""
            SELECT DISTINCT s.page_id::text AS page_id FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND s.aggregation IS NOT NULL
              AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(coalesce(s.aggregation->'linked_page_ids', '[]'))
                          AS linked(id) WHERE linked.id = ANY(CAST(:removed AS text[])))
        """), {**params, "removed": sorted(removed)})}
    result.rollup_pages = ({s.page_id for s in sections if s.rollup} | parents | listing) - removed
    return result


# ------------------------------------------------------------------------------------------ the pass


@dataclass
class PassRequests:
    request_ids: list[str]
    forgotten: set[str]
    edited: set[str]


async def pass_requests(conn: AsyncConnection, tenant: str, owner: str, pass_id: uuid.UUID) -> PassRequests:
    rows = (await conn.execute(text("""
        SELECT id::text AS id, kind, memory_ids FROM wiki_forget_requests
        WHERE tenant_id = :tenant AND owner_id = :owner AND pass_id = :pass ORDER BY requested_at, id
    """), {"tenant": tenant, "owner": owner, "pass": pass_id})).all()
    forgotten = {str(m) for row in rows if row.kind == "forget" for m in row.memory_ids}
    edited = {str(m) for row in rows if row.kind == "edit" for m in row.memory_ids} - forgotten
    return PassRequests([row.id for row in rows], forgotten, edited)


async def prepare_pass(conn: AsyncConnection, tenant: str, owner: str, pass_id: uuid.UUID) -> tuple[PassRequests, list[str]]:
    """Claim the scope's pending requests for this pass (a retry finds them claimed already), and
    store each affected section's new body or writer task. Returns the requests and the sections
    that go to the writer."""
    claimed = (await conn.execute(text("""
        SELECT id FROM wiki_forget_requests
        WHERE tenant_id = :tenant AND owner_id = :owner AND pass_id = :pass LIMIT 1
    """), {"tenant": tenant, "owner": owner, "pass": pass_id})).first()
    if claimed is None:
        # A request prepared by a pass that never applied (its run failed or was terminated) is taken
        # over: the compile is the scope's lock, so no other pass of the scope is running.
        await conn.execute(text("""
            UPDATE wiki_forget_requests SET pass_id = :pass, status = 'prepared'
            WHERE tenant_id = :tenant AND owner_id = :owner AND status IN ('pending', 'prepared')
        """), {"tenant": tenant, "owner": owner, "pass": pass_id})
    else:
        row = (await conn.execute(text("""
            SELECT tasks FROM wiki_forget_requests WHERE tenant_id = :tenant AND owner_id = :owner
              AND pass_id = :pass ORDER BY requested_at, id LIMIT 1
        """), {"tenant": tenant, "owner": owner, "pass": pass_id})).first()
        requests = await pass_requests(conn, tenant, owner, pass_id)
        return requests, [t["section_id"] for t in (row.tasks if row else []) if t.get("writer")]
    requests = await pass_requests(conn, tenant, owner, pass_id)
    if not requests.request_ids:
        return requests, []
    # Edits of memories no longer stored, or forgets of them, simply touch nothing.
    r = await radius(conn, tenant, owner, requests.forgotten, requests.edited)
    tasks: list[dict[str, Any]] = []
    drafts: dict[str, str] = {}
    removed_pages = r.removed_pages()
    for section in r.sections:
        if section.page_id in removed_pages:
            drafts[section.section_id] = ""
            continue
        task = rederive_task(section, r)
        writer = any(line.redo for line in task.lines) and not section.rollup
        tasks.append({"section_id": section.section_id, "writer": writer, "task": task.model_dump()})
        if not writer:
            # Rollup lines naming a page the pass removes go; the aggregation pass re-derives the rest.
            gone = [r.page_refs[p][1] for p in removed_pages if p in r.page_refs]
            keep = {i: [line.text] for i, line in enumerate(task.lines)
                    if line.redo and section.rollup and not any(title and title in line.text for title in gone)}
            drafts[section.section_id] = splice(task, keep)
    await conn.execute(text("""
        UPDATE wiki_forget_requests SET tasks = CAST(:tasks AS jsonb), drafts = CAST(:drafts AS jsonb)
        WHERE tenant_id = :tenant AND owner_id = :owner AND pass_id = :pass
    """), {"tenant": tenant, "owner": owner, "pass": pass_id, "tasks": json.dumps(tasks),
           "drafts": json.dumps(drafts)})
    return requests, [t["section_id"] for t in tasks if t["writer"]]


def rederive_task(section: SectionRadius, r: Radius) -> RederiveTask:
    """The section as its writer sees it: each line, and for a line to re-derive the memories it still
    rests on (the edited ones with their new text; never a forgotten one)."""
    lines: list[RederiveLine] = []
    wanted: list[str] = []
    for text_, refs, fate in section.lines:
        if fate == "dropped":
            continue
        remaining = [ref for ref in refs if ref not in r.forgotten]
        lines.append(RederiveLine(text=text_, redo=fate == "redo", memory_ids=remaining if fate == "redo" else []))
        if fate == "redo":
            wanted += [ref for ref in remaining if ref not in wanted]
    return RederiveTask(section_id=section.section_id, page_title=section.page_title, page_type=section.page_type,
                        slug=section.slug, heading=section.heading, lines=lines,
                        memories=[RederiveMemory(id=m, content="") for m in wanted])


async def writer_task(conn: AsyncConnection, tenant: str, owner: str, pass_id: uuid.UUID, section_id: str) -> RederiveTask:
    """A stored writer task with its memories' current text read from the store."""
    row = (await conn.execute(text("""
        SELECT t.task FROM wiki_forget_requests r, jsonb_array_elements(r.tasks) AS t(task)
        WHERE r.tenant_id = :tenant AND r.owner_id = :owner AND r.pass_id = :pass AND t.task->>'section_id' = :section
        LIMIT 1
    """), {"tenant": tenant, "owner": owner, "pass": pass_id, "section": section_id})).first()
    if row is None:
        raise LookupError(f"no forget task for section {section_id} in pass {pass_id}")
    task = RederiveTask.model_validate(row.task["task"])
    memories = await memory_texts(conn, tenant, owner, [m.id for m in task.memories])
    task.memories = [RederiveMemory(id=m.id, content=memories[m.id][0], day=memories[m.id][1])
                     for m in task.memories if m.id in memories]
    return task


async def memory_texts(conn: AsyncConnection, tenant: str, owner: str, keys: list[str]) -> dict[str, tuple[str, str]]:
    """The scope's memories among `keys`: id -> (text, the day it happened)."""
    rows = await conn.execute(text("""
        SELECT id::text AS id, content, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM memory_units
        WHERE tenant_id = :tenant AND owner_id = :owner AND id = ANY(CAST(:ids AS uuid[]))
    """), {"tenant": tenant, "owner": owner, "ids": keys})
    return {row.id: (row.content, row.day) for row in rows}


async def store_rederived(conn: AsyncConnection, tenant: str, owner: str, pass_id: uuid.UUID, section_id: str,
                          body: str) -> None:
    await conn.execute(text("""
        UPDATE wiki_forget_requests SET drafts = drafts || jsonb_build_object(CAST(:section AS text), CAST(:body AS text))
        WHERE tenant_id = :tenant AND owner_id = :owner AND pass_id = :pass
    """), {"tenant": tenant, "owner": owner, "pass": pass_id, "section": section_id, "body": body})


async def receipt_of_request(conn: AsyncConnection, tenant: str, owner: str, request_id: str) -> dict[str, Any] | None:
    """The receipt of the pass that served the request (its ledger row's metrics), once it has been served."""
    row = (await conn.execute(text("""
        SELECT j.metrics FROM wiki_forget_requests r
        JOIN wiki_compile_jobs j ON j.run_id = 'forget:' || r.pass_id::text AND j.tenant_id = r.tenant_id
                                AND j.owner_id = r.owner_id
        WHERE r.id = CAST(:request AS uuid) AND r.tenant_id = :tenant AND r.owner_id = :owner AND r.status = 'done'
    """), {"request": request_id, "tenant": tenant, "owner": owner})).first()
    return None if row is None else dict(row.metrics)
