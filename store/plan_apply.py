"""Apply a resolved plan: every write of the batch, in the caller's transaction.

Order: pages and their sections (bodies linkified, wikilinks stripped, provenance only from
citations), aliases, unresolved mentions, promotions, then the links (the planner's, the
deterministic parent and co-mention ones: store/plan_links.py), the title of every touched page from its citations
(store/page_titles.py), and finally `body_md` re-rendered from the section rows of every touched
page. Every statement is an upsert keyed by natural keys with deterministic ids, so applying the
same plan again changes nothing — but the caller's cursor compare-and-set makes sure it never does.

Each kind of write is one multi-row statement over `unnest` arrays, so a batch costs about twenty
round trips whatever its size. The rows and counters are those of applying the plan one item at a
time in plan order: what an earlier item changes for a later one (the next free section
position, a mention seen twice, an alias promoted twice, a link proposed twice) is worked out in
Python from one read, before the write.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain import ids
from domain.aliases import normalize_alias
from domain.guards import PageRef, linkify_known_entities, strip_wikilinks, without_repeated_lines
from domain.markup import safe_markdown, safe_title
from domain.plan import PageType
from domain.render import render_body_markdown
from domain.resolved_plan import (
    DirectSection,
    MentionPromotion,
    MentionSighting,
    ProposedClaim,
    ResolvedPage,
    ResolvedPlan,
    WriterSection,
)
from messages.compile import ApplyBatchResult
from store.claims import sync_claims
from store.corrections import in_force, reapply_corrections
from store.mention_pool import PoolRow, open_pool
from store.mention_sightings import record_sightings
from store.page_titles import retitle_by_attestation
from store.plan_links import write_plan_links

MAX_SAMPLE_CONTEXTS = 5
_BOLD = re.compile(r"\*\*(.+?)\*\*")
# The page kinds a bolded alias may link to, the first that has a page by that alias winning.
_LINKED_KINDS: tuple[PageType, ...] = ("entity", "topic", "decision")


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
    proposed: dict[str, ProposedClaim] = field(default_factory=dict)  # the plan's lines, for their citations
    run_id: str | None = None

    def touch(self, page_id: str, refs: list[str]) -> None:
        cited = self.touched.setdefault(page_id, [])
        cited.extend(r for r in refs if r not in cited)


async def apply_resolved_plan(conn: AsyncConnection, tenant: str, owner: str, plan: ResolvedPlan,
                              drafts: dict[str, str], *, deterministic_linking: bool,
                              run_id: str | None = None,
                              written_claims: dict[str, ProposedClaim] | None = None) -> ApplyBatchResult:
    """`written_claims`: the section writers' own lines the claim judge passed (by claim key), added to
    the plan's lines for attribution."""
    now = (await conn.execute(text("SELECT now()"))).scalar_one()
    proposed = {**(written_claims or {}), **plan.line_claims}
    state = _Apply(conn=conn, tenant=tenant, owner=owner, now=now, proposed=proposed, run_id=run_id)
    await _write_pages(state, plan, drafts)
    await _upsert_mentions(state, plan.mentions, {p.mention_id for p in plan.promotions})
    await _mark_promoted(state, plan.promotions)
    # The operator's corrections (store/corrections.py): a rollback of the deterministic links holds.
    corrections = await in_force(conn, tenant, owner)
    deterministic_linking = deterministic_linking and not corrections.deterministic_links_off
    links = await write_plan_links(conn, tenant, owner, plan, touched=state.touched,
                                   page_ids_by_key=state.page_ids_by_key, deterministic_linking=deterministic_linking)
    state.result.links_upserted = links.planner
    state.result.links_written_deterministic = links.deterministic
    state.result.links_written_co_mention = links.co_mention
    state.result.dropped_invalid_ids += links.dropped_invalid_ids
    await retitle_by_attestation(conn, tenant, owner, list(state.touched))
    await _render_bodies(state)
    await reapply_corrections(conn, tenant, owner, corrections)
    state.result.touched_page_ids = [UUID(p) for p in state.touched]
    return state.result


