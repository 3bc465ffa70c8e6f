"""Resolve a staged plan against the scope's rows before anything is written.

- Every page and mention id must be a UUID of this scope; anything else is dropped and counted.
- Citations are kept only when they name a memory of the batch (provenance only from citations).
- A proposed new page (or promotion) merges into an existing page of the scope, or into a page
  proposed earlier in the same plan, when the resolution ladder (domain/resolution.py) says they are
  one thing: candidates come from store/page_matching.py; confident rungs merge, ambiguous ones merge
  only when the judge said so (its decisions are stored with the plan before resolution runs).
- A section is sent to the writer only when the change is meaningful; sections that collide with an
  existing body (updates, merges, re-proposed pages) all go through it: nothing is overwritten blindly.
- Promotions need >= 3 sightings within 30 days, enforced here, not only in the prompt.

The result is a `ResolvedPlan` (domain/resolved_plan.py) stored next to the plan; apply reads it,
the workflow only sees the section-task keys and counters.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.aliases import (
    format_heading_from_slug,
    is_properly_cased,
    normalize_alias,
    seed_aliases_for_title,
    slugify_title,
)
from domain.guards import cited_memory_ids, is_meaningful_change, is_valid_uuid, strip_wikilinks
from domain.ids import page_id as deterministic_page_id
from domain.merge_questions import MergeRecord, MergeSide
from domain.plan import NewPage, NewSection, PageLink, Plan
from domain.plan_claims import proposed_claims
from domain.promotion import promotion_allowed
from domain.render import first_sentence
from domain.resolution import Match, NameSet, Rung, ranked_matches
from domain.resolved_plan import (
    DirectSection,
    HierarchyEdge,
    IdLink,
    MentionPromotion,
    MentionSighting,
    PageMode,
    PromotedAggregation,
    ResolvedPage,
    ResolvedPlan,
    RollupAggregation,
    SectionTask,
    WriterSection,
)
from messages.compile import ResolvePlanResult
from store.mention_revisits import mention_folds
from store.merge_records import PROPOSAL_EVIDENCE_CHARS, NameKey, Proposal, merge_record, planner_record
from store.page_matching import AskedMerge, Candidate, Judgement, candidates_by_keys, pair_key
from store.place_split import proposal_as_resolved

PageKey = tuple[str, str]  # (page type, slug)


@dataclass
class Lookups:
    """Reads made before resolving a leaf plan's pages, a handful of statements for the whole plan.

    Nothing is written while a plan resolves, so reading everything first answers exactly what one
    query per page would (40-odd round trips per batch otherwise). A key the prefetch did not read
    goes through the same query, with that one key.
    """

    candidates: dict[NameKey, list[Candidate]] = field(default_factory=dict)
    by_type_slug: dict[PageKey, Any] = field(default_factory=dict)
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)  # page id -> slug -> section


@dataclass
class Resolution:
    """The working state of one resolution; its entries are the resolved plan's own models."""

    tenant: str
    owner: str
    batch_ids: list[str]
    now: datetime
    result: ResolvePlanResult
    tasks: dict[str, SectionTask] = field(default_factory=dict)
    # (page_id, section_slug) -> task key, so two proposals for one section become one writer call
    task_by_section: dict[tuple[str, str], str] = field(default_factory=dict)
    pages: list[ResolvedPage] = field(default_factory=list)
    page_by_key: dict[PageKey, ResolvedPage] = field(default_factory=dict)
    mentions: list[MentionSighting] = field(default_factory=list)
    mark_promoted: list[MentionPromotion] = field(default_factory=list)
    # (type, slug) a plan used for a page -> (type, slug) the page is stored under (merges, slugified titles)
    redirects: dict[PageKey, PageKey] = field(default_factory=dict)
    # Links by page id the resolver decides on its own (rollup parent -> child), beyond the plan's.
    id_links: list[IdLink] = field(default_factory=list)
    lookups: Lookups = field(default_factory=Lookups)
    judgement: Judgement = field(default_factory=Judgement)
    merge_records: list[MergeRecord] = field(default_factory=list)

    def redirect(self, page_type: str, slugs: list[str], entry: ResolvedPage) -> None:
        for slug in slugs:
            if slug and (page_type, slug) != (entry.type, entry.slug):
                self.redirects.setdefault((page_type, slug), (entry.type, entry.slug))

    def landed(self, page_type: str, slug: str) -> PageKey:
        """The (type, slug) a page the plan named (type, slug) is stored under."""
        key = (page_type, slug.strip())
        return self.redirects.get(key, key)

    def link(self, link: PageLink) -> PageLink:
        """The plan's link with each end on the page its proposal landed on."""
        (from_type, from_slug), (to_type, to_slug) = (self.landed(link.fromType, link.fromSlug),
                                                      self.landed(link.toType, link.toSlug))
        return PageLink(fromType=from_type, fromSlug=from_slug, toType=to_type, toSlug=to_slug, context=link.context)

    def cite(self, refs: list[str], held: frozenset[str] = frozenset()) -> list[str]:
        """The refs that name a memory of the batch (or one of `held`, sightings recorded earlier); any
        other ref (miscopied, invented, another scope's) is dropped and counted."""
        allowed = set(self.batch_ids) | held
        self.result.dropped_invalid_ids += sum(1 for ref in refs if str(ref).strip().lower() not in allowed)
        return cited_memory_ids(refs, allowed)

    def resolved_plan(self, links: list[PageLink], *, hierarchy: list[HierarchyEdge] | None = None,
                      aggregations: list[RollupAggregation | PromotedAggregation] | None = None) -> ResolvedPlan:
        """The plan as resolved: these entries, and the plan's links redirected to where pages landed."""
        return ResolvedPlan(memory_ids=self.batch_ids, tasks=self.tasks, pages=self.pages, mentions=self.mentions,
                            promotions=self.mark_promoted, links=[self.link(link) for link in links],
                            id_links=self.id_links, hierarchy=hierarchy or [], aggregations=aggregations or [])


