import random
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import NAMESPACE_URL, uuid5

from domain.aggregation import SectionAggregation, score_section_aggregation
from domain.aliases import slugify_title
from domain.context import AggregationPage, AggregationParentCandidate, AggregationSection
from domain.plan import Plan
from domain.render import render_rollup_list
from planners.scripted.aggregation import scripted_aggregation_plan

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
AUSTIN_RECORDS = ["mem-austin-1", "mem-austin-2", "mem-austin-3"]


def _id(name: str) -> str:
    return str(uuid5(NAMESPACE_URL, name))


def _entity(title: str, summary: str | None, tags: list[str] | None = None) -> AggregationPage:
    slug = slugify_title(title)
    return AggregationPage(
        id=_id(f"entity/{slug}"), type="entity", slug=slug, title=title, summary=summary, tags=tags or []
    )


def _topic(title: str, summary: str, sections: list[AggregationSection] | None = None) -> AggregationPage:
    slug = slugify_title(title)
    return AggregationPage(
        id=_id(f"topic/{slug}"),
        type="topic",
        slug=slug,
        title=title,
        summary=summary,
        sections=sections
        or [
            AggregationSection(slug="summary", heading="Summary", body_md=summary),
            AggregationSection(slug="highlights", heading="Highlights", body_md="- Lives here."),
        ],
    )


def _city(
    title: str, records: list[str] | None = None, tags: list[str] | None = None, source_kind: str = "record"
) -> AggregationParentCandidate:
    ids = records if records is not None else AUSTIN_RECORDS
    return AggregationParentCandidate(
        reason="city",
        parent_title=title,
        parent_slug=slugify_title(title),
        suggested_section_slug="restaurants",
        supporting_count=len(ids),
        observed_tags=tags or ["food"],
        source_record_ids=ids,
        source_kind=source_kind,
    )


AUSTIN = _topic("Austin", "City: Austin.")
FRANKLIN = _entity("Franklin Barbecue", "Restaurant in Austin, TX.")
UCHI = _entity("Uchi", "Restaurant in Austin, TX.")
SUERTE = _entity("Suerte", "Restaurant in Austin, TX.")
EPOCH = _entity("Epoch Coffee", "Cafe in Austin, TX.")
JOS = _entity("Jo's Coffee", "Cafe in Austin, TX.")
BAKERY = _entity("Texas French Bread", "Bakery in Austin, TX.")
ZILKER = _entity("Zilker Metropolitan Park", "Park in Austin, TX.")
BARTON = _entity("Barton Springs Pool", "Park in Austin, TX.")
MOMOFUKU = _entity("Momofuku Daishō", "Korean restaurant in Toronto.")
AUSTIN_RESTAURANTS = [FRANKLIN, SUERTE, UCHI]  # by title


def _plan(
    scope: list[AggregationPage],
    candidates: list[AggregationParentCandidate],
    recent: list[AggregationPage] | None = None,
) -> Plan:
    return scripted_aggregation_plan(recent if recent is not None else scope, candidates, scope, NOW)


def _refs(pages: list[AggregationPage]) -> list[dict[str, str]]:
    return [{"type": page.type, "slug": page.slug} for page in pages]


def _linked(update: Any) -> list[dict[str, str]]:
    return [ref.model_dump() for ref in update.linked_page_slugs]