# ---------------------------------------------------------------------------------------------- pages


async def _write_pages(state: _Apply, plan: ResolvedPlan, drafts: dict[str, str]) -> None:
    """The pages, then their sections with their provenance, then their aliases."""
    writes = _section_writes(plan, drafts)
    refs = await _linkable_pages(state, plan, writes)
    pages: list[tuple[ResolvedPage, list[_SectionWrite]]] = []
    for page in plan.pages:
        page_writes = [w for w in writes if w.page_id == page.page_id]
        if page.mode == "update" and not page_writes and not page.aliases:
            continue  # every proposed section was skipped as unchanged: the page is not touched
        pages.append((page, page_writes))
    stored_ids = await _upsert_pages(state, [page for page, _ in pages])
    written = list(zip(stored_ids, pages, strict=True))
    await _upsert_sections(state, [(page_id, write) for page_id, (_, page_writes) in written
                                   for write in page_writes], refs)
    await _add_aliases(state, [(page_id, alias) for page_id, (page, _) in written for alias in page.aliases])


@dataclass(frozen=True)
class _SectionWrite:
    """One section body to write: a writer's draft or a section the resolver wrote directly."""
    page_id: str
    slug: str
    heading: str
    body_md: str
    source_refs: list[str]
    rewritten: bool  # through the section writer (or replacing a body, as rollups do): what the cap counts
    cite_only: bool = False  # citations for the stored section; its body stays
    replace_sources: bool = False  # these citations are all the section's provenance


def _section_writes(plan: ResolvedPlan, drafts: dict[str, str]) -> list[_SectionWrite]:
    """Final section bodies: the writer's draft for tasks, the planner's body for direct writes."""
    writes = []
    for page in plan.pages:
        for section in page.sections:
            if isinstance(section, WriterSection):
                task = plan.tasks[section.task]
                if section.task not in drafts:
                    continue  # the writer was not run for it (never happens after a complete batch)
                writes.append(_SectionWrite(page_id=page.page_id, slug=task.slug, heading=task.heading,
                                            body_md=drafts[section.task], source_refs=task.source_refs,
                                            rewritten=True))
            else:
                writes.append(_direct_write(page.page_id, section))
    return writes


def _direct_write(page_id: str, section: DirectSection) -> _SectionWrite:
    return _SectionWrite(page_id=page_id, slug=section.slug, heading=section.heading, body_md=section.body_md,
                         source_refs=section.source_refs, rewritten=section.rewritten, cite_only=section.cite_only,
                         replace_sources=section.replace_sources)


async def _linkable_pages(state: _Apply, plan: ResolvedPlan, writes: list[_SectionWrite]) -> list[PageRef]:
    """The pages the names in bold in this batch's bodies stand for (the linkifier's candidates): a
    page whose exact title is in bold, else the one page of the scope (an entity first) that has the
    bold name as an alias, so a variant spelling links to its page too. Ambiguous names stay plain."""
    bolded = sorted({match.group(1).strip() for w in writes if not w.cite_only
                     for match in _BOLD.finditer(safe_markdown(strip_wikilinks(w.body_md)))})
    if not bolded:
        return []
    refs = {(p.type, p.slug, p.title): None for p in plan.pages if p.title in bolded}
    rows = await state.conn.execute(text("""
        SELECT type, slug, title FROM wiki_pages
        WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'active'
          AND title = ANY(CAST(:titles AS text[]))
        ORDER BY type, slug
    """), {"tenant": state.tenant, "owner": state.owner, "titles": bolded})
    for row in rows:
        refs.setdefault((row.type, row.slug, row.title), None)
    titled = {title for _, _, title in refs}
    by_alias = {name: normalize_alias(name) for name in bolded if name not in titled and normalize_alias(name)}
    if by_alias:
        candidates: dict[str, set[tuple[str, str]]] = {}
        for page in plan.pages:
            for alias in {*page.aliases, normalize_alias(page.title)}:
                candidates.setdefault(alias, set()).add((page.type, page.slug))
        rows = await state.conn.execute(text("""
            SELECT a.alias, p.type, p.slug FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
            WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
              AND a.alias = ANY(CAST(:aliases AS text[]))
        """), {"tenant": state.tenant, "owner": state.owner, "aliases": sorted(set(by_alias.values()))})
        for row in rows:
            candidates.setdefault(row.alias, set()).add((row.type, row.slug))
        for name, alias in by_alias.items():
            pages = candidates.get(alias, set())
            best = next((kind for kind in _LINKED_KINDS if any(t == kind for t, _ in pages)), None)
            matching = sorted(slug for t, slug in pages if t == best)
            if best is not None and len(matching) == 1:
                refs.setdefault((best, matching[0], name), None)
    return [PageRef(type=t, slug=s, title=title) for t, s, title in refs]