async def resolve_plan(conn: AsyncConnection, tenant: str, owner: str, plan_id: UUID, plan: Plan,
                       batch_ids: list[str], now: datetime,
                       judgement: Judgement | None = None) -> tuple[ResolvedPlan, ResolvePlanResult]:
    """The plan resolved against the scope. `judgement` holds the judge's decisions on ambiguous
    pairs and collects the pairs met (the judge activity resolves once with none to learn them)."""
    res = Resolution(tenant=tenant, owner=owner, batch_ids=[str(b) for b in batch_ids], now=now,
                     result=ResolvePlanResult(plan_id=plan_id), judgement=judgement or Judgement())
    found = await scope_pages_by_id(conn, res, _update_page_ids(plan))
    res.lookups = await _prefetch(conn, res, plan, found)
    _resolve_page_updates(res, plan, found)
    for proposal in plan.newPages:
        await _resolve_new_page(conn, res, proposal)
    await _resolve_promotions(conn, res, plan)
    await _revisit_mentions(conn, res, plan)
    _resolve_mentions(res, plan)
    res.result.section_tasks = list(res.tasks)
    resolved = res.resolved_plan(plan.pageLinks)
    resolved.line_claims = proposed_claims(plan)
    resolved.merge_records = res.merge_records
    return resolved, res.result


# -------------------------------------------------------------------------------------------- reads


async def scope_pages_by_id(conn: AsyncConnection, res: Resolution, ids: list[str]) -> dict[str, Any]:
    if not ids:
        return {}
    rows = await conn.execute(text("""
        SELECT id, type, slug, title, summary, status, parent_page_id FROM wiki_pages
        WHERE tenant_id = :tenant AND owner_id = :owner AND id = ANY(CAST(:ids AS uuid[]))
    """), {"tenant": res.tenant, "owner": res.owner, "ids": ids})
    return {str(row.id): row for row in rows}


async def _pages_by_type_slug(conn: AsyncConnection, res: Resolution, keys: list[PageKey]) -> dict[PageKey, Any]:
    """The scope's page of each (type, slug), whatever its status; None when there is none."""
    if not keys:
        return {}
    rows = await conn.execute(text("""
        SELECT p.id, p.type, p.slug, p.title, p.summary, p.status
        FROM wiki_pages p JOIN unnest(CAST(:types AS text[]), CAST(:slugs AS text[])) AS q(type, slug)
             ON p.type = q.type AND p.slug = q.slug
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner
    """), {"tenant": res.tenant, "owner": res.owner, **_columns(keys, "types", "slugs")})
    found = {(row.type, row.slug): row for row in rows}
    return {key: found.get(key) for key in keys}


