"""The scripted planner and section writer: plans from structured hints, with no model.

It stands in for Claude so the whole product runs offline with the same output every time. It reads
each memory's metadata hints (entities, place, journal) or, without them, the names its text gives
(planners/text_entities.py), and produces the planner contract (`domain.plan.Plan`): page updates
with new aliases, new pages, unresolved mentions, promotions, page links, and new-page proposals
the database resolver merges. A person's page has a section per theme (planners/scripted/themes.py).

Sections are condensed, never appended to (planners/scripted/condense.py): a new page's sections
are written from the memories of its batch (and a promoted mention's held sightings), and the writer
rebuilds a section from every memory it cites, so it cites exactly what it was written from. Titles
take the best-attested spelling: the most frequent properly cased one.

Determinism rules: subjects are visited in memory order, then name order; nothing iterates a set;
no clock is read (the 30-day window is measured from when the newest memory of the batch happened).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from domain.aliases import best_attested, is_properly_cased, normalize_alias, slugify_title, title_in_city
from domain.context import CandidatePage, MemoryRecord, OpenMention, PlannerContext
from domain.guards import unlinkify
from domain.kinds import is_person_kind
from domain.line_formats import address_line, count_line, dated_line, visited_on_line
from domain.plan import (
    NewPage,
    NewSection,
    PageLink,
    PageUpdate,
    Plan,
    Promotion,
    SectionUpdate,
    UnresolvedMention,
)
from domain.promotion import PROMOTION_MIN_SIGHTINGS, promotion_allowed
from domain.resolved_plan import SectionTask
from planners.memory_text import (
    as_utc,
    clean,
    first_sentence,
    humanize,
    memory_date,
    sentence,
    title_case,
    unique,
    with_article,
)
from planners.scripted.condense import condensed_body, reason_clause
from planners.scripted.held_mentions import matching_mention
from planners.scripted.matching import fits, recognised_page
from planners.scripted.place_summary import place_summary
from planners.scripted.subjects import Sighting, Subject, collect_subjects, known_names, place_of, side_of
from planners.scripted.supersession import mark_plan
from planners.scripted.themes import THEME_SLUGS, is_themed, log_groups, theme_heading
from planners.telling import telling_quote
from planners.templates import section_template

# A page needs this many memories of one batch before the planner commits to it (the leaf prompt's
# "at least two records reinforce it"); a single sighting is held as an unresolved mention instead.
NEW_PAGE_MIN_MEMORIES = 2

# The section a page update adds to, per page type.
UPDATE_SECTION_BY_TYPE = {"entity": "notes", "topic": "highlights", "decision": "consequences"}
# Sections that say what a page is, written once from metadata: the writer keeps what is there.
STABLE_SECTIONS = frozenset({"overview", "summary", "decision"})
Bullet = tuple[str, str]  # (markdown line, id of the memory it came from)


# --------------------------------------------------------------------------- summaries and sections


def _summary_of(subject: Subject, page_type: str, title: str) -> str:
    """One factual sentence from metadata only (never from memory prose)."""
    if page_type == "decision":
        return sentence(f"Decision: {title}")
    if subject.kind == "trip":
        return sentence(f"Trip: {title}")
    if subject.kind == "city":
        return sentence(f"City: {title}")
    place = subject.place_metadata()
    if place is not None:
        return place_summary(subject.kind, place)
    if subject.kind:
        return sentence(with_article(subject.kind))
    return sentence(f"Topic: {title}") if page_type == "topic" else "Mentioned in the agent's memories."


def _beyond_summary(subject: Subject) -> str:
    """What a new page's lead section says besides its summary (shown above it): the place's address."""
    place = subject.place_metadata() or {}
    address = clean(place.get("address"))
    return address_line(address) if address else ""


def _section_memories(subject: Subject) -> list[MemoryRecord]:
    return [sighting.memory for sighting in subject.sightings]


def _visit_memories(subject: Subject) -> list[MemoryRecord]:
    return [sighting.memory for sighting in subject.sightings if sighting.is_place]


def _reason_memories(subject: Subject) -> list[MemoryRecord]:
    return [sighting.memory for sighting in subject.sightings if reason_clause(sighting.memory.content)]


def _refs(memories: list[MemoryRecord]) -> list[str]:
    return unique(str(memory.id) for memory in memories)


def _heading(page_type: str, slug: str) -> str:
    template = section_template(page_type, slug)
    return template.heading if template else (theme_heading(slug) or humanize(slug))


def _new_section(page_type: str, slug: str, body: str, refs: list[str]) -> NewSection | None:
    if not body.strip():
        return None
    return NewSection(slug=slug, heading=_heading(page_type, slug), body_md=body, source_refs=refs)


def _condensed(page_type: str, slug: str, title: str, memories: list[MemoryRecord]) -> NewSection | None:
    return _new_section(page_type, slug, condensed_body(page_type, slug, title, memories) or "", _refs(memories))


@dataclass
class _SectionDraft:
    """What a new page's sections are written from: its summary and the memories behind each section."""

    summary: str  # "" when there is nothing to summarise from (lint promotions)
    summary_refs: list[str]
    notes: list[MemoryRecord]
    visits: list[MemoryRecord] = field(default_factory=list)
    rationale: list[MemoryRecord] = field(default_factory=list)
    # Lines of held contexts whose memories could not be read (quotes only): merged as written.
    quoted: list[Bullet] = field(default_factory=list)
    # The lead section (overview, summary): the summary itself where the page takes its summary from it
    # (promotions), else only what the summary does not say already, and no lead section when that is nothing.
    lead: str | None = None
    themes: list[tuple[str, list[MemoryRecord]]] = field(default_factory=list)  # a person's, by theme