def _occurrence_rounds(keys: list[Hashable]) -> list[list[int]]:
    """Indexes of `keys` in rounds: the n-th occurrence of a key goes in round n, so no round repeats
    a key (one multi-row ON CONFLICT DO UPDATE may not touch a row twice) and later occurrences are
    written after earlier ones, as one-by-one writes would."""
    rounds: list[list[int]] = []
    seen: Counter[Hashable] = Counter()
    for index, key in enumerate(keys):
        occurrence = seen[key]
        seen[key] += 1
        if occurrence == len(rounds):
            rounds.append([])
        rounds[occurrence].append(index)
    return rounds


async def _upsert_pages(state: _Apply, pages: list[ResolvedPage]) -> list[str]:
    """Upsert the pages; their stored ids, in order (an existing page keeps its own id)."""
    stored_ids: list[str] = [""] * len(pages)
    # The resolvers give each (type, slug) one entry; a plan repeating one is still written as
    # successive upserts would write it.
    for indexes in _occurrence_rounds([(page.type, page.slug) for page in pages]):
        chunk = [pages[i] for i in indexes]
        rows = await state.conn.execute(text("""
            WITH planned AS (
                SELECT * FROM unnest(CAST(:ids AS uuid[]), CAST(:types AS text[]), CAST(:slugs AS text[]),
                                     CAST(:titles AS text[]), CAST(:summaries AS text[]),
                                     CAST(:keep_titles AS boolean[]), CAST(:retitles AS boolean[]))
                    AS planned(id, type, slug, title, summary, keep_title, retitle)
            )
            INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title, summary, status, last_compiled_at)
            SELECT id, :tenant, :owner, type, slug, title, summary, 'active', :now FROM planned
            ON CONFLICT (tenant_id, owner_id, type, slug) DO UPDATE SET
                title = CASE WHEN (SELECT keep_title AND NOT retitle FROM planned
                                   WHERE planned.type = excluded.type AND planned.slug = excluded.slug)
                             THEN wiki_pages.title ELSE excluded.title END,
                summary = CASE WHEN (SELECT keep_title FROM planned
                                     WHERE planned.type = excluded.type AND planned.slug = excluded.slug)
                               THEN coalesce(wiki_pages.summary, excluded.summary)
                               ELSE coalesce(excluded.summary, wiki_pages.summary) END,
                status = 'active', last_compiled_at = :now, updated_at = :now
            RETURNING id, type, slug, (xmax = 0) AS inserted
        """), {"tenant": state.tenant, "owner": state.owner, "now": state.now,
               "ids": [p.page_id for p in chunk], "types": [p.type for p in chunk],
               "slugs": [p.slug for p in chunk], "titles": [safe_title(p.title) for p in chunk],
               "summaries": [safe_markdown(p.summary) if p.summary is not None else None for p in chunk],
               "keep_titles": [p.keep_title for p in chunk], "retitles": [p.retitle for p in chunk]})
        stored = {}
        for row in rows:
            stored[(row.type, row.slug)] = str(row.id)
            state.result.pages_created += row.inserted
        for i in indexes:
            stored_ids[i] = stored[(pages[i].type, pages[i].slug)]
    state.result.pages_upserted += len(pages)
    for page, page_id in zip(pages, stored_ids, strict=True):
        state.page_ids_by_key[(page.type, page.slug)] = page_id
        state.touch(page_id, [])
    return stored_ids


