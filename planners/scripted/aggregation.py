"""The scripted aggregation planner: hubs, rollups and section promotions, with no model.

It stands in for the Claude aggregation planner (`ClaudePlanner.plan_aggregation`) so the demo, the tests and
the benchmarks build the layer above the leaf pages offline, with the same output every time. It
follows the rules the aggregation prompt gives Claude:

- Membership needs evidence: a page belongs under a hub only when the hub's name is written in the
  page's own summary or title ("Restaurant in Austin, TX." is Austin's; "Korean restaurant in
  Toronto." never is, whatever the candidate's supporting ids say; grouping on those ids alone
  over-groups).
- Fewer than 3 evidenced children: no hub, no rollup.
- Only entity pages are children, each listed under at most one section of a parent.
- A promoted section is never promoted again.

Output: `parentSectionUpdates` on existing hub topics, hub `newPages` when the hub topic is missing
(its rollups follow on the next pass), `sectionPromotions` for rollup sections whose score reached
promote_ready, and hub -> child `pageLinks`. The leaf arrays stay empty.

Determinism: candidates are visited by slug, children sorted by title then slug, every output list
is sorted; nothing iterates a set and no clock is read (`now` comes in, and `evidence_now` derives
it from the request's own evidence times).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import ValidationError

from domain.aggregation import SectionAggregation, is_promotable, parse_instant, score_section_aggregation
from domain.aliases import format_heading_from_slug, normalize_alias, slugify_title
from domain.context import AggregationPage, AggregationParentCandidate, AggregationSection
from domain.line_formats import page_count_line
from domain.plan import (
    LinkedPageRef,
    NewPage,
    NewSection,
    PageLink,
    ParentSectionUpdate,
    Plan,
    SectionPromotion,
)
from domain.render import render_rollup_list
from planners.port import AggregationRequest

# No hub when fewer than 3 pages clearly match it (the aggregation prompt says the same). The same floor
# applies to each rollup section and to the children a promoted page starts with.
MIN_HUB_CHILDREN = 3
TOP_HIGHLIGHTS = 3
CHILD_PAGE_TYPE = "entity"
HUB_PAGE_TYPE = "topic"
# Operators suppress a section to keep it on its parent; promoted is sticky.
NOT_PROMOTABLE_STATUSES = ("promoted", "suppressed")
HUB_SUMMARY_BY_REASON = {"city": "City: {title}.", "journal": "Trip: {title}."}


@dataclass(frozen=True)
class _RollupGroup:
    slug: str
    heading: str
    keywords: frozenset[str]


# Narrowest first, as in the parent expander: a bakery-cafe belongs under Coffee, not Restaurants.
_ROLLUP_GROUPS: tuple[_RollupGroup, ...] = (
    _RollupGroup("coffee", "Coffee", frozenset({"cafe", "cafes", "coffee", "bakery", "bakeries"})),
    _RollupGroup("restaurants", "Restaurants", frozenset({"restaurant", "restaurants"})),
    _RollupGroup("parks-and-outdoors", "Parks & Outdoors", frozenset({"park", "parks"})),
    _RollupGroup("lodging", "Lodging", frozenset({"hotel", "hotels", "lodging"})),
)
_OTHER_PLACES = _RollupGroup("places", "Places", frozenset())
_WORD = re.compile(r"\w+")


# --------------------------------------------------------------------------- evidence


def _words(text: str | None) -> list[str]:
    # normalize_alias folds case and accents and turns punctuation into spaces: "Café," -> "cafe".
    return _WORD.findall(normalize_alias(text or ""))


def _mentions_name(text: str | None, name: str) -> bool:
    """Whether `name` appears in `text` as whole words, ignoring case, accents and punctuation."""
    wanted = _words(name)
    if not wanted:
        return False
    words = _words(text)
    width = len(wanted)
    return any(words[start : start + width] == wanted for start in range(len(words) - width + 1))


def _is_evidenced_child(page: AggregationPage, hub_title: str) -> bool:
    # The hub itself (an entity page titled "Austin") is not one of its own members.
    if normalize_alias(page.title) == normalize_alias(hub_title):
        return False
    return _mentions_name(page.summary, hub_title) or _mentions_name(page.title, hub_title)


def _rollup_group(page: AggregationPage) -> _RollupGroup:
    """The section a child goes under, from the place type its summary names (else its title)."""
    for text in (page.summary, page.title):
        words = set(_words(text))
        for group in _ROLLUP_GROUPS:
            if words & group.keywords:
                return group
    return _OTHER_PLACES


def _by_title(pages: Iterable[AggregationPage]) -> list[AggregationPage]:
    return sorted(pages, key=lambda page: (page.title.casefold(), page.slug))


# --------------------------------------------------------------------------- the scope


class _Scope:
    """Every page the planner may name, by id; the recently changed copy wins over the scope copy."""

    def __init__(self, pages: Sequence[AggregationPage], scope_pages: Sequence[AggregationPage]) -> None:
        by_id = {str(page.id): page for page in scope_pages}
        by_id.update((str(page.id), page) for page in pages)
        self.by_id = by_id
        self.ordered = sorted(by_id.values(), key=lambda page: (page.type, page.slug, str(page.id)))

    def entities(self) -> list[AggregationPage]:
        return [page for page in self.ordered if page.type == CHILD_PAGE_TYPE]

    def hub_for(self, candidate: AggregationParentCandidate) -> AggregationPage | None:
        """The existing hub topic: exact title first, else the candidate's slug (which the apply step
        would collide with anyway)."""
        topics = [page for page in self.ordered if page.type == HUB_PAGE_TYPE]
        by_title = [page for page in topics if page.title == candidate.parent_title]
        by_slug = [page for page in topics if page.slug == candidate.parent_slug]
        return next(iter(by_title or by_slug), None)

    def has_title(self, title: str) -> bool:
        return any(page.title == title for page in self.ordered)


def _distinct_candidates(
    candidates: Sequence[AggregationParentCandidate],
) -> list[AggregationParentCandidate]:
    # The expanders' lists may be concatenated rather than merged; the first of a slug wins.
    by_slug: dict[str, AggregationParentCandidate] = {}
    for candidate in sorted(candidates, key=lambda c: (c.parent_slug, c.parent_title, c.reason)):
        by_slug.setdefault(candidate.parent_slug or candidate.parent_title, candidate)
    return list(by_slug.values())


def _cited_records(candidate: AggregationParentCandidate, scope: _Scope) -> list[str]:
    """The candidate's memory ids. Summary-derived candidates carry page ids, which are not memories,
    and a merged candidate can mix both, so page ids are always dropped."""
    if candidate.source_kind != "record":
        return []
    return list(dict.fromkeys(ref for ref in candidate.source_record_ids if ref not in scope.by_id))


def _slug_for(title: str, fallback: str = "") -> str:
    # The apply step stores slugify_title(title) and falls back to the planner's slug ("東京").
    return slugify_title(title) or fallback or normalize_alias(title).replace(" ", "-")


# --------------------------------------------------------------------------- rollups on existing hubs


def _grouped_children(
    children: Sequence[AggregationPage],
) -> list[tuple[_RollupGroup, list[AggregationPage]]]:
    """Children by rollup section, in section-slug order; each child in exactly one group."""
    groups: dict[str, tuple[_RollupGroup, list[AggregationPage]]] = {}
    for child in children:
        group = _rollup_group(child)
        groups.setdefault(group.slug, (group, []))[1].append(child)
    return [(group, _by_title(members)) for _slug, (group, members) in sorted(groups.items())]


def _section_of(page: AggregationPage, slug: str) -> AggregationSection | None:
    return next((section for section in page.sections if section.slug == slug), None)


def _is_promoted(section: AggregationSection | None) -> bool:
    return section is not None and (section.aggregation or {}).get("promotion_status") == "promoted"


def _rollup_updates(
    hub: AggregationPage,
    children: Sequence[AggregationPage],
    candidate: AggregationParentCandidate,
    cited: list[str],
    promoting: set[tuple[str, str]],
    scope: _Scope,
) -> list[ParentSectionUpdate]:
    updates: list[ParentSectionUpdate] = []
    for group, members in _grouped_children(children):
        if len(members) < MIN_HUB_CHILDREN or (str(hub.id), group.slug) in promoting:
            continue
        target, section_slug, heading = hub, group.slug, group.heading
        existing = _section_of(hub, group.slug)
        if existing is not None and _is_promoted(existing):
            # The parent keeps its summary and See: link; the list lives on on the promoted page.
            child_id = str((existing.aggregation or {}).get("promoted_page_id") or "")
            if child_id not in scope.by_id:
                continue
            target, section_slug, heading = scope.by_id[child_id], "highlights", "Highlights"
            existing = _section_of(target, section_slug)
        # Emitted even when the list is already rendered like this: the resolver then only refreshes the
        # section's citations (its members' memories, which grow) and its aggregation metadata.
        updates.append(
            ParentSectionUpdate(
                pageId=str(target.id),
                sectionSlug=section_slug,
                heading=heading,
                # The apply step renders the list; the proposal only has to differ from it to pass
                # the meaningful-change filter.
                proposed_body_md=f"{group.heading} in {hub.title}: {len(members)} pages.",
                rationale=f"{len(members)} entity pages whose own summary or title places them in {hub.title}.",
                linked_page_slugs=[LinkedPageRef(type=child.type, slug=child.slug) for child in members],
                source_refs=cited,
                observed_tags=list(candidate.observed_tags),
            )
        )
    return updates


# --------------------------------------------------------------------------- missing hubs


def _group_count_lines(children: Sequence[AggregationPage]) -> str:
    # Counts, not links: the linked rollups arrive as their own sections on the next pass, and a
    # list here would repeat every child under a second section of the same parent.
    return "\n".join(page_count_line(group.heading, len(members)) for group, members in _grouped_children(children))


def _hub_new_page(
    candidate: AggregationParentCandidate, children: Sequence[AggregationPage], cited: list[str]
) -> NewPage | None:
    template = HUB_SUMMARY_BY_REASON.get(candidate.reason)
    slug = _slug_for(candidate.parent_title, candidate.parent_slug)
    if template is None or not slug:
        return None
    summary = template.format(title=candidate.parent_title)
    return NewPage(
        type=HUB_PAGE_TYPE,
        slug=slug,
        title=candidate.parent_title,
        summary=summary,
        aliases=[],
        source_refs=cited,
        sections=[
            NewSection(slug="summary", heading="Summary", body_md=summary),
            NewSection(slug="highlights", heading="Highlights", body_md=_group_count_lines(children)),
        ],
    )


def _hub_links(
    hub_type: str, hub_slug: str, hub_title: str, children: Sequence[AggregationPage]
) -> list[PageLink]:
    return [
        PageLink(
            fromType=hub_type,
            fromSlug=hub_slug,
            toType=child.type,
            toSlug=child.slug,
            context=f"Part of {hub_title}.",
        )
        for child in children
    ]


# --------------------------------------------------------------------------- section promotions


def _stored_aggregation(section: AggregationSection) -> SectionAggregation | None:
    if section.aggregation is None:
        return None
    try:
        return SectionAggregation.model_validate(section.aggregation)
    except ValidationError:
        # A malformed stored record is no reason to promote, nor to fail the pass.
        return None


# A page's own overview lists are what it is about, not a sub-topic to spin off ("Austin
# Restaurants" promoting its highlights would make "Austin Restaurants Highlights").
OWN_LIST_SECTIONS = frozenset({"summary", "highlights", "overview"})


def _section_promotion(
    page: AggregationPage, section: AggregationSection, scope: _Scope, now: datetime
) -> SectionPromotion | None:
    if section.slug in OWN_LIST_SECTIONS:
        return None
    aggregation = _stored_aggregation(section)
    if aggregation is None or aggregation.promotion_status in NOT_PROMOTABLE_STATUSES:
        return None
    linked = [scope.by_id[page_id] for page_id in aggregation.linked_page_ids if page_id in scope.by_id]
    score = score_section_aggregation(aggregation, section.body_md, [child.tags for child in linked], now)
    children = _by_title(linked)
    if not is_promotable(aggregation, score) or len(children) < MIN_HUB_CHILDREN:
        return None
    heading = section.heading or format_heading_from_slug(section.slug)
    title = f"{page.title} {heading}"
    slug = _slug_for(title)
    if not slug or slug == page.slug:
        return None
    summary = f"{heading} in {page.title}."
    return SectionPromotion(
        pageId=str(page.id),
        sectionSlug=section.slug,
        reason=(
            f"Promotion score {score.score} reached promote_ready: {len(aggregation.linked_page_ids)} linked"
            f" pages, {aggregation.supporting_record_count} supporting records."
        ),
        parentSummary=f"{heading} in {page.title}: {len(children)} pages, now listed on their own page.",
        topHighlights=[child.title for child in children[:TOP_HIGHLIGHTS]],
        newPage=NewPage(
            type=HUB_PAGE_TYPE,
            slug=slug,
            title=title,
            summary=summary,
            aliases=[],
            # No memory is known to back the promoted list as a whole; blank beats wrong provenance.
            source_refs=[],
            sections=[
                NewSection(slug="summary", heading="Summary", body_md=summary),
                NewSection(slug="highlights", heading="Highlights", body_md=render_rollup_list(children)),
            ],
        ),
    )


def _section_promotions(scope: _Scope, now: datetime) -> list[SectionPromotion]:
    promotions: list[SectionPromotion] = []
    for page in scope.ordered:
        for section in sorted(page.sections, key=lambda s: s.slug):
            promotion = _section_promotion(page, section, scope, now)
            if promotion is not None:
                promotions.append(promotion)
    return promotions


# --------------------------------------------------------------------------- the plan


def evidence_now(request: AggregationRequest) -> datetime:
    """The instant the plan is made at, from the data rather than the clock: the newest evidence time
    (first or last source) any section of the request records; the epoch when none does (then no
    section has a time span to measure, and `now` changes nothing)."""
    instants = [parsed for page in [*request.pages, *request.possible_children] for section in page.sections
                for key in ("last_source_at", "first_source_at")
                if (parsed := parse_instant((section.aggregation or {}).get(key))) is not None]
    return max(instants, default=datetime(1970, 1, 1, tzinfo=UTC))


def scripted_aggregation_plan(
    pages: list[AggregationPage],
    parent_candidates: list[AggregationParentCandidate],
    scope_pages: list[AggregationPage],
    now: datetime,
) -> Plan:
    """The aggregation plan for one scope. Same inputs in, same plan out.

    `pages` are the recently changed pages, `scope_pages` every active page of the scope (children
    may be older pages), `parent_candidates` the expanders' hub suggestions; `now` dates the
    temporal spread of a section whose last evidence time is missing.
    """
    scope = _Scope(pages, scope_pages)
    promotions = _section_promotions(scope, now)
    promoting = {(promotion.pageId, promotion.sectionSlug) for promotion in promotions}
    updates: list[ParentSectionUpdate] = []
    hub_pages: list[NewPage] = []
    links: list[PageLink] = []
    handled_hubs: set[tuple[str, str]] = set()
    for candidate in _distinct_candidates(parent_candidates):
        children = _by_title(
            page for page in scope.entities() if _is_evidenced_child(page, candidate.parent_title)
        )
        if len(children) < MIN_HUB_CHILDREN:
            continue
        cited = _cited_records(candidate, scope)
        hub = scope.hub_for(candidate)
        if hub is not None:
            if (hub.type, hub.slug) in handled_hubs:
                continue
            handled_hubs.add((hub.type, hub.slug))
            updates.extend(_rollup_updates(hub, children, candidate, cited, promoting, scope))
            links.extend(_hub_links(hub.type, hub.slug, hub.title, children))
            continue
        # A page of another type holding the title would make the apply step drop the hub as a duplicate.
        new_hub = (
            None if scope.has_title(candidate.parent_title) else _hub_new_page(candidate, children, cited)
        )
        if new_hub is None or (new_hub.type, new_hub.slug) in handled_hubs:
            continue
        handled_hubs.add((new_hub.type, new_hub.slug))
        hub_pages.append(new_hub)
        links.extend(_hub_links(new_hub.type, new_hub.slug, new_hub.title, children))
    return Plan(
        pageUpdates=[],
        newPages=sorted(hub_pages, key=lambda page: page.slug),
        unresolvedMentions=[],
        promotions=[],
        pageLinks=sorted(links, key=lambda link: (link.fromType, link.fromSlug, link.toType, link.toSlug)),
        # Already in order: hubs by candidate slug, each hub's sections by slug.
        parentSectionUpdates=updates,
        sectionPromotions=promotions,
    )