def _build_sections(page_type: str, title: str, draft: _SectionDraft) -> list[NewSection]:
    """A new page's sections by type: entity → overview, notes (, visits); topic → summary,
    highlights; decision → context, decision, rationale. Empty sections are left out."""
    log_slug = {"entity": "notes", "topic": "highlights", "decision": "context"}[page_type]
    log = _condensed(page_type, log_slug, title, draft.notes)
    if draft.quoted and log is None:
        body, refs = _merge_bullets(draft.quoted)
        log = _new_section(page_type, log_slug, body, refs)
    if page_type == "decision":
        candidates = [
            log,
            _new_section(page_type, "decision", sentence(title), draft.summary_refs),
            _condensed(page_type, "rationale", title, draft.rationale),
        ]
    elif page_type == "topic":
        lead = draft.summary if draft.lead is None else draft.lead
        candidates = [_new_section(page_type, "summary", lead, draft.summary_refs), log]
    else:
        lead = draft.summary if draft.lead is None else draft.lead
        candidates = [
            _new_section(page_type, "overview", lead, draft.summary_refs),
            log,
            *(_condensed(page_type, slug, title, memories) for slug, memories in draft.themes),
            _condensed(page_type, "visits", title, draft.visits),
        ]
    return [section for section in candidates if section is not None]


def _draft_from_subject(subject: Subject, page_type: str, title: str) -> _SectionDraft:
    logs = _log_memories(subject, page_type, [])
    return _SectionDraft(summary=_summary_of(subject, page_type, title), summary_refs=subject.memory_ids,
                         notes=logs[0][1] if logs and logs[0][0] not in THEME_SLUGS else [],
                         visits=_visit_memories(subject), rationale=_reason_memories(subject),
                         themes=[(slug, memories) for slug, memories in logs if slug in THEME_SLUGS])


def _log_memories(subject: Subject, page_type: str, sections: list[tuple[str, str]]) -> list[tuple[str, list[MemoryRecord]]]:
    return log_groups(_section_memories(subject), UPDATE_SECTION_BY_TYPE[page_type], person=page_type == "entity"
                      and is_person_kind(subject.kind) and is_themed(sections, len(subject.sightings)))


def _merge_bullets(bullets: list[Bullet]) -> tuple[str, list[str]]:
    """Distinct lines in order and the ids of every memory behind a line (held quotes only)."""
    return "\n".join(unique(line for line, _ in bullets)), unique(ref for _, ref in bullets if ref)


def _proposal(memories: list[MemoryRecord], line: Callable[[MemoryRecord], str]) -> str:
    """A page update's proposed lines, newest first, after a count of them: the writer rebuilds the
    section from every memory it cites, and the count makes the proposal differ from any stored body
    (a proposal too close to the body would only be cited, not written)."""
    ordered = sorted(memories, key=lambda m: (as_utc(m.created_at), str(m.id)), reverse=True)
    return "\n".join([count_line(len(ordered)), *unique(line(memory) for memory in ordered)])