@dataclass
class _SectionRow:
    """What the section writes of one (page, slug) leave behind, applied one after the other."""
    page_id: str
    slug: str
    heading: str  # the first write's: a later write of the same section only replaces its body
    body: str
    position: int  # a section that exists already is sent with its own: the insert needs one, the upsert keeps it


async def _upsert_sections(state: _Apply, writes: list[tuple[str, _SectionWrite]], refs: list[PageRef]) -> None:
    """(page id, write) in plan order; writes of one section fold into one row, as successive
    upserts would leave it: the first write's heading and position, the last one's body, every
    write's citations. A cite-only write adds its citations and leaves the stored body alone."""
    if not writes:
        return
    existing = await state.conn.execute(text("""
        SELECT id, page_id, section_slug, position FROM wiki_page_sections WHERE page_id = ANY(CAST(:pages AS uuid[]))
    """), {"pages": list(dict.fromkeys(page_id for page_id, _ in writes))})
    positions: dict[tuple[str, str], int] = {}
    stored_ids: dict[tuple[str, str], Any] = {}
    last_position: dict[str, int] = {}
    for row in existing:
        page_id = str(row.page_id)
        positions[(page_id, row.section_slug)] = row.position
        stored_ids[(page_id, row.section_slug)] = row.id
        last_position[page_id] = max(last_position.get(page_id, 0), row.position)
    sections: dict[tuple[str, str], _SectionRow] = {}
    citations: dict[tuple[str, str], list[str]] = {}
    replaced: set[tuple[str, str]] = set()
    for page_id, write in writes:
        key = (page_id, write.slug)
        cited = citations.setdefault(key, [])
        cited += [r for r in write.source_refs if r not in cited]
        if write.replace_sources:
            replaced.add(key)
        state.touch(page_id, write.source_refs)
        if write.cite_only:
            continue
        body = safe_markdown(linkify_known_entities(
            without_repeated_lines(safe_markdown(strip_wikilinks(write.body_md).strip())), refs))
        section = sections.get(key)
        if section is None:
            if key not in positions:
                # A new section goes last, after the sections written before it in this batch.
                last_position[page_id] = positions[key] = last_position.get(page_id, 0) + 1
            section = sections[key] = _SectionRow(page_id=page_id, slug=write.slug, heading=write.heading,
                                                  body=body, position=positions[key])
        section.body = body
        if write.rewritten:
            state.result.sections_rewritten += 1  # through the section writer: what the per-run cap counts
        else:
            state.result.sections_written += 1
    rows = list(sections.values())
    section_ids = dict(stored_ids)
    if rows:
        # An existing section keeps its id, heading and position: only its body and times change.
        returned = await state.conn.execute(text("""
            INSERT INTO wiki_page_sections (id, page_id, section_slug, heading, body_md, position, last_source_at)
            SELECT id, page_id, section_slug, heading, body_md, position, :now
            FROM unnest(CAST(:ids AS uuid[]), CAST(:pages AS uuid[]), CAST(:slugs AS text[]),
                        CAST(:headings AS text[]), CAST(:bodies AS text[]), CAST(:positions AS integer[]))
                AS planned(id, page_id, section_slug, heading, body_md, position)
            ON CONFLICT (page_id, section_slug) DO UPDATE SET
                body_md = excluded.body_md, last_source_at = :now, updated_at = :now
            RETURNING id, page_id, section_slug
        """), {"now": state.now, "ids": [ids.section_id(UUID(s.page_id), s.slug) for s in rows],
               "pages": [s.page_id for s in rows], "slugs": [s.slug for s in rows],
               "headings": [safe_markdown(s.heading) for s in rows], "bodies": [s.body for s in rows],
               "positions": [s.position for s in rows]})
        section_ids.update({(str(row.page_id), row.section_slug): row.id for row in returned})
    # Provenance only from each section's citations; zero cited memories means zero rows. A cite-only
    # write for a section that is not there (deleted meanwhile) has nothing to cite from.
    sources = [(section_ids[key], ref) for key, cited in citations.items() if key in section_ids for ref in cited]
    if replaced:
        keep = [(str(section_ids[key]), ref) for key in replaced if key in section_ids for ref in citations[key]]
        await state.conn.execute(text("""
            DELETE FROM wiki_section_sources s
            WHERE s.section_id = ANY(CAST(:sections AS uuid[])) AND s.source_kind = 'memory_unit'
              AND (s.section_id, s.source_ref) NOT IN (
                  SELECT kept.section_id, kept.source_ref
                  FROM unnest(CAST(:kept_sections AS uuid[]), CAST(:kept_refs AS text[])) AS kept(section_id, source_ref))
        """), {"sections": [str(section_ids[key]) for key in replaced if key in section_ids],
               "kept_sections": [section for section, _ in keep], "kept_refs": [ref for _, ref in keep]})
    if sources:
        await state.conn.execute(text("""
            INSERT INTO wiki_section_sources (id, section_id, source_kind, source_ref, first_seen_at)
            SELECT id, section_id, 'memory_unit', source_ref, :now
            FROM unnest(CAST(:ids AS uuid[]), CAST(:sections AS uuid[]), CAST(:refs AS text[]))
                AS cited(id, section_id, source_ref)
            ON CONFLICT (section_id, source_kind, source_ref) DO NOTHING
        """), {"now": state.now, "ids": [ids.source_id(section, "memory_unit", ref) for section, ref in sources],
               "sections": [str(section) for section, _ in sources], "refs": [ref for _, ref in sources]})
    # Every section written or newly cited: its lines become claims with their own citations.
    marks = await sync_claims(state.conn, state.tenant, state.owner,
                              [section_ids[key] for key in citations if key in section_ids],
                              state.proposed, state.run_id, state.now)
    state.result.supersessions_marked += marks.marked
    state.result.supersessions_refused += marks.refused


