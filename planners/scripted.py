"""The scripted planner and section writer: plans from structured hints, with no model.

It stands in for Claude so the whole product runs offline (demo, tests, benchmarks) with the same
output every time. It reads the hints the memory store keeps in each memory's metadata (entities
with their type, kind and aliases; the place with its city; the journal) and produces the planner
contract (`domain.plan.Plan`) so that every branch of the apply path gets exercised: page updates
with new aliases, new pages, unresolved mentions, promotions, page links, and (through spelling
variants it does not collapse itself) new-page proposals that the database resolver merges.

Determinism rules: subjects are visited in memory order, then name order; nothing iterates a set;
no clock is read (the 30-day window is measured from the newest memory of the batch).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from domain.aliases import normalize_alias, slugify_title
from domain.context import CandidatePage, MemoryRecord, OpenMention, PlannerContext
from domain.plan import (
    PAGE_TYPES,
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
from domain.resolution import MergeSide
from planners.scripted_matching import compatible, recognised_page, same_subject, subject_side
from planners.scripted_text import (
    as_utc,
    clean,
    first_sentence,
    humanize,
    memory_date,
    most_common,
    sentence,
    sentences,
    title_case,
    truncate,
    unique,
    with_article,
)
from planners.templates import section_template

# A page needs this many memories of one batch before the planner commits to it (the leaf prompt's
# "at least two records reinforce it"); a single sighting is held as an unresolved mention instead.
NEW_PAGE_MIN_MEMORIES = 2

# The section a page update appends to, per page type.
UPDATE_SECTION_BY_TYPE = {"entity": "notes", "topic": "highlights", "decision": "consequences"}
PERSON_KINDS = ("person", "pet")
# Place types too generic to name what a place is ("Establishment in Austin").
_GENERIC_PLACE_TYPES = ("point_of_interest", "establishment", "food", "premise")

_REASON_MARKER = re.compile(r"\b(because|since|so that|in order to|to avoid)\b", re.IGNORECASE)
_LEADING_POSTCODE = re.compile(r"^[0-9][0-9A-Za-z-]*\s+")
_REGION_CODE = re.compile(r"^([A-Z]{2,4})(?:\s|$)")

Bullet = tuple[str, str]  # (markdown line, id of the memory it came from)


# --------------------------------------------------------------------------- subjects


@dataclass(frozen=True)
class _Hint:
    """One name as one memory's metadata gives it."""

    name: str
    type: str
    kind: str
    aliases: tuple[str, ...] = ()
    is_place: bool = False
    is_city: bool = False
    is_journal: bool = False

    def names(self) -> set[str]:
        return {key for key in (normalize_alias(raw) for raw in (self.name, *self.aliases)) if key}


@dataclass
class _Sighting:
    """A subject seen in one memory (a memory that names it twice is still one sighting)."""

    memory_index: int
    memory: MemoryRecord
    spelling: str
    is_place: bool
    is_city: bool
    is_journal: bool

    @property
    def memory_id(self) -> str:
        return str(self.memory.id)

    def take_roles(self, other: _Hint | _Sighting) -> None:
        self.is_place = self.is_place or other.is_place
        self.is_city = self.is_city or other.is_city
        self.is_journal = self.is_journal or other.is_journal