def _slug_for(title: str) -> str:
    # The apply path stores slugify_title(title) and falls back to the planner's slug when that is
    # empty ("東京"); the normalised title is the fallback, dashed.
    return slugify_title(title) or normalize_alias(title).replace(" ", "-") or "page"


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class _PageRef:
    type: str
    slug: str
    title: str


@dataclass
class _PendingUpdate:
    page: CandidatePage
    memories: dict[str, list[MemoryRecord]] = field(default_factory=dict)  # section slug -> memories
    aliases: list[str] = field(default_factory=list)

    def add(self, slug: str, memories: list[MemoryRecord]) -> None:
        section = self.memories.setdefault(slug, [])
        section += [m for m in memories if all(m.id != known.id for known in section)]


def _candidate_names(page: CandidatePage) -> set[str]:
    return {key for key in (normalize_alias(raw) for raw in (page.title, *page.aliases)) if key}


def _matching_page(subject: Subject, pages: list[CandidatePage]) -> CandidatePage | None:
    # Like a model reading the candidates: a page by a name the memories wrote, of a compatible kind
    # (the friend Austin is not the city page), else a page the resolution ladder says it is.
    side = side_of(subject, _summary_of(subject, subject.type, subject.title))
    written = {normalize_alias(sighting.spelling) for sighting in subject.sightings}
    hits = [p for p in pages if _candidate_names(p) & written and fits(side, subject.kind, p)]
    same_type = [page for page in hits if page.type == subject.type]
    return next(iter(same_type or hits), None) or recognised_page(side, subject.kind, pages)


def _held_refs(mention: OpenMention) -> list[str]:
    return unique(str(c.get("source_ref") or "").strip().lower() for c in mention.sample_contexts
                  if isinstance(c, dict) and c.get("source_ref"))