class TestHubMembership:
    def test_three_evidenced_children_form_a_rollup_on_the_existing_hub(self) -> None:
        plan = _plan([AUSTIN, UCHI, FRANKLIN, SUERTE], [_city("Austin")])

        [update] = plan.parentSectionUpdates
        assert update.pageId == str(AUSTIN.id)
        assert (update.sectionSlug, update.heading) == ("restaurants", "Restaurants")
        assert _linked(update) == _refs(AUSTIN_RESTAURANTS)
        assert update.proposed_body_md.strip()
        assert update.source_refs == AUSTIN_RECORDS
        assert update.observed_tags == ["food"]
        assert [(link.fromType, link.fromSlug, link.toSlug) for link in plan.pageLinks] == [
            ("topic", "austin", "franklin-barbecue"),
            ("topic", "austin", "suerte"),
            ("topic", "austin", "uchi"),
        ]

    def test_two_evidenced_children_form_nothing(self) -> None:
        plan = _plan([AUSTIN, UCHI, FRANKLIN, MOMOFUKU], [_city("Austin")])
        assert plan.is_empty()

    def test_a_toronto_restaurant_never_joins_the_austin_rollup(self) -> None:
        # Even when the candidate's supporting ids name the Toronto page (an over-eager expander).
        candidate = _city("Austin", records=[str(MOMOFUKU.id), str(UCHI.id)], source_kind="summary")
        plan = _plan([AUSTIN, UCHI, FRANKLIN, SUERTE, MOMOFUKU], [candidate])

        [update] = plan.parentSectionUpdates
        assert {"type": "entity", "slug": MOMOFUKU.slug} not in _linked(update)
        assert MOMOFUKU.slug not in {link.toSlug for link in plan.pageLinks}
        # Page ids are not memories: a summary-derived candidate cites nothing.
        assert update.source_refs == []

    def test_membership_is_a_whole_word_match_folding_case_and_accents(self) -> None:
        bogota = _topic("Bogotá", "City: Bogotá.")
        children = [
            _entity("Andrés DC", "Restaurant in BOGOTA."),
            _entity("Salvo Patria", "Restaurant in bogotá, Colombia."),
            _entity("Bogotá Beer Company", "Restaurant and brewpub."),  # evidence in the title
            _entity("Bogotanos Grill", "Restaurant in Bogotanos."),  # "Bogota" is not a word here
        ]
        plan = _plan([bogota, *children], [_city("Bogotá")])

        [update] = plan.parentSectionUpdates
        assert [ref["slug"] for ref in _linked(update)] == [
            "andres-dc",
            "bogota-beer-company",
            "salvo-patria",
        ]

    def test_only_entity_pages_are_children(self) -> None:
        topics = [_topic(f"Austin Topic {n}", f"Restaurant in Austin, TX ({n}).") for n in range(3)]
        assert _plan([AUSTIN, *topics], [_city("Austin")]).is_empty()

    def test_children_may_be_older_pages_outside_the_recent_list(self) -> None:
        plan = _plan([AUSTIN, UCHI, FRANKLIN, SUERTE], [_city("Austin")], recent=[UCHI])
        [update] = plan.parentSectionUpdates
        assert _linked(update) == _refs(AUSTIN_RESTAURANTS)


class TestRollupSections:
    def test_children_are_grouped_by_place_type_and_no_child_is_listed_twice(self) -> None:
        scope = [AUSTIN, UCHI, FRANKLIN, SUERTE, EPOCH, JOS, BAKERY, ZILKER, BARTON]
        plan = _plan(scope, [_city("Austin")])

        by_section = {update.sectionSlug: _linked(update) for update in plan.parentSectionUpdates}
        # Two parks are too few for a section of their own.
        assert list(by_section) == ["coffee", "restaurants"]
        assert by_section["coffee"] == _refs([EPOCH, JOS, BAKERY])
        assert by_section["restaurants"] == _refs(AUSTIN_RESTAURANTS)
        listed = [ref["slug"] for refs in by_section.values() for ref in refs]
        assert len(listed) == len(set(listed))
        # Every evidenced child is still linked from the hub.
        assert {link.toSlug for link in plan.pageLinks} == {page.slug for page in scope[1:]}

    def test_groups_use_the_heading_of_their_type(self) -> None:
        hotels = [
            _entity(f"Hotel {name}", "Hotel in Austin, TX.") for name in ("Ella", "Van Zandt", "Magdalena")
        ]
        others = [_entity(f"Market {n}", "Market in Austin, TX.") for n in range(3)]
        parks = [ZILKER, BARTON, _entity("Mount Bonnell", "Park in Austin, TX.")]
        plan = _plan([AUSTIN, *hotels, *others, *parks], [_city("Austin")])
        assert [(u.sectionSlug, u.heading) for u in plan.parentSectionUpdates] == [
            ("lodging", "Lodging"),
            ("parks-and-outdoors", "Parks & Outdoors"),
            ("places", "Places"),
        ]

    def test_an_unchanged_rendered_rollup_is_emitted_again_so_its_citations_follow_its_members(self) -> None:
        # The resolver only refreshes its citations (the members' memories) and metadata then.
        rendered = AggregationSection(
            slug="restaurants", heading="Restaurants", body_md=render_rollup_list(AUSTIN_RESTAURANTS)
        )
        hub = _topic("Austin", "City: Austin.", sections=[rendered])
        plan = _plan([hub, *AUSTIN_RESTAURANTS], [_city("Austin")])
        [update] = plan.parentSectionUpdates
        assert update.sectionSlug == "restaurants"
        assert [ref.slug for ref in update.linked_page_slugs] == [page.slug for page in AUSTIN_RESTAURANTS]

    def test_a_new_child_refreshes_the_rendered_rollup(self) -> None:
        rendered = AggregationSection(
            slug="restaurants", heading="Restaurants", body_md=render_rollup_list(AUSTIN_RESTAURANTS)
        )
        hub = _topic("Austin", "City: Austin.", sections=[rendered])
        odd_duck = _entity("Odd Duck", "Restaurant in Austin, TX.")
        [update] = _plan([hub, *AUSTIN_RESTAURANTS, odd_duck], [_city("Austin")]).parentSectionUpdates
        assert _linked(update) == _refs([FRANKLIN, odd_duck, SUERTE, UCHI])

    def test_a_promoted_section_is_not_overwritten_by_a_rollup(self) -> None:
        promoted = AggregationSection(
            slug="restaurants",
            heading="Restaurants",
            body_md="Restaurants in Austin.\n\nSee: [Austin Restaurants](/wiki/topic/austin-restaurants)\n",
            aggregation={"promotion_status": "promoted", "promoted_page_id": _id("topic/austin-restaurants")},
        )
        hub = _topic("Austin", "City: Austin.", sections=[promoted])
        assert _plan([hub, *AUSTIN_RESTAURANTS], [_city("Austin")]).parentSectionUpdates == []