@dataclass(eq=False)  # identity, not field equality: merging removes one exact subject from the list
class _Subject:
    """Everything the batch says about one name, its spelling variants collapsed."""

    type: str
    kind: str
    names: set[str] = field(default_factory=set)  # normalised; only ever used for membership tests
    hint_aliases: list[str] = field(default_factory=list)
    sightings: list[_Sighting] = field(default_factory=list)

    def add(self, memory_index: int, memory: MemoryRecord, hint: _Hint) -> None:
        self.names |= hint.names()
        self.kind = self.kind or hint.kind
        self.hint_aliases.extend(hint.aliases)
        seen = next((s for s in self.sightings if s.memory_index == memory_index), None)
        if seen is not None:
            seen.take_roles(hint)
            return
        self.sightings.append(
            _Sighting(memory_index, memory, hint.name, hint.is_place, hint.is_city, hint.is_journal)
        )

    def absorb(self, other: _Subject) -> None:
        self.names |= other.names
        self.kind = self.kind or other.kind
        self.hint_aliases.extend(other.hint_aliases)
        mine = {s.memory_index: s for s in self.sightings}
        for sighting in other.sightings:
            if sighting.memory_index in mine:
                mine[sighting.memory_index].take_roles(sighting)
            else:
                self.sightings.append(sighting)
        self.sightings.sort(key=lambda s: s.memory_index)

    @property
    def spellings(self) -> list[str]:
        return [s.spelling for s in self.sightings]

    @property
    def title(self) -> str:
        return most_common(self.spellings)

    @property
    def order(self) -> tuple[int, str]:
        return (self.sightings[0].memory_index, normalize_alias(self.title))

    @property
    def memory_ids(self) -> list[str]:
        return [s.memory_id for s in self.sightings]

    @property
    def is_person(self) -> bool:
        return self.kind in PERSON_KINDS

    def place_metadata(self) -> dict[str, Any] | None:
        for sighting in self.sightings:
            if sighting.is_place:
                return _place_of(sighting.memory)
        return None

    def variant_spellings(self, known: set[str]) -> list[str]:
        """Spellings and hint aliases, as written, whose normalised form is not in `known`."""
        variants: dict[str, str] = {}
        for raw in [*self.spellings, *self.hint_aliases]:
            key = normalize_alias(raw)
            if key and key not in known and key not in variants:
                variants[key] = raw
        return list(variants.values())


def _place_of(memory: MemoryRecord) -> dict[str, Any]:
    place = (memory.metadata or {}).get("place")
    return place if isinstance(place, dict) else {}


def _entity_hints(memory: MemoryRecord, place_key: str) -> list[_Hint]:
    entities = (memory.metadata or {}).get("entities")
    hints: list[_Hint] = []
    for raw in entities if isinstance(entities, list) else []:
        if not isinstance(raw, dict):
            continue
        name = clean(raw.get("name"))
        if not normalize_alias(name):
            continue
        page_type = raw.get("type") if raw.get("type") in PAGE_TYPES else "entity"
        kind = clean(raw.get("kind")).lower()
        raw_aliases = raw.get("aliases") if isinstance(raw.get("aliases"), list) else []
        aliases = tuple(alias for alias in (clean(x) for x in raw_aliases) if alias)
        hint = _Hint(name=name, type=page_type, kind=kind, aliases=aliases)
        # The entity the memory's place names is the place: it gets visits and the city link.
        hints.append(replace(hint, is_place=bool(place_key) and place_key in hint.names()))
    return hints


def _journal_title(metadata: dict[str, Any]) -> str:
    journal = metadata.get("journal")
    if not isinstance(journal, dict):
        return ""
    title = clean(journal.get("title"))
    if title:
        return title
    # The parent expander's fallback title, so both name the same trip topic.
    journal_id = clean(journal.get("id"))
    return f"Journal {journal_id[:8]}" if journal_id else ""


def _hints_of(memory: MemoryRecord) -> list[_Hint]:
    """The names one memory's metadata offers: its entities, its place's city and its journal."""
    metadata = memory.metadata or {}
    place = _place_of(memory)
    hints = _entity_hints(memory, normalize_alias(clean(place.get("name"))))
    city = title_case(clean(place.get("city")))
    if normalize_alias(city):
        hints.append(_Hint(name=city, type="topic", kind="city", is_city=True))
    journal = _journal_title(metadata)
    if normalize_alias(journal):
        hints.append(_Hint(name=journal, type="topic", kind="trip", is_journal=True))
    return hints


def _side(subject: _Subject, summary: str) -> MergeSide:
    return subject_side(subject.title, subject.type, [*subject.spellings, *subject.hint_aliases], summary,
                        [s.memory.content for s in subject.sightings],
                        [_place_of(s.memory) for s in subject.sightings if s.is_place or s.is_city])