class _PlanDraft:
    def __init__(self, ctx: PlannerContext) -> None:
        self.ctx = ctx
        self.newest = max((as_utc(m.created_at) for m in ctx.memories), default=None)
        self.held = {str(m.id): m for m in ctx.held_memories}
        self.known = known_names(ctx)
        self.updates: dict[str, _PendingUpdate] = {}
        self.new_pages: list[NewPage] = []
        self.mentions: list[UnresolvedMention] = []
        self.promotions: list[Promotion] = []
        self.links: list[PageLink] = []
        self.link_keys: list[tuple[str, str, str, str]] = []
        self.consumed_mention_ids: list[str] = []
        # Where each subject lives after the plan applies (by position in the subject list).
        self.refs: dict[int, _PageRef] = {}
        self.titled: dict[tuple[str, str], Subject] = {}  # (type, slug) of a page this plan proposes -> its subject

    # ---- subjects

    def holders(self, subjects: list[Subject]) -> dict[int, OpenMention]:
        """The subject (by position) each held name goes to: the first it matches that is not a place
        elsewhere (its memories' cities none of the held sightings'). One subject per held name, and
        its name is claimed first, so a namesake in another city is the one titled with its city."""
        taken: dict[str, int] = {}
        for index, subject in enumerate(subjects):
            mention = matching_mention(subject, self.ctx.open_mentions)
            if mention is None or str(mention.id) in taken:
                continue
            cities = {normalize_alias(str(place_of(self.held[ref]).get("city") or ""))
                      for ref in _held_refs(mention) if ref in self.held} - {""}
            if cities and subject.place_cities - {""} and not subject.place_cities & cities:
                continue
            taken[str(mention.id)] = index
            self.titled.setdefault((mention.suggested_type or subject.type, _slug_for(subject.title)), subject)
        by_id = {str(m.id): m for m in self.ctx.open_mentions}
        return {index: by_id[mention_id] for mention_id, index in taken.items()}

    def place_subject(self, index: int, subject: Subject, mention: OpenMention | None) -> None:
        page = _matching_page(subject, self.ctx.candidate_pages)
        if page is not None:
            self._update_page(subject, page)
            self.refs[index] = _PageRef(page.type, page.slug, page.title)
            if mention is not None:
                # The name was held before its page existed: its held sightings belong to the page.
                self.consumed_mention_ids.append(str(mention.id))
                self._promote_into(subject, mention, page)
            return
        if mention is not None:
            self.consumed_mention_ids.append(str(mention.id))
            ref = self._promote_or_hold(subject, mention)
        elif len(subject.sightings) >= NEW_PAGE_MIN_MEMORIES or subject.type == "decision":
            ref = self._create_page(subject)
        else:
            self._hold(subject)
            ref = None
        if ref is not None:
            self.refs[index] = ref

    def _update_page(self, subject: Subject, page: CandidatePage) -> None:
        pending = self.updates.setdefault(str(page.id), _PendingUpdate(page))
        for slug, memories in _log_memories(subject, page.type, [(s.slug, s.body_md) for s in page.sections]):
            pending.add(slug, memories)
        visits = _visit_memories(subject)
        if page.type == "entity" and visits:
            pending.add("visits", visits)
        known = _candidate_names(page) | {normalize_alias(a) for a in pending.aliases}
        pending.aliases.extend(subject.variant_spellings(known))
        # A title stored in the wrong case ("CONTRAMAR") is offered its best-attested properly cased
        # form; the resolver takes it when it names the page the same way.
        better = subject.title
        if (not is_properly_cased(page.title) and is_properly_cased(better)
                and normalize_alias(better) == normalize_alias(page.title) and better not in pending.aliases):
            pending.aliases.append(better)

    def _with_held(self, subject: Subject, mention: OpenMention) -> Subject | None:
        """The subject as the held sightings and this batch's together tell it; None when none of the
        held memories can be read (the quotes alone stand for them)."""
        held = sorted((self.held[ref] for ref in _held_refs(mention) if ref in self.held),
                      key=lambda m: (as_utc(m.created_at), str(m.id)))
        if not held:
            return None
        batch = _section_memories(subject)
        combined = collect_subjects([*[m for m in held if m not in batch], *batch], self.known)
        names = subject.names | {mention.alias_normalized}
        return next((s for s in combined if s.names & names), None)

    def _promotable(self, subject: Subject, mention: OpenMention) -> bool:
        sightings = mention.mention_count + len(subject.sightings)
        return self.newest is not None and promotion_allowed(sightings, as_utc(mention.last_seen_at), self.newest)

    def _promote_or_hold(self, subject: Subject, mention: OpenMention) -> _PageRef | None:
        if not self._promotable(subject, mention):
            self._hold(subject)
            return None
        full = self._with_held(subject, mention)
        if full is not None:
            title = full.title
        else:
            # Only quotes of the held sightings: the held spelling stands for each of them.
            held = clean(mention.alias)
            title = best_attested([held] * mention.mention_count + subject.spellings if held else subject.spellings)
        page_type = mention.suggested_type or subject.type
        title = self._own_title(full or subject, page_type, title)
        slug = _slug_for(title)
        draft = _draft_from_subject(full or subject, page_type, title)
        if full is None:
            draft.quoted = _quoted(mention)
        self.promotions.append(
            Promotion(
                mentionId=str(mention.id),
                reason=f"Seen {mention.mention_count + len(subject.sightings)} times "
                       f"({len(subject.sightings)} in this batch), last within 30 days.",
                type=page_type,
                title=title,
                slug=slug,
                sections=_build_sections(page_type, title, draft),
            )
        )
        return _PageRef(page_type, slug, title)

    def _promote_into(self, subject: Subject, mention: OpenMention, page: CandidatePage) -> None:
        """Promote a mention into the page that already carries its name: the resolver merges it there,
        so the page cites the held sightings and the mention stops being open."""
        if not self._promotable(subject, mention):
            return
        full = self._with_held(subject, mention) or subject
        draft = _draft_from_subject(full, page.type, page.title)
        if full is subject:
            draft.quoted = _quoted(mention)
        sections = [s for s in _build_sections(page.type, page.title, draft) if s.slug not in STABLE_SECTIONS]
        self.promotions.append(Promotion(
            mentionId=str(mention.id), reason=f"Held name of the existing page {page.title}.", type=page.type,
            title=page.title, slug=page.slug, sections=sections))

    def _own_title(self, subject: Subject, page_type: str, title: str) -> str:
        """`title`, unless another subject of this batch proposes a page of that name: then a place is
        titled with its city ("Piari Coffee (Tucson)" beside "Piari Coffee" in Raleigh), as the resolver
        titles a place whose name a page placed elsewhere already holds, so one name in two cities makes
        two pages whether their memories come in one batch or in two."""
        key = (page_type, _slug_for(title))
        if self.titled.setdefault(key, subject) is subject:
            return title
        city = title_case(clean((subject.place_metadata() or {}).get("city")))
        if not city or normalize_alias(city) in self.titled[key].place_cities:
            return title
        own = title_in_city(title, city)
        self.titled.setdefault((page_type, _slug_for(own)), subject)
        return own

    def _create_page(self, subject: Subject) -> _PageRef:
        title = self._own_title(subject, subject.type, subject.title)
        slug = _slug_for(title)
        draft = _draft_from_subject(subject, subject.type, title)
        draft.lead = _beyond_summary(subject)
        self.new_pages.append(
            NewPage(
                type=subject.type,
                slug=slug,
                title=title,
                summary=draft.summary,
                aliases=subject.variant_spellings({normalize_alias(title), normalize_alias(subject.title)}),
                source_refs=subject.memory_ids,
                sections=_build_sections(subject.type, title, draft),
            )
        )
        return _PageRef(subject.type, slug, title)

    def _hold(self, subject: Subject) -> None:
        for sighting in subject.sightings:
            self.mentions.append(
                UnresolvedMention(
                    alias=sighting.spelling,
                    suggestedType=subject.type,
                    context=telling_quote(sighting.memory.content) or first_sentence(sighting.memory.content),
                    source_ref=sighting.memory_id,
                )
            )

    # ---- lint-triggered promotions

    def add_lint_promotions(self) -> None:
        by_id = {str(m.id): m for m in self.ctx.open_mentions}
        for mention_id in unique(str(i) for i in self.ctx.promotion_candidate_ids):
            mention = by_id.get(mention_id)
            if mention is None or mention.mention_count < PROMOTION_MIN_SIGHTINGS:
                continue
            if mention_id in self.consumed_mention_ids:
                continue  # the batch already decided about this mention
            self.promotions.append(self._lint_promotion(mention))

    def _lint_promotion(self, mention: OpenMention) -> Promotion:
        """A promotion built from the mention's held sightings alone (a lint compile may have no
        memories); into the page that already carries its name, when there is one."""
        page = next((p for p in self.ctx.candidate_pages if mention.alias_normalized in _candidate_names(p)), None)
        held = sorted((self.held[ref] for ref in _held_refs(mention) if ref in self.held),
                      key=lambda m: (as_utc(m.created_at), str(m.id)))
        subject = next((s for s in collect_subjects(held, self.known) if mention.alias_normalized in s.names), None)
        title = page.title if page is not None else (subject.title if subject is not None
                                                     else clean(mention.alias) or mention.alias_normalized)
        page_type = page.type if page is not None else (mention.suggested_type or "entity")
        if subject is not None:
            draft = _draft_from_subject(subject, page_type, title)
            draft.summary = "" if page is not None else draft.summary
        else:
            draft = _SectionDraft(summary="", summary_refs=[], notes=[], quoted=_quoted(mention))
        sections = _build_sections(page_type, title, draft)
        if page is not None:
            sections = [s for s in sections if s.slug not in STABLE_SECTIONS]
        return Promotion(
            mentionId=str(mention.id),
            reason=f"Open mention seen {mention.mention_count} times; flagged by the lint sweep.",
            type=page_type,
            title=title,
            slug=page.slug if page is not None else _slug_for(title),
            sections=sections,
        )

    # ---- links

    def add_links(self, subjects: list[Subject]) -> None:
        present: dict[int, list[tuple[int, Sighting]]] = {}
        for index, subject in enumerate(subjects):
            for sighting in subject.sightings:
                present.setdefault(sighting.memory_index, []).append((index, sighting))
        for memory_index in sorted(present):
            self._link_memory(subjects, present[memory_index])

    def _link_memory(self, subjects: list[Subject], present: list[tuple[int, Sighting]]) -> None:
        def refs_where(test: Callable[[int, Sighting], bool]) -> list[tuple[int, _PageRef]]:
            return [(i, self.refs[i]) for i, s in present if i in self.refs and test(i, s)]

        cities = refs_where(lambda _i, s: s.is_city)
        journals = refs_where(lambda _i, s: s.is_journal)
        places = refs_where(lambda _i, s: s.is_place)
        entities = refs_where(lambda i, s: subjects[i].type == "entity" and not (s.is_city or s.is_journal))
        people = refs_where(lambda i, _s: subjects[i].is_person)
        for _, place in places:
            for _, city in cities:
                self._link(place, city, f"Located in {city.title}.")
        for _, entity in entities:
            for _, journal in journals:
                self._link(entity, journal, f"Part of {journal.title}.")
        for _, person in people:
            for _, place in places:
                self._link(person, place, f"Mentioned together with {place.title}.")

    def _link(self, source: _PageRef, target: _PageRef, context: str) -> None:
        if (source.type, source.slug) == (target.type, target.slug):
            return
        key = (source.type, source.slug, target.type, target.slug)
        if key in self.link_keys:
            return
        self.link_keys.append(key)
        self.links.append(
            PageLink(
                fromType=source.type,
                fromSlug=source.slug,
                toType=target.type,
                toSlug=target.slug,
                context=context,
            )
        )

    # ---- result

    def page_updates(self) -> list[PageUpdate]:
        updates: list[PageUpdate] = []
        for pending in self.updates.values():
            sections = [
                SectionUpdate(
                    slug=slug,
                    proposed_body_md=_proposal(memories, _visit_line if slug == "visits" else lambda m: dated_line(
                        memory_date(m), telling_quote(m.content) or "mentioned.")),
                    # Every memory of the batch about the page is cited, even one that says what the page
                    # already says: the writer rebuilds the section from all it cites.
                    source_refs=_refs(memories),
                    rationale="New memories in this batch.",
                )
                for slug, memories in pending.memories.items()
                if memories
            ]
            if sections or pending.aliases:
                updates.append(
                    PageUpdate(pageId=str(pending.page.id), sections=sections, aliases=pending.aliases)
                )
        return updates

    def plan(self) -> Plan:
        return Plan(
            pageUpdates=self.page_updates(),
            newPages=self.new_pages,
            unresolvedMentions=self.mentions,
            promotions=self.promotions,
            pageLinks=self.links,
        )