class TestMissingHub:
    def test_a_missing_hub_is_proposed_as_a_new_topic_page(self) -> None:
        plan = _plan([UCHI, FRANKLIN, SUERTE, EPOCH], [_city("Austin")])

        assert plan.parentSectionUpdates == []
        [hub] = plan.newPages
        assert (hub.type, hub.slug, hub.title, hub.summary) == ("topic", "austin", "Austin", "City: Austin.")
        assert [section.slug for section in hub.sections] == ["summary", "highlights"]
        assert all(section.body_md.strip() for section in hub.sections)
        assert hub.source_refs == AUSTIN_RECORDS
        # The hub links to its children in the same plan; the apply step creates the hub first.
        assert {(link.fromType, link.fromSlug) for link in plan.pageLinks} == {("topic", "austin")}
        assert sorted(link.toSlug for link in plan.pageLinks) == sorted(
            page.slug for page in [UCHI, FRANKLIN, SUERTE, EPOCH]
        )

    def test_page_ids_mixed_into_a_record_candidate_are_not_cited(self) -> None:
        candidate = _city("Austin", records=["mem-1", str(UCHI.id), "mem-2"])
        [hub] = _plan([UCHI, FRANKLIN, SUERTE], [candidate]).newPages
        assert hub.source_refs == ["mem-1", "mem-2"]

    def test_a_page_of_another_type_holding_the_title_blocks_the_hub(self) -> None:
        austin_entity = _entity("Austin", "The city in Texas where Eric lives.")
        plan = _plan([austin_entity, UCHI, FRANKLIN, SUERTE], [_city("Austin")])
        assert plan.newPages == [] and plan.parentSectionUpdates == []

    def test_a_journal_without_evidence_in_summaries_forms_nothing(self) -> None:
        journal = AggregationParentCandidate(
            reason="journal",
            parent_title="Summer in Lisbon 2026",
            parent_slug="summer-in-lisbon-2026",
            suggested_section_slug="entries",
            supporting_count=4,
            source_record_ids=["m1", "m2", "m3", "m4"],
        )
        lisbon = [_entity(name, "Restaurant in Lisbon.") for name in ("Ramiro", "Taberna", "Prado")]
        assert _plan(lisbon, [journal]).is_empty()


def _restaurants(count: int) -> list[AggregationPage]:
    return [
        _entity(f"Austin Eatery {n:02d}", "Restaurant in Austin, TX.", tags=["food"]) for n in range(count)
    ]


def _stored(section: AggregationSection) -> SectionAggregation:
    return SectionAggregation.model_validate(section.aggregation)


def _rollup(
    children: list[AggregationPage], status: str = "candidate", days: int = 40, records: int = 30
) -> AggregationSection:
    return AggregationSection(
        slug="restaurants",
        heading="Restaurants",
        body_md=render_rollup_list(children),
        aggregation={
            "linked_page_ids": [str(child.id) for child in children],
            "supporting_record_count": records,
            "first_source_at": (NOW - timedelta(days=days)).isoformat(),
            "last_source_at": NOW.isoformat(),
            "observed_tags": ["food"],
            "promotion_status": status,
            "promotion_score": 0.5,
        },
    )