async def _sections_by_page(conn: AsyncConnection, page_ids: list[str]) -> dict[str, dict[str, Any]]:
    """page id -> section slug -> its stored section, for every page asked (empty when it has none)."""
    if not page_ids:
        return {}
    sections: dict[str, dict[str, Any]] = {page_id: {} for page_id in page_ids}
    rows = await conn.execute(text("""
        SELECT page_id, section_slug, heading, body_md, position FROM wiki_page_sections
        WHERE page_id = ANY(CAST(:ids AS uuid[]))
    """), {"ids": page_ids})
    for row in rows:
        sections[str(row.page_id)][row.section_slug] = row
    return sections


def _columns(rows: list[tuple], *names: str) -> dict[str, list]:
    """Parallel arrays for unnest() from rows of tuples."""
    return {name: [row[i] for row in rows] for i, name in enumerate(names)}


async def _lookup(cache: dict[Any, Any], key: Hashable, read: Callable[[list[Any]], Any]) -> Any:
    """The prefetched answer for `key`, else the batched read with this one key."""
    if key in cache:
        return cache[key]
    return (await read([key]))[key]


async def sections_of(conn: AsyncConnection, res: Resolution, page_id: str) -> dict[str, Any]:
    return await _lookup(res.lookups.sections, page_id, lambda ids: _sections_by_page(conn, ids))


async def page_by_type_slug(conn: AsyncConnection, res: Resolution, page_type: str, slug: str) -> Any:
    return await _lookup(res.lookups.by_type_slug, (page_type, slug),
                         lambda keys: _pages_by_type_slug(conn, res, keys))


async def candidates_of(conn: AsyncConnection, res: Resolution, names: NameKey) -> list[Candidate]:
    return await _lookup(res.lookups.candidates, names,
                         lambda keys: candidates_by_keys(conn, res.tenant, res.owner, keys))


async def _prefetch(conn: AsyncConnection, res: Resolution, plan: Plan, updated_pages: dict[str, Any]) -> Lookups:
    """Every read resolving the plan's page updates and new pages needs, in three statements."""
    lookups = Lookups()
    proposals = [((p.title, *p.aliases), p.type, _new_page_slug(p)) for p in plan.newPages]
    lookups.candidates = await candidates_by_keys(
        conn, res.tenant, res.owner, list(dict.fromkeys(names for names, _, _ in proposals)))
    lookups.by_type_slug = await _pages_by_type_slug(
        conn, res, list(dict.fromkeys((page_type, slug) for _, page_type, slug in proposals)))
    page_ids = {*updated_pages, *(c.id for found in lookups.candidates.values() for c in found),
                *(str(hit.id) for hit in lookups.by_type_slug.values() if hit is not None)}
    lookups.sections = await _sections_by_page(conn, sorted(page_ids))
    return lookups


# ---------------------------------------------------------------------------------- resolved entries


def page_entry(res: Resolution, *, page_id: str, page_type: str, slug: str, title: str, summary: str | None,
               mode: PageMode, keep_title: bool) -> ResolvedPage:
    """One page the apply step writes; proposals for the same page share one entry."""
    key = (page_type, slug)
    entry = res.page_by_key.get(key)
    if entry is None:
        entry = ResolvedPage(page_id=page_id, type=page_type, slug=slug, title=title, summary=summary, mode=mode,
                             keep_title=keep_title)
        res.page_by_key[key] = entry
        res.pages.append(entry)
    elif summary and not entry.summary:
        entry.summary = summary
    return entry


def recase_title(entry: ResolvedPage, names: list[str]) -> None:
    """Give an existing page the properly cased form of its own title when a proposal writes it so
    and the stored title is shouted or in lower case: the same name, better attested."""
    if is_properly_cased(entry.title):
        return
    stored = normalize_alias(entry.title)
    better = next((name.strip() for name in names if is_properly_cased(name.strip())
                   and normalize_alias(name) == stored), None)
    if better:
        entry.title, entry.retitle = better, True


def add_aliases(entry: ResolvedPage, aliases: list[str]) -> None:
    for alias in aliases:
        normalized = normalize_alias(alias)
        if normalized and normalized not in entry.aliases:
            entry.aliases.append(normalized)


# Every section and task gets its own copy of its citations: the sections of one proposal that fall
# back to the page-level citations (`section_refs`) must not share one list, or citations a later
# proposal adds to one of them would show in all of them.