def _collect_subjects(memories: list[MemoryRecord]) -> list[_Subject]:
    """Group the batch's names into subjects of one page type (Austin the city, Austin the friend): one
    normalises like the other, or the resolution ladder says they name one thing ("Biscuit the dog")."""
    subjects: list[_Subject] = []
    for index, memory in enumerate(memories):
        for hint in _hints_of(memory):
            names, probe = hint.names(), _Subject(type=hint.type, kind=hint.kind)
            probe.add(index, memory, hint)
            seen = _side(probe, hint.kind)
            matching = [s for s in subjects if s.type == hint.type
                        and (s.names & names or same_subject(seen, _side(s, s.kind)))]
            if matching:
                subject = matching[0]
                for other in matching[1:]:
                    subject.absorb(other)
                    subjects.remove(other)
            else:
                subject = _Subject(type=hint.type, kind=hint.kind)
                subjects.append(subject)
            subject.add(index, memory, hint)
    return sorted(subjects, key=lambda s: s.order)


# --------------------------------------------------------------------------- summaries and sections


def _region_from_address(address: str, city: str) -> str:
    """The state/province code that follows the city in a postal address ("…, Austin, TX 78702" → "TX")."""
    parts = [part.strip() for part in address.split(",") if part.strip()]
    for index, part in enumerate(parts[:-1]):
        if _LEADING_POSTCODE.sub("", part).strip().lower() == city.lower():
            match = _REGION_CODE.match(parts[index + 1])
            return match.group(1) if match else ""
    return ""


def _place_noun(kind: str, place: dict[str, Any]) -> str:
    if kind:
        return humanize(kind)
    types = place.get("types")
    for place_type in types if isinstance(types, list) else []:
        cleaned = clean(place_type).lower()
        if cleaned and cleaned not in _GENERIC_PLACE_TYPES:
            return humanize(cleaned)
    return "Place"


def _place_summary(kind: str, place: dict[str, Any]) -> str:
    # The city stays in the sentence ("Restaurant in Austin, TX.") so the summary-based parent
    # expander can find the city even when the place's memories are not in the batch.
    noun = _place_noun(kind, place)
    city = title_case(clean(place.get("city")))
    address = clean(place.get("address"))
    if city:
        region = _region_from_address(address, city)
        return f"{noun} in {city}, {region}." if region else f"{noun} in {city}."
    if address:
        return sentence(f"{noun} at {address}")
    return f"{noun}."


def _summary_of(subject: _Subject, page_type: str, title: str) -> str:
    """One factual sentence from metadata only (never from memory prose)."""
    if page_type == "decision":
        return sentence(f"Decision: {title}")
    if subject.kind == "trip":
        return sentence(f"Trip: {title}")
    if subject.kind == "city":
        return sentence(f"City: {title}")
    place = subject.place_metadata()
    if place is not None:
        return _place_summary(subject.kind, place)
    if subject.kind:
        return sentence(with_article(subject.kind))
    return sentence(f"Topic: {title}") if page_type == "topic" else "Mentioned in the agent's memories."


def _place_lead(subject: _Subject, sighting: _Sighting) -> str:
    """On a city or trip page, a bullet leads with the place it is about, in bold, so the apply
    step can link it to the place's page (linkify_known_entities)."""
    if not (sighting.is_city or sighting.is_journal):
        return ""
    name = clean(_place_of(sighting.memory).get("name"))
    if not name or normalize_alias(name) in subject.names:
        return ""
    return f"**{name}**: "


def _note_bullets(subject: _Subject) -> list[Bullet]:
    bullets: list[Bullet] = []
    for sighting in subject.sightings:
        line = first_sentence(sighting.memory.content) or sentence(f"Mentioned {sighting.spelling}")
        bullets.append((f"- {_place_lead(subject, sighting)}{line}", sighting.memory_id))
    return bullets


def _visit_bullets(subject: _Subject) -> list[Bullet]:
    return [(f"- Visited on {memory_date(s.memory)}.", s.memory_id) for s in subject.sightings if s.is_place]