def _visit_line(memory: MemoryRecord) -> str:
    return visited_on_line(memory_date(memory))


def _quoted(mention: OpenMention) -> list[Bullet]:
    """The held contexts as lines, oldest first (they are stored newest first), with their memories."""
    bullets: list[Bullet] = []
    for context in reversed(mention.sample_contexts):
        line = first_sentence(str(context.get("quote") or "")) if isinstance(context, dict) else ""
        if line:
            # The ref is a memory id: clean would strip it as an id leaking into prose.
            bullets.append((f"- {line}", str(context.get("source_ref") or "").strip()))
    return bullets


def scripted_plan(ctx: PlannerContext) -> Plan:
    """The leaf plan for one batch, from metadata hints alone. Same context in, same plan out."""
    draft = _PlanDraft(ctx)
    subjects = collect_subjects(ctx.memories, draft.known)
    holders = draft.holders(subjects)
    for index, subject in enumerate(subjects):
        draft.place_subject(index, subject, holders.get(index))
    draft.add_lint_promotions()
    draft.add_links(subjects)
    return mark_plan(draft.plan(), ctx.candidate_pages)


def scripted_rewrite_section(task: SectionTask, cited: list[MemoryRecord]) -> str:
    """The scripted section writer: a log, visits or rationale section is rebuilt from every memory it
    cites (`cited`: those cited before and the task's); a summary keeps its body; anything else (or a
    section whose memories cannot be read) merges the proposal's lines into the body."""
    if task.slug in STABLE_SECTIONS and (task.existing_body or "").strip():
        return (task.existing_body or "").strip()
    if cited:
        body = condensed_body(task.page_type, task.slug, task.page_title, cited)
        if body is not None:
            return body
    return scripted_write_section(task.existing_body, task.proposed_body)


def scripted_write_section(existing_body: str | None, proposed_body: str) -> str:
    """Line merge: keep the existing lines, add the proposed lines not already there. Lines are
    compared as text, links unwrapped and spaces trimmed, so a line the apply step linkified is not
    added again in its plain form. Writing the same proposal twice gives the same body."""
    existing_lines = [line.rstrip() for line in (existing_body or "").strip().splitlines()]
    present = {unlinkify(line).strip() for line in existing_lines if line.strip()}
    added = [line.strip() for line in proposed_body.splitlines()
             if line.strip() and unlinkify(line).strip() not in present]
    return "\n".join([*existing_lines, *unique(added)]).strip()