def add_section(res: Resolution, entry: ResolvedPage, existing: dict[str, Any], *, slug: str, heading: str,
                body: str, refs: list[str]) -> None:
    """A section write: direct when the page has no body there yet, through the writer otherwise."""
    body = strip_wikilinks(body).strip()
    current = existing.get(slug)
    pending = next((s for s in entry.sections
                    if isinstance(s, DirectSection) and s.slug == slug and not s.cite_only), None)
    if current is None and pending is None:
        entry.sections.append(DirectSection(
            slug=slug, heading=heading or format_heading_from_slug(slug), body_md=body, source_refs=list(refs)))
        return
    if current is None and pending is not None:
        # Two proposals for a new section of one page in one plan: the writer merges them into one body
        # (pasting one after the other would repeat what both say), citing what either cites.
        key = _new_task(res, entry, slug=slug, heading=pending.heading, existing_body=None,
                        proposed="\n\n".join(part for part in (pending.body_md, body) if part),
                        refs=[*pending.source_refs, *(r for r in refs if r not in pending.source_refs)])
        entry.sections[entry.sections.index(pending)] = WriterSection(slug=slug, task=key)
        return
    add_writer_task(res, entry, current=current, slug=slug, heading=heading, proposed=body, refs=refs)


def add_writer_task(res: Resolution, entry: ResolvedPage, *, current: Any, slug: str, heading: str,
                    proposed: str, refs: list[str], additive: bool = False) -> None:
    existing_body = current.body_md if current is not None else None
    key = res.task_by_section.get((entry.page_id, slug))
    if key is not None:
        task = res.tasks[key]
        task.proposed_body = "\n\n".join(p for p in (task.proposed_body, proposed) if p)
        task.source_refs += [r for r in refs if r not in task.source_refs]
        task.additive = task.additive and additive
        return
    if not is_meaningful_change(existing_body, proposed):
        res.result.sections_skipped += 1
        if current is not None and refs:
            # The body already says it (a line the page has, a list rendered the same): the memories
            # still informed the section, so they are cited, and the body is left as it is.
            cite_only(entry, slug, refs)
        return
    # Memories cited without a rewrite earlier in the plan go to the writer with this proposal.
    earlier = next((s for s in entry.sections if isinstance(s, DirectSection) and s.slug == slug and s.cite_only),
                   None)
    if earlier is not None:
        entry.sections.remove(earlier)
        refs = [*earlier.source_refs, *(r for r in refs if r not in earlier.source_refs)]
    key = _new_task(res, entry, slug=slug,
                    heading=current.heading if current is not None else (heading or format_heading_from_slug(slug)),
                    existing_body=existing_body, proposed=proposed, refs=refs, additive=additive)
    entry.sections.append(WriterSection(slug=slug, task=key))


def _new_task(res: Resolution, entry: ResolvedPage, *, slug: str, heading: str, existing_body: str | None,
              proposed: str, refs: list[str], additive: bool = False) -> str:
    key = f"s{len(res.tasks) + 1}"
    res.task_by_section[(entry.page_id, slug)] = key
    res.tasks[key] = SectionTask(page_id=entry.page_id, page_title=entry.title, page_type=entry.type, slug=slug,
                                 heading=heading, existing_body=existing_body, proposed_body=proposed,
                                 source_refs=list(refs), additive=additive)
    return key


def cite_only(entry: ResolvedPage, slug: str, refs: list[str], *, replace_sources: bool = False) -> None:
    """Cite `refs` from an existing section of the page without rewriting its body."""
    earlier = next((s for s in entry.sections if isinstance(s, DirectSection) and s.slug == slug and s.cite_only),
                   None)
    if earlier is None:
        entry.sections.append(DirectSection(slug=slug, heading="", body_md="", source_refs=list(refs),
                                            cite_only=True, replace_sources=replace_sources))
    else:
        earlier.source_refs += [r for r in refs if r not in earlier.source_refs]


# ---------------------------------------------------------------------------------------------- pages


def _update_page_ids(plan: Plan) -> list[str]:
    candidates = [u.pageId.strip() for u in plan.pageUpdates]
    return [i.lower() for i in candidates if is_valid_uuid(i)]


def _new_page_slug(proposal: NewPage) -> str:
    return slugify_title(proposal.title) or slugify_title(proposal.slug) or proposal.slug.strip()