def _reason_clause(content: str) -> str:
    """The first stated reason, from its marker on ("… because parking is impossible." → "Because
    parking is impossible."), so the rationale does not repeat the context's sentence."""
    for part in sentences(content):
        marker = _REASON_MARKER.search(part)
        if marker:
            clause = part[marker.start() :]
            return sentence(truncate(clause[:1].upper() + clause[1:]))
    return ""


def _rationale_bullets(subject: _Subject) -> list[Bullet]:
    bullets: list[Bullet] = []
    for sighting in subject.sightings:
        reason = _reason_clause(sighting.memory.content)
        if reason:
            bullets.append((f"- {reason}", sighting.memory_id))
    return bullets


def _merge_bullets(bullets: list[Bullet], skip_lines: set[str] | None = None) -> tuple[str, list[str]]:
    """Distinct lines in order (minus `skip_lines`) and the ids of every memory behind a kept line."""
    skip = skip_lines or set()
    kept = [(line, ref) for line, ref in bullets if line.strip() not in skip]
    body = "\n".join(unique(line for line, _ in kept))
    return body, unique(ref for _, ref in kept if ref)


def _heading(page_type: str, slug: str) -> str:
    template = section_template(page_type, slug)
    return template.heading if template else humanize(slug)


def _new_section(page_type: str, slug: str, body: str, refs: list[str]) -> NewSection | None:
    if not body.strip():
        return None
    return NewSection(slug=slug, heading=_heading(page_type, slug), body_md=body, source_refs=refs)


@dataclass
class _SectionDraft:
    """The material of a new page's sections, whether it comes from memories or mention contexts."""

    summary: str  # "" when there is nothing to summarise from (lint promotions)
    summary_refs: list[str]
    notes: list[Bullet]
    visits: list[Bullet] = field(default_factory=list)
    rationale: list[Bullet] = field(default_factory=list)


def _build_sections(page_type: str, title: str, draft: _SectionDraft) -> list[NewSection]:
    """A new page's sections by type: entity → overview, notes (, visits); topic → summary,
    highlights; decision → context, decision, rationale. Empty sections are left out."""
    notes_body, notes_refs = _merge_bullets(draft.notes)
    if page_type == "decision":
        rationale_body, rationale_refs = _merge_bullets(draft.rationale)
        candidates = [
            _new_section(page_type, "context", notes_body, notes_refs),
            _new_section(page_type, "decision", sentence(title), draft.summary_refs),
            _new_section(page_type, "rationale", rationale_body, rationale_refs),
        ]
    elif page_type == "topic":
        candidates = [
            _new_section(page_type, "summary", draft.summary, draft.summary_refs),
            _new_section(page_type, "highlights", notes_body, notes_refs),
        ]
    else:
        visits_body, visits_refs = _merge_bullets(draft.visits)
        candidates = [
            _new_section(page_type, "overview", draft.summary, draft.summary_refs),
            _new_section(page_type, "notes", notes_body, notes_refs),
            _new_section(page_type, "visits", visits_body, visits_refs),
        ]
    return [section for section in candidates if section is not None]


def _draft_from_subject(subject: _Subject, page_type: str, title: str) -> _SectionDraft:
    return _SectionDraft(
        summary=_summary_of(subject, page_type, title),
        summary_refs=subject.memory_ids,
        notes=_note_bullets(subject),
        visits=_visit_bullets(subject),
        rationale=_rationale_bullets(subject),
    )


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
    bullets: dict[str, list[Bullet]] = field(default_factory=dict)
    aliases: list[str] = field(default_factory=list)


def _candidate_names(page: CandidatePage) -> set[str]:
    return {key for key in (normalize_alias(raw) for raw in (page.title, *page.aliases)) if key}