async def _add_aliases(state: _Apply, aliases: list[tuple[str, str]]) -> None:
    if not aliases:
        return
    await state.conn.execute(text("""
        INSERT INTO wiki_page_aliases (id, page_id, alias, source)
        SELECT id, page_id, alias, 'compiler'
        FROM unnest(CAST(:ids AS uuid[]), CAST(:pages AS uuid[]), CAST(:aliases AS text[])) AS named(id, page_id, alias)
        ON CONFLICT (page_id, alias) DO NOTHING
    """), {"ids": [ids.alias_id(UUID(page_id), alias) for page_id, alias in aliases],
           "pages": [page_id for page_id, _ in aliases], "aliases": [alias for _, alias in aliases]})


# ------------------------------------------------------------------------------------------ mentions


@dataclass
class _OpenMention:
    """The open row of an alias after this batch's sightings: found in the scope or new."""
    id: Any
    is_new: bool
    alias: str | None  # a new row's spelling; an existing row keeps its own
    samples: list[Any]
    suggested_type: str | None  # for an existing row, None keeps the stored one
    sightings: int = 0
    seen_in: list[str] = field(default_factory=list)  # the memory of each sighting that names one


async def _upsert_mentions(state: _Apply, mentions: list[MentionSighting], promoting: set[str]) -> None:
    """Each sighting adds one to its alias's open row (created when there is none), newest context
    first; a new row's id counts the alias's earlier rows, promoted or ignored ones included. A
    spelling the scope has never held joins the open row of the same name instead, when the ladder
    confidently says there is one (store/mention_pool.py), so that evidence counts per thing; not a
    row this plan promotes (`promoting`: its page cites only the sightings it was promoted with)."""
    if not mentions:
        return
    spellings = list(dict.fromkeys(m.alias_normalized for m in mentions))
    rows = list((await state.conn.execute(text("""
        SELECT id, alias_normalized, status, sample_contexts FROM wiki_unresolved_mentions
        WHERE tenant_id = :tenant AND owner_id = :owner AND alias_normalized = ANY(CAST(:aliases AS text[]))
        FOR UPDATE
    """), {"tenant": state.tenant, "owner": state.owner, "aliases": spellings})).fetchall())
    home = await _mention_homes(state, mentions, {row.alias_normalized for row in rows}, promoting)
    pooled_into = sorted(set(home.values()) - set(spellings))
    if pooled_into:
        rows += (await state.conn.execute(text("""
            SELECT id, alias_normalized, status, sample_contexts FROM wiki_unresolved_mentions
            WHERE tenant_id = :tenant AND owner_id = :owner AND alias_normalized = ANY(CAST(:aliases AS text[]))
              AND status = 'open'
            FOR UPDATE
        """), {"tenant": state.tenant, "owner": state.owner, "aliases": pooled_into})).fetchall()
    earlier_rows: Counter[str] = Counter()
    open_rows: dict[str, _OpenMention] = {}
    for row in rows:
        earlier_rows[row.alias_normalized] += 1
        if row.status == "open":
            open_rows[row.alias_normalized] = _OpenMention(id=row.id, is_new=False, alias=None,
                                                           samples=list(row.sample_contexts or []),
                                                           suggested_type=None)
    for mention in mentions:
        normalized = home.get(mention.alias_normalized, mention.alias_normalized)
        context: dict[str, Any] | None = None
        if mention.context:
            context = {"quote": mention.context, "source_ref": mention.source_ref, "seen_at": state.now.isoformat()}
            if normalized != mention.alias_normalized:
                context["alias"] = mention.alias  # a pooled spelling: the row's other names
        open_row = open_rows.get(normalized)
        if open_row is None:
            open_rows[normalized] = open_row = _OpenMention(
                id=ids.mention_id(state.tenant, state.owner, normalized, earlier_rows[normalized]), is_new=True,
                alias=mention.alias, samples=[], suggested_type=mention.suggested_type)
        elif mention.suggested_type is not None:
            open_row.suggested_type = mention.suggested_type
        if context is not None:
            open_row.samples = [context, *open_row.samples][:MAX_SAMPLE_CONTEXTS]
        open_row.sightings += 1
        if mention.source_ref:
            open_row.seen_in.append(mention.source_ref)
        state.result.unresolved_upserted += 1
    seen = [row for row in open_rows.values() if not row.is_new]
    if seen:
        await state.conn.execute(text("""
            UPDATE wiki_unresolved_mentions AS m SET mention_count = m.mention_count + seen.sightings,
                last_seen_at = :now, sample_contexts = CAST(seen.samples AS jsonb),
                suggested_type = coalesce(seen.suggested_type, m.suggested_type), updated_at = :now
            FROM unnest(CAST(:ids AS uuid[]), CAST(:sightings AS integer[]), CAST(:samples AS text[]),
                        CAST(:types AS text[])) AS seen(id, sightings, samples, suggested_type)
            WHERE m.id = seen.id
        """), {"now": state.now, "ids": [str(row.id) for row in seen],
               "sightings": [row.sightings for row in seen], "samples": [json.dumps(row.samples) for row in seen],
               "types": [row.suggested_type for row in seen]})
    new = [(normalized, row) for normalized, row in open_rows.items() if row.is_new]
    if new:
        await state.conn.execute(text("""
            INSERT INTO wiki_unresolved_mentions (id, tenant_id, owner_id, alias, alias_normalized, suggested_type,
                mention_count, sample_contexts, first_seen_at, last_seen_at, updated_at)
            SELECT id, :tenant, :owner, alias, alias_normalized, suggested_type, sightings, CAST(samples AS jsonb),
                   :now, :now, :now
            FROM unnest(CAST(:ids AS uuid[]), CAST(:aliases AS text[]), CAST(:normalized AS text[]),
                        CAST(:types AS text[]), CAST(:sightings AS integer[]), CAST(:samples AS text[]))
                AS seen(id, alias, alias_normalized, suggested_type, sightings, samples)
        """), {"tenant": state.tenant, "owner": state.owner, "now": state.now,
               "ids": [str(row.id) for _, row in new], "aliases": [row.alias for _, row in new],
               "normalized": [normalized for normalized, _ in new],
               "types": [row.suggested_type for _, row in new], "sightings": [row.sightings for _, row in new],
               "samples": [json.dumps(row.samples) for _, row in new]})
    await record_sightings(state.conn, [(str(row.id), ref) for row in open_rows.values() for ref in row.seen_in])