def _resolve_page_updates(res: Resolution, plan: Plan, found: dict[str, Any]) -> None:
    for update in plan.pageUpdates:
        page = found.get(update.pageId.strip().lower()) if is_valid_uuid(update.pageId.strip()) else None
        if page is None:
            # Hallucinated, truncated, or another scope's page: dropped, never written, never fatal.
            res.result.dropped_invalid_ids += 1
            continue
        entry = page_entry(res, page_id=str(page.id), page_type=page.type, slug=page.slug, title=page.title,
                           summary=None, mode="update", keep_title=True)
        add_aliases(entry, update.aliases)
        res.merge_records += [planner_record(entry.type, entry.page_id, update.aliases)] if update.aliases else []
        recase_title(entry, update.aliases)
        existing = res.lookups.sections.get(str(page.id), {})
        for section in update.sections:
            add_writer_task(res, entry, current=existing.get(section.slug), slug=section.slug, heading="",
                            proposed=strip_wikilinks(section.proposed_body_md).strip(),
                            refs=res.cite(section.source_refs), additive=section.mode == "add")


def section_refs(res: Resolution, section: NewSection, page_refs: list[str]) -> list[str]:
    """A proposed page's section cites what it cites itself, or, when it cites nothing, the page's
    citations (each section copies them: see `add_section`)."""
    return res.cite(section.source_refs) if section.source_refs else page_refs


def _proposal_summary(summary: str | None, sections: list[NewSection]) -> str | None:
    """The proposal's summary, else its lead section's first sentence (what the page's summary will be)."""
    if summary and summary.strip():
        return summary
    lead = next((s for s in sections if s.slug in ("overview", "summary", "context") and s.body_md.strip()), None)
    return first_sentence(strip_wikilinks(lead.body_md)) if lead else None


def _count_merge(res: Resolution, match: Match) -> None:
    if match.verdict.rung is Rung.EXACT:
        res.result.alias_dedup_merged += 1
    elif match.verdict.rung is Rung.SIMILAR:
        res.result.fuzzy_dedupe_merges += 1
    elif match.verdict.confident:
        res.result.ladder_merges += 1
    else:
        res.result.judged_merges += 1


def _accept(res: Resolution, proposal: Proposal, match: Match, candidate_id: str, candidate_side: MergeSide,
            candidate_refs: list[str] | None = None) -> bool:
    """Whether the proposal merges into this match: a confident rung does; an ambiguous one only when
    the judge said they are one thing."""
    if match.verdict.confident:
        res.merge_records.append(merge_record(proposal.type, proposal.slug, proposal.names, candidate_id,
                                              match.verdict, None))
        return True
    key = pair_key(proposal.type, proposal.slug, candidate_id)
    first_time = all(asked.key != key for asked in res.judgement.asked)
    decision = res.judgement.decide(AskedMerge(
        key=key, rung=match.verdict.rung, detail=match.verdict.detail, proposal=proposal.side(),
        proposal_refs=list(proposal.refs), candidate=candidate_side, candidate_page_id=candidate_id,
        candidate_refs=candidate_refs or []))
    if first_time:
        res.merge_records.append(merge_record(proposal.type, proposal.slug, proposal.names, candidate_id,
                                              match.verdict, res.judgement.decisions.get(key)))
    # A pair met twice (a stored page, then the same page as an entry of this plan) counts once.
    if decision is None and first_time:
        res.result.unjudged_merge_pairs += 1
    elif decision is False and first_time:
        res.result.judged_apart += 1
    return bool(decision)


async def _merge_target(conn: AsyncConnection, res: Resolution, proposal: Proposal) -> Candidate | None:
    """The stored page a proposal should merge into, the best the ladder accepts, counted by rung;
    None when there is none, or when the best is the proposal's own page (an ordinary update)."""
    if not any(normalize_alias(name) for name in proposal.names):
        return None
    found = await candidates_of(conn, res, proposal.names)
    for match in ranked_matches(proposal.name_set(), [(c, c.names()) for c in found]):
        candidate: Candidate = match.candidate
        if (candidate.type, candidate.slug) == (proposal.type, proposal.slug):
            return None
        side = MergeSide(title=candidate.title, type=candidate.type, aliases=candidate.aliases,
                         summary=candidate.summary)
        if _accept(res, proposal, match, candidate.id, side):
            _count_merge(res, match)
            return candidate
    return None