class TestSectionPromotions:
    def test_a_promote_ready_section_is_promoted_into_its_own_topic(self) -> None:
        children = _restaurants(20)
        section = _rollup(children)
        hub = _topic("Austin", "City: Austin.", sections=[section])
        plan = _plan([hub, *children], [])

        [promotion] = plan.sectionPromotions
        assert (promotion.pageId, promotion.sectionSlug) == (str(hub.id), "restaurants")
        page = promotion.newPage
        assert (page.type, page.title, page.slug) == ("topic", "Austin Restaurants", "austin-restaurants")
        assert page.summary == "Restaurants in Austin."
        assert [s.slug for s in page.sections] == ["summary", "highlights"]
        assert page.sections[1].body_md == render_rollup_list(children)
        assert promotion.topHighlights == ["Austin Eatery 00", "Austin Eatery 01", "Austin Eatery 02"]
        assert promotion.parentSummary.strip().endswith(".")
        assert promotion.parentSummary.count(". ") == 0
        expected = score_section_aggregation(_stored(section), section.body_md, [["food"]] * 20, NOW).score
        assert expected >= 0.55
        assert str(expected) in promotion.reason

    def test_a_section_being_promoted_gets_no_rollup_update_in_the_same_pass(self) -> None:
        children = _restaurants(20)
        hub = _topic("Austin", "City: Austin.", sections=[_rollup(children[:19])])
        plan = _plan([hub, *children], [_city("Austin")])
        assert len(plan.sectionPromotions) == 1
        assert plan.parentSectionUpdates == []

    def test_a_promoted_section_is_never_promoted_again(self) -> None:
        children = _restaurants(20)
        hub = _topic("Austin", "City: Austin.", sections=[_rollup(children, status="promoted")])
        assert _plan([hub, *children], []).sectionPromotions == []

    def test_a_section_below_promote_ready_stays(self) -> None:
        # 20 children and a long list, but 10 records on a single day and no shared tags.
        untagged = [child.model_copy(update={"tags": []}) for child in _restaurants(20)]
        hub = _topic("Austin", "City: Austin.", sections=[_rollup(untagged, days=0, records=10)])
        section = hub.sections[0]
        score = score_section_aggregation(_stored(section), section.body_md, [[]] * 20, NOW)
        assert score.status == "candidate"
        assert _plan([hub, *untagged], []).sectionPromotions == []

    def test_coherence_comes_from_the_childrens_tags(self) -> None:
        # Linked 0.25 + supporting 0.25 = 0.5 stays under 0.55; the shared "food" tag adds 0.15.
        tagged = _restaurants(20)
        untagged = [child.model_copy(update={"tags": ["misc"]}) for child in tagged]
        section = _rollup(tagged, days=0).model_copy(update={"body_md": ""})
        hub = _topic("Austin", "City: Austin.", sections=[section])
        assert len(_plan([hub, *tagged], []).sectionPromotions) == 1
        assert _plan([hub, *untagged], []).sectionPromotions == []


class TestPlanShape:
    def _scope(self) -> tuple[list[AggregationPage], list[AggregationParentCandidate]]:
        children = _restaurants(20)
        hub = _topic("Austin", "City: Austin.", sections=[_rollup(children[:18])])
        toronto = [_entity(f"Toronto Spot {n}", "Cafe in Toronto, ON.") for n in range(4)]
        scope = [hub, *children, EPOCH, JOS, BAKERY, ZILKER, MOMOFUKU, *toronto]
        return scope, [_city("Austin"), _city("Toronto", records=["mem-t"])]

    def test_the_plan_is_valid_and_leaves_the_leaf_arrays_empty(self) -> None:
        scope, candidates = self._scope()
        plan = _plan(scope, candidates)
        assert Plan.model_validate(plan.model_dump()) == plan
        assert plan.pageUpdates == [] and plan.unresolvedMentions == [] and plan.promotions == []
        assert plan.sectionPromotions and plan.newPages and plan.parentSectionUpdates and plan.pageLinks

    def test_the_same_inputs_in_any_order_give_the_same_plan(self) -> None:
        scope, candidates = self._scope()
        expected = _plan(scope, candidates).model_dump()
        shuffler = random.Random(7)
        for _ in range(5):
            shuffled_scope = shuffler.sample(scope, len(scope))
            shuffled_candidates = shuffler.sample(candidates, len(candidates))
            assert _plan(shuffled_scope, shuffled_candidates).model_dump() == expected

    def test_duplicate_candidates_for_one_hub_are_planned_once(self) -> None:
        plan = _plan([AUSTIN, *AUSTIN_RESTAURANTS], [_city("Austin"), _city("Austin", records=["other"])])
        assert len(plan.parentSectionUpdates) == 1
        assert len(plan.pageLinks) == 3