def _matching_page(subject: _Subject, pages: list[CandidatePage]) -> CandidatePage | None:
    # Like a model reading the candidates: a page by a name the memories wrote, of a compatible kind
    # (the friend Austin is not the city page), else a page the resolution ladder says it is.
    written = {normalize_alias(sighting.spelling) for sighting in subject.sightings}
    hits = [p for p in pages if _candidate_names(p) & written and compatible(subject.type, subject.kind, p)]
    same_type = [page for page in hits if page.type == subject.type]
    side = _side(subject, _summary_of(subject, subject.type, subject.title))
    return (same_type or hits or [None])[0] or recognised_page(side, subject.kind, pages)


def _matching_mention(subject: _Subject, mentions: list[OpenMention]) -> OpenMention | None:
    return next(
        (m for m in mentions if (m.alias_normalized or normalize_alias(m.alias)) in subject.names),
        None,
    )


class _PlanDraft:
    def __init__(self, ctx: PlannerContext) -> None:
        self.ctx = ctx
        self.newest = max((as_utc(m.updated_at) for m in ctx.memories), default=None)
        self.updates: dict[str, _PendingUpdate] = {}
        self.new_pages: list[NewPage] = []
        self.mentions: list[UnresolvedMention] = []
        self.promotions: list[Promotion] = []
        self.links: list[PageLink] = []
        self.link_keys: list[tuple[str, str, str, str]] = []
        self.consumed_mention_ids: list[str] = []
        # Where each subject lives after the plan applies (by position in the subject list).
        self.refs: dict[int, _PageRef] = {}

    # ---- subjects

    def place_subject(self, index: int, subject: _Subject) -> None:
        page = _matching_page(subject, self.ctx.candidate_pages)
        if page is not None:
            self._update_page(subject, page)
            self.refs[index] = _PageRef(page.type, page.slug, page.title)
            return
        mention = _matching_mention(subject, self.ctx.open_mentions)
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

    def _update_page(self, subject: _Subject, page: CandidatePage) -> None:
        pending = self.updates.setdefault(str(page.id), _PendingUpdate(page))
        pending.bullets.setdefault(UPDATE_SECTION_BY_TYPE[page.type], []).extend(_note_bullets(subject))
        visits = _visit_bullets(subject)
        if page.type == "entity" and visits:
            pending.bullets.setdefault("visits", []).extend(visits)
        known = _candidate_names(page) | {normalize_alias(a) for a in pending.aliases}
        pending.aliases.extend(subject.variant_spellings(known))

    def _promote_or_hold(self, subject: _Subject, mention: OpenMention) -> _PageRef | None:
        sightings = mention.mention_count + len(subject.sightings)
        if self.newest is None or not promotion_allowed(sightings, as_utc(mention.last_seen_at), self.newest):
            self._hold(subject)
            return None
        # The held spelling has been seen mention_count times, so it usually stays the title.
        held = clean(mention.alias)
        title = most_common(
            [held] * mention.mention_count + subject.spellings if held else subject.spellings
        )
        page_type = mention.suggested_type or subject.type
        slug = _slug_for(title)
        self.promotions.append(
            Promotion(
                mentionId=str(mention.id),
                reason=f"Seen {sightings} times ({len(subject.sightings)} in this batch), last within 30 days.",
                type=page_type,
                title=title,
                slug=slug,
                sections=_build_sections(page_type, title, _draft_from_subject(subject, page_type, title)),
            )
        )
        return _PageRef(page_type, slug, title)

    def _create_page(self, subject: _Subject) -> _PageRef:
        title = subject.title
        slug = _slug_for(title)
        draft = _draft_from_subject(subject, subject.type, title)
        self.new_pages.append(
            NewPage(
                type=subject.type,
                slug=slug,
                title=title,
                summary=draft.summary,
                aliases=subject.variant_spellings({normalize_alias(title)}),
                source_refs=subject.memory_ids,
                sections=_build_sections(subject.type, title, draft),
            )
        )
        return _PageRef(subject.type, slug, title)

    def _hold(self, subject: _Subject) -> None:
        for sighting in subject.sightings:
            self.mentions.append(
                UnresolvedMention(
                    alias=sighting.spelling,
                    suggestedType=subject.type,
                    context=first_sentence(sighting.memory.content),
                    source_ref=sighting.memory_id,
                )
            )

    # ---- lint-triggered promotions

    def add_lint_promotions(self) -> None:
        known = set().union(*(_candidate_names(page) for page in self.ctx.candidate_pages))
        by_id = {str(m.id): m for m in self.ctx.open_mentions}
        for mention_id in unique(str(i) for i in self.ctx.promotion_candidate_ids):
            mention = by_id.get(mention_id)
            if mention is None or mention.mention_count < PROMOTION_MIN_SIGHTINGS:
                continue
            # The batch already decided about this mention, or a page already carries its name.
            if mention_id in self.consumed_mention_ids or mention.alias_normalized in known:
                continue
            self.promotions.append(_lint_promotion(mention))

    # ---- links

    def add_links(self, subjects: list[_Subject]) -> None:
        present: dict[int, list[tuple[int, _Sighting]]] = {}
        for index, subject in enumerate(subjects):
            for sighting in subject.sightings:
                present.setdefault(sighting.memory_index, []).append((index, sighting))
        for memory_index in sorted(present):
            self._link_memory(subjects, present[memory_index])

    def _link_memory(self, subjects: list[_Subject], present: list[tuple[int, _Sighting]]) -> None:
        def refs_where(test: Callable[[int, _Sighting], bool]) -> list[tuple[int, _PageRef]]:
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
            existing = {s.slug: s.body_md for s in pending.page.sections}
            sections: list[SectionUpdate] = []
            for slug, bullets in pending.bullets.items():
                present = {line.strip() for line in existing.get(slug, "").splitlines() if line.strip()}
                body, refs = _merge_bullets(bullets, skip_lines=present)
                if body:
                    sections.append(
                        SectionUpdate(
                            slug=slug,
                            proposed_body_md=body,
                            source_refs=refs,
                            rationale="New memories in this batch.",
                        )
                    )
            # Nothing new to say (a replayed batch): no update, so the apply path writes nothing.
            if sections:
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