def _planned_merge_target(res: Resolution, proposal: Proposal) -> ResolvedPage | None:
    """A page proposed (or updated) earlier in the same plan that this proposal is a variant of
    ("Shinjuku Gyoen National Garden" and "...Gardens" proposed together): the same ladder as against
    the database, over pages of the proposal's type."""
    entries = [e for e in res.pages if e.type == proposal.type and e.slug != proposal.slug]
    named = [(e, NameSet(type=e.type, names=[e.title, *e.aliases], summary=e.summary)) for e in entries]
    for match in ranked_matches(proposal.name_set(), named):
        entry: ResolvedPage = match.candidate
        direct = [s for s in entry.sections if isinstance(s, DirectSection)]
        side = MergeSide(title=entry.title, type=entry.type, aliases=entry.aliases, summary=entry.summary,
                         evidence=[s.body_md[:PROPOSAL_EVIDENCE_CHARS] for s in direct if s.body_md.strip()])
        refs = list(dict.fromkeys(ref for s in direct for ref in s.source_refs))
        if _accept(res, proposal, match, entry.page_id, side, refs):
            _count_merge(res, match)
            return entry
    return None


async def _target_entry(conn: AsyncConnection, res: Resolution, proposal: Proposal) -> ResolvedPage:
    """The page entry a proposed page lands in: a merge target, the same slug, or a new page (an
    operator's merge sends a merged page's slug on; a name taken elsewhere gets its city)."""
    proposal = await proposal_as_resolved(conn, res.tenant, res.owner, proposal)
    page_type, slug, title = proposal.type, proposal.slug, proposal.title
    aliases = list(proposal.aliases)
    hit = await _merge_target(conn, res, proposal)
    if hit is None:
        planned = _planned_merge_target(res, proposal)
        if planned is not None:
            add_aliases(planned, [title, *aliases])
            return planned
    if hit is not None:
        entry = page_entry(res, page_id=hit.id, page_type=hit.type, slug=hit.slug, title=hit.title,
                           summary=proposal.summary, mode="merge", keep_title=True)
        add_aliases(entry, [title, *aliases])
        recase_title(entry, [title, *aliases])
        return entry
    existing_page = await page_by_type_slug(conn, res, page_type, slug)
    mode: PageMode
    if existing_page is None:
        page_id, mode = str(deterministic_page_id(res.tenant, res.owner, page_type, slug)), "create"
        if (page_type, slug) not in res.page_by_key:
            res.result.new_pages_planned += 1
    else:
        page_id, mode = str(existing_page.id), "update"
    entry = page_entry(res, page_id=page_id, page_type=page_type, slug=slug, title=title.strip(),
                       summary=proposal.summary, mode=mode, keep_title=False)
    add_aliases(entry, [*seed_aliases_for_title(title), *aliases])
    return entry


async def _add_proposed_sections(conn: AsyncConnection, res: Resolution, entry: ResolvedPage,
                                 sections: list[NewSection], refs_of: Callable[[NewSection], list[str]]) -> None:
    existing = {} if entry.mode == "create" else await sections_of(conn, res, entry.page_id)
    for section in sections:
        add_section(res, entry, existing, slug=section.slug, heading=section.heading, body=section.body_md,
                    refs=refs_of(section))
    if not entry.summary:
        # Pages need a one-line summary (search, rollups, the summary-based parent expander).
        lead = next((s for s in sections if s.slug in ("overview", "summary", "context") and s.body_md.strip()), None)
        entry.summary = first_sentence(strip_wikilinks(lead.body_md)) if lead else None


async def _resolve_new_page(conn: AsyncConnection, res: Resolution, proposal: NewPage) -> None:
    slug = _new_page_slug(proposal)
    page_refs = res.cite(proposal.source_refs)
    refs = [*page_refs, *(ref for section in proposal.sections for ref in res.cite(section.source_refs))]
    entry = await _target_entry(conn, res, Proposal(
        type=proposal.type, slug=slug, title=proposal.title, aliases=tuple(proposal.aliases),
        summary=_proposal_summary(proposal.summary, proposal.sections),
        bodies=tuple(s.body_md for s in proposal.sections), refs=tuple(dict.fromkeys(refs))))
    res.redirect(proposal.type, [slug, proposal.slug.strip()], entry)
    await _add_proposed_sections(conn, res, entry, proposal.sections,
                                 lambda section: section_refs(res, section, page_refs))


# ------------------------------------------------------------------------------------------ mentions