async def _mention_homes(state: _Apply, mentions: list[MentionSighting], held: set[str],
                         promoting: set[str]) -> dict[str, str]:
    """spelling (normalised) -> the alias_normalized of the row its sightings count on: its own when
    the scope has a row of it (open, promoted or ignored), else the one open row of the same name
    (store/mention_pool.py), else its own new row, which later spellings of this batch may join."""
    fresh = [m for m in mentions if m.alias_normalized not in held]
    if not fresh:
        return {}
    pool = await open_pool(state.conn, state.tenant, state.owner, skip=promoting)
    home: dict[str, str] = {}
    for mention in fresh:
        if mention.alias_normalized in home:
            continue
        kin = pool.kin(mention.alias, mention.suggested_type)
        if kin is None or kin == mention.alias_normalized:
            home[mention.alias_normalized] = mention.alias_normalized
            pool.add(PoolRow(mention.alias_normalized, mention.suggested_type, (mention.alias,)))
        else:
            home[mention.alias_normalized] = kin
            pool.extend(kin, mention.alias)
    return home


async def _mark_promoted(state: _Apply, promotions: list[MentionPromotion]) -> None:
    """The promoted mention's open row becomes the alias's promoted row; when the alias was promoted
    before (one promoted row per alias, maybe earlier in this batch) the open row is simply retired."""
    if not promotions:
        return
    rows = await state.conn.execute(text("""
        SELECT id, alias_normalized, status FROM wiki_unresolved_mentions
        WHERE tenant_id = :tenant AND owner_id = :owner
          AND (id = ANY(CAST(:ids AS uuid[]))
               OR (alias_normalized = ANY(CAST(:aliases AS text[])) AND status = 'promoted'))
    """), {"tenant": state.tenant, "owner": state.owner, "ids": [p.mention_id for p in promotions],
           "aliases": [p.alias_normalized for p in promotions]})
    # id -> [alias_normalized, status], kept up to date as the promotions are applied one by one
    mentions = {str(row.id): [row.alias_normalized, row.status] for row in rows}
    retired: list[str] = []
    promoted: list[tuple[str, str]] = []
    for promotion in promotions:
        mention_id = str(UUID(promotion.mention_id))
        already = any(alias == promotion.alias_normalized and status == "promoted"
                      for alias, status in mentions.values())
        if already:
            if mentions.pop(mention_id, None) is not None:
                retired.append(mention_id)
        elif mention_id in mentions and mentions[mention_id][1] == "open":
            mentions[mention_id][1] = "promoted"
            promoted.append((mention_id, promotion.page_id))
        state.result.unresolved_promoted += 1
    # Retirements first: the alias's promoted row a retirement removes must be gone before another
    # row of that alias becomes its promoted one (one promoted row per alias).
    if retired:
        await state.conn.execute(text("""
            DELETE FROM wiki_unresolved_mentions
            WHERE id = ANY(CAST(:ids AS uuid[])) AND tenant_id = :tenant AND owner_id = :owner
        """), {"ids": retired, "tenant": state.tenant, "owner": state.owner})
    if promoted:
        await state.conn.execute(text("""
            UPDATE wiki_unresolved_mentions AS m SET status = 'promoted', promoted_page_id = p.page_id,
                updated_at = now()
            FROM unnest(CAST(:ids AS uuid[]), CAST(:pages AS uuid[])) AS p(id, page_id)
            WHERE m.id = p.id AND m.tenant_id = :tenant AND m.owner_id = :owner AND m.status = 'open'
        """), {"ids": [mention_id for mention_id, _ in promoted], "pages": [page for _, page in promoted],
               "tenant": state.tenant, "owner": state.owner})


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