def _lint_promotion(mention: OpenMention) -> Promotion:
    """A promotion built only from the mention's held contexts (a lint compile may have no memories)."""
    title = clean(mention.alias) or mention.alias_normalized
    page_type = mention.suggested_type or "entity"
    bullets: list[Bullet] = []
    for context in reversed(mention.sample_contexts):  # stored newest first; notes read oldest first
        line = first_sentence(str(context.get("quote") or ""))
        if line:
            # The ref is a memory id: clean would strip it as an id leaking into prose.
            bullets.append((f"- {line}", str(context.get("source_ref") or "").strip()))
    refs = unique(ref for _, ref in bullets if ref)
    draft = _SectionDraft(summary="", summary_refs=refs, notes=bullets)
    return Promotion(
        mentionId=str(mention.id),
        reason=f"Open mention seen {mention.mention_count} times; flagged by the lint sweep.",
        type=page_type,
        title=title,
        slug=_slug_for(title),
        sections=_build_sections(page_type, title, draft),
    )


def scripted_plan(ctx: PlannerContext) -> Plan:
    """The leaf plan for one batch, from metadata hints alone. Same context in, same plan out."""
    subjects = _collect_subjects(ctx.memories)
    draft = _PlanDraft(ctx)
    for index, subject in enumerate(subjects):
        draft.place_subject(index, subject)
    draft.add_lint_promotions()
    draft.add_links(subjects)
    return draft.plan()


def scripted_write_section(existing_body: str | None, proposed_body: str) -> str:
    """The scripted section writer: keep the existing lines, append the proposed lines not already
    there (compared after stripping). Writing the same proposal twice gives the same body."""
    existing_lines = (existing_body or "").strip().splitlines()
    present = {line.strip() for line in existing_lines if line.strip()}
    added = [
        line.strip() for line in proposed_body.splitlines() if line.strip() and line.strip() not in present
    ]
    return "\n".join([*existing_lines, *unique(added)]).strip()