async def _resolve_promotions(conn: AsyncConnection, res: Resolution, plan: Plan) -> None:
    ids = [p.mentionId.strip().lower() for p in plan.promotions if is_valid_uuid(p.mentionId.strip())]
    rows = {}
    if ids:
        rows = {str(row.id): row for row in await conn.execute(text("""
            SELECT id, alias, alias_normalized, mention_count, last_seen_at, sample_contexts, suggested_type
            FROM wiki_unresolved_mentions
            WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'open' AND id = ANY(CAST(:ids AS uuid[]))
        """), {"tenant": res.tenant, "owner": res.owner, "ids": ids})}
    promoted: set[str] = set()
    for promotion in plan.promotions:
        mention = rows.get(promotion.mentionId.strip().lower())
        if mention is None or str(mention.id) in promoted:
            res.result.dropped_invalid_ids += 1
            continue
        promoted.add(str(mention.id))
        # New sightings only; the sections' citations are checked (and bad ones counted) when they are added.
        cited = [ref for s in promotion.sections for ref in cited_memory_ids(s.source_refs, res.batch_ids)]
        known = {str(c.get("source_ref")) for c in (mention.sample_contexts or []) if isinstance(c, dict)}
        new_sightings = [ref for ref in dict.fromkeys(cited) if ref not in known]
        last_seen = res.now if new_sightings else mention.last_seen_at
        if not promotion_allowed(mention.mention_count + len(new_sightings), last_seen, res.now):
            # Not enough evidence yet: the sightings still count, as mentions.
            res.result.promotions_refused += 1
            for ref in new_sightings:
                res.mentions.append(MentionSighting(alias=mention.alias, alias_normalized=mention.alias_normalized,
                                                    suggested_type=promotion.type, context=promotion.reason or "",
                                                    source_ref=ref))
            continue
        slug = (slugify_title(promotion.title) or slugify_title(promotion.slug)
                or mention.alias_normalized.replace(" ", "-"))
        # The mention's held sightings are memories of this scope that named it, cited when they were
        # compiled: a promotion may cite them even when none is in this batch (a lint-triggered compile).
        held = frozenset(str(c["source_ref"]).strip().lower() for c in (mention.sample_contexts or [])
                         if isinstance(c, dict) and c.get("source_ref"))
        # A promoted name may be a variant of a page that already exists: merge, as for new pages.
        entry = await _target_entry(conn, res, Proposal(
            type=promotion.type, slug=slug, title=promotion.title, aliases=(mention.alias,),
            summary=_proposal_summary(None, promotion.sections), bodies=tuple(s.body_md for s in promotion.sections),
            refs=tuple(dict.fromkeys([*cited, *sorted(held)]))))

        def cite_held(section: NewSection, held: frozenset[str] = held) -> list[str]:
            return res.cite(section.source_refs, held)

        await _add_proposed_sections(conn, res, entry, promotion.sections, cite_held)
        res.redirect(promotion.type, [slug, promotion.slug.strip()], entry)
        res.mark_promoted.append(MentionPromotion(mention_id=str(mention.id),
                                                  alias_normalized=mention.alias_normalized, page_id=entry.page_id))


async def _revisit_mentions(conn: AsyncConnection, res: Resolution, plan: Plan) -> None:
    """Open mentions the plan's pages now resolve (store/mention_revisits.py), folded into them."""
    skip = {p.mention_id for p in res.mark_promoted} | {normalize_alias(m.alias) for m in plan.unresolvedMentions}
    # New evidence: a page created or merged into, or new names for a page (an update adds its aliases).
    named = [entry for entry in res.pages if entry.mode in ("create", "merge") or entry.aliases]
    for fold in await mention_folds(conn, res.tenant, res.owner, named, skip, res.judgement):
        existing = {} if fold.entry.mode == "create" else await sections_of(conn, res, fold.entry.page_id)
        add_section(res, fold.entry, existing, slug=fold.slug, heading="", body=fold.body, refs=fold.refs)
        res.mark_promoted.append(fold.promotion)
        res.merge_records.append(fold.record)


def _resolve_mentions(res: Resolution, plan: Plan) -> None:
    for mention in plan.unresolvedMentions:
        normalized = normalize_alias(mention.alias)
        if not normalized:
            continue
        cited = res.cite([mention.source_ref]) if mention.source_ref else []
        res.mentions.append(MentionSighting(alias=mention.alias.strip(), alias_normalized=normalized,
                                            suggested_type=mention.suggestedType, context=mention.context.strip(),
                                            source_ref=cited[0] if cited else None))
