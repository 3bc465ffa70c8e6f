from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest

from domain.context import MemoryRecord
from domain.parents import (
    ParentCandidate,
    derive_parent_candidates,
    derive_parent_candidates_from_page_summaries,
    extract_city_from_address,
    extract_city_from_summary,
    is_geo_qualified_extension,
    is_likely_city_token,
    merge_parent_candidates,
    section_for_place_types,
)


@dataclass
class _Record:
    id: str
    metadata: dict[str, Any] | None


@dataclass
class _Page:
    id: str
    title: str
    summary: str | None
    tags: list[str] = field(default_factory=list)


def _records(*metadatas: dict[str, Any]) -> list[_Record]:
    return [_Record(f"r{index}", metadata) for index, metadata in enumerate(metadatas, start=1)]


def _only(candidates: list[ParentCandidate], reason: str) -> ParentCandidate:
    matching = [candidate for candidate in candidates if candidate.reason == reason]
    assert len(matching) == 1, candidates
    return matching[0]


class TestDeriveParentCandidates:
    def test_a_single_record_does_not_cluster(self) -> None:
        assert derive_parent_candidates(_records({"place": {"city": "Austin"}})) == []

    def test_two_records_sharing_a_city_make_a_city_candidate(self) -> None:
        out = derive_parent_candidates(
            _records(
                {"place": {"city": "Austin", "types": ["restaurant"]}},
                {"place": {"city": "Austin", "types": ["restaurant"]}},
            )
        )
        assert out == [
            ParentCandidate(
                reason="city",
                parent_title="Austin",
                parent_slug="austin",
                parent_type="topic",
                suggested_section_slug="restaurants",
                suggested_section_heading="Restaurants",
                source_record_ids=["r1", "r2"],
                observed_tags=[],
                supporting_count=2,
                source_kind="record",
            )
        ]

    def test_cafe_places_go_to_the_coffee_section(self) -> None:
        out = derive_parent_candidates(
            _records(
                {"place": {"city": "Portland", "types": ["cafe"]}},
                {"place": {"city": "Portland", "types": ["cafe"]}},
            )
        )
        assert _only(out, "city").suggested_section_slug == "coffee"

    def test_flat_city_and_place_types(self) -> None:
        out = derive_parent_candidates(
            _records(
                {"city": "Dallas", "place_types": ["restaurant"]},
                {"city": "Dallas", "place_types": ["restaurant"]},
            )
        )
        dallas = _only(out, "city")
        assert (dallas.parent_title, dallas.suggested_section_slug) == ("Dallas", "restaurants")

    def test_journal_candidate_from_repeated_journal_id(self) -> None:
        out = derive_parent_candidates(
            _records(
                {"journal_id": "j-mexico-2024", "journal": {"title": "Mexico 2024"}},
                {"journal_id": "j-mexico-2024"},
            )
        )
        trip = _only(out, "journal")
        assert (trip.parent_title, trip.parent_slug) == ("Mexico 2024", "mexico-2024")
        assert (trip.suggested_section_slug, trip.suggested_section_heading) == ("entries", "Entries")

    def test_journal_without_title_is_named_after_its_id(self) -> None:
        out = derive_parent_candidates(
            _records({"journal": {"id": "abcdef123456"}}, {"journal_id": "abcdef123456"})
        )
        assert _only(out, "journal").parent_title == "Journal abcdef12"

    def test_min_cluster_size(self) -> None:
        records = _records(*[{"place": {"city": "Paris"}}] * 3)
        assert derive_parent_candidates(records, min_cluster_size=5) == []
        assert _only(derive_parent_candidates(records, min_cluster_size=1), "city").supporting_count == 3

    def test_sorted_by_supporting_count(self) -> None:
        out = derive_parent_candidates(
            _records(
                {"place": {"city": "Paris"}},
                {"place": {"city": "Paris"}},
                {"place": {"city": "Austin"}},
                {"place": {"city": "Austin"}},
                {"place": {"city": "Austin"}},
            )
        )
        assert [(candidate.parent_title, candidate.supporting_count) for candidate in out] == [
            ("Austin", 3),
            ("Paris", 2),
        ]

    def test_records_without_usable_metadata_give_nothing(self) -> None:
        assert derive_parent_candidates(_records({}, {"unrelated": "value"}, {"place": "Austin"})) == []
        assert derive_parent_candidates([_Record("r1", None), _Record("r2", None)]) == []

    def test_cities_cluster_case_insensitively_and_are_title_cased(self) -> None:
        out = derive_parent_candidates(_records({"city": "new york"}, {"place_city": "New York"}))
        assert (_only(out, "city").parent_title, _only(out, "city").supporting_count) == ("New York", 2)

    def test_section_comes_from_the_first_record_of_the_cluster(self) -> None:
        out = derive_parent_candidates(
            _records(
                {"city": "Austin", "place_types": "park"}, {"city": "Austin", "place_types": "restaurant"}
            )
        )
        assert _only(out, "city").suggested_section_slug == "parks-and-outdoors"

    def test_tags_and_idea_tags_feed_observed_tags_only(self) -> None:
        out = derive_parent_candidates(
            _records(
                {"city": "Austin", "tags": ["food", "bbq"]},
                {"city": "Austin", "idea_tags": "bbq; brisket", "tags": "food"},
                {"tags": ["food"]},
                {"tags": ["food"]},
            )
        )
        assert len(out) == 1
        assert _only(out, "city").observed_tags == ["food", "bbq", "brisket"]

    # --- address parsing (journal-import shapes) ---------------------------------------------

    @pytest.mark.parametrize(
        ("addresses", "city"),
        [
            (
                [
                    "785 Queen St W, Toronto, ON M6J 1G1, Canada",
                    "190 University Ave, Toronto, ON M5H 0A3, Canada",
                ],
                "Toronto",
            ),
            (["123 Main St, Austin, TX 78701, USA", "456 Elm Ave, Austin, TX 78702, USA"], "Austin"),
            (["1 Oxford St, London, UK", "10 Soho Sq, London, UK"], "London"),
            (
                ["11 Rue Bernard Palissy, 75006 Paris, France", "27 Rue Augereau, 75007 Paris, France"],
                "Paris",
            ),
            (["26110 Vinsobres, France", "26110 Vinsobres, France"], "Vinsobres"),
            (
                [
                    "José María Izazaga 8, Centro, 06000 Ciudad de México, CDMX, Mexico",
                    "Av. Insurgentes 100, 06000 Ciudad de México, CDMX, Mexico",
                ],
                "Ciudad De México",
            ),
            (["1 Elm St, Austin, TX 78701, USA", "2 Oak Ave, Austin, TX 78702, USA"], "Austin"),
            (
                [
                    "Pila Seca 1, Centro, Zona Centro, 37700 San Miguel de Allende, Gto., Mexico",
                    "Calle del Dr Ignacio Hernandez 83, 37700 San Miguel de Allende, Gto., Mexico",
                ],
                "San Miguel De Allende",
            ),
            (["Av. Coba 5, Cancún, Q.R., Mexico", "Av. Coba 7, Cancún, Q.R., Mexico"], "Cancún"),
            (["100 Main St, Vancouver, B.C., Canada", "200 Main St, Vancouver, B.C., Canada"], "Vancouver"),
        ],
    )
    def test_city_from_flat_place_address(self, addresses: list[str], city: str) -> None:
        out = derive_parent_candidates(_records(*[{"place_address": address} for address in addresses]))
        assert _only(out, "city").parent_title == city

    def test_city_from_our_nested_place_address(self) -> None:
        out = derive_parent_candidates(
            _records(
                {"place": {"name": "Franklin Barbecue", "address": "900 E 11th St, Austin, TX 78702, USA"}},
                {"place": {"name": "Uchi", "address": "801 S Lamar Blvd, Austin, TX 78704, USA"}},
            )
        )
        assert _only(out, "city").parent_title == "Austin"

    def test_csv_place_types(self) -> None:
        out = derive_parent_candidates(
            _records(
                {"place_address": "1 Coffee Ln, Portland, OR 97201, USA", "place_types": "cafe, food"},
                {"place_address": "2 Espresso Rd, Portland, OR 97202, USA", "place_types": "cafe"},
            )
        )
        assert _only(out, "city").suggested_section_slug == "coffee"

    def test_reads_the_sample_corpus_shape_of_memory_records(self) -> None:
        now = datetime(2026, 6, 1, tzinfo=UTC)
        metadata = {
            "entities": [{"name": "Franklin Barbecue", "type": "entity", "kind": "restaurant"}],
            "place": {
                "name": "Franklin Barbecue",
                "city": "Austin",
                "address": "900 E 11th St, Austin, TX 78702, USA",
                "types": ["restaurant", "food"],
            },
            "journal": {"id": "j-2026-austin", "title": "Austin Spring 2026"},
            "tags": ["food", "bbq"],
        }
        ids = [UUID(int=1), UUID(int=2)]
        records = [
            MemoryRecord(id=i, content="x", metadata=metadata, created_at=now, updated_at=now) for i in ids
        ]
        out = derive_parent_candidates(records)
        city, journal = _only(out, "city"), _only(out, "journal")
        assert (city.parent_title, city.suggested_section_slug) == ("Austin", "restaurants")
        assert city.source_record_ids == [str(i) for i in ids]
        assert (journal.parent_title, journal.parent_slug) == ("Austin Spring 2026", "austin-spring-2026")
        assert journal.observed_tags == ["food", "bbq"]

    def test_record_candidates_are_record_kind(self) -> None:
        out = derive_parent_candidates(
            _records(
                {"place_address": "1 A, Toronto, ON M6J 1G1, Canada"},
                {"place_address": "2 B, Toronto, ON M6J 1G2, Canada"},
            )
        )
        assert _only(out, "city").source_kind == "record"


class TestExtractCityFromAddress:
    @pytest.mark.parametrize(
        ("address", "city"),
        [
            ("123 Main St, Austin, TX 78701, USA", "Austin"),
            ("785 Queen St W, Toronto, ON M6J 1G1, Canada", "Toronto"),
            ("11 Rue Bernard Palissy, 75006 Paris, France", "Paris"),
            ("Austin, TX", "Austin"),
            ("Sydney, N.S.W., Australia", "Sydney"),
            ("Av. Coba 5, Cancún, Q.R., Mexico", "Cancún"),
            ("a,, b ,", "a"),
            # A bare postcode has no city after it to keep: it is returned as is.
            ("75006, France", "75006"),
        ],
    )
    def test_finds_the_city(self, address: str, city: str) -> None:
        assert extract_city_from_address(address) == city

    @pytest.mark.parametrize("address", [None, "", "Austin", "  ,  ", "Austin, "])
    def test_nothing_to_find(self, address: str | None) -> None:
        assert extract_city_from_address(address) is None

    def test_a_dotted_region_longer_than_ten_characters_is_not_a_region(self) -> None:
        # "Abc.Def.Ghi." is 12 characters: the fallback (second-to-last part) applies.
        assert extract_city_from_address("1 St, Town, Abc.Def.Ghi., Land") == "Abc.Def.Ghi."


class TestExtractCityFromSummary:
    @pytest.mark.parametrize(
        ("summary", "city"),
        [
            ("Korean-inspired restaurant in Toronto.", "Toronto"),
            ("Located in Austin, TX and popular.", "Austin"),
            ("Cafe in Bogotá.", "Bogotá"),
            ("Bistro in Montréal.", "Montréal"),
            ("Pizza place in New York with a view.", "New York"),
            ("A walk in the park near Mexico City Center today.", "Mexico City"),
            ("Restaurant in Austin, at 123 Main St, Austin, TX 78701, USA.", "Austin"),
            ("Trip to the outskirts of Napa.", "Napa"),
        ],
    )
    def test_capitalised_words_after_the_first_usable_preposition(self, summary: str, city: str) -> None:
        assert extract_city_from_summary(summary) == city

    @pytest.mark.parametrize(
        "summary",
        [
            "a thing with no city reference",
            "Great spot in The",  # "The" is an article, and only the first match counts
            "Dinner In Paris",  # prepositions are lowercase only
            "Korean restaurant at 190 University Avenue, Toronto, ON M5H 0A3, Canada.",
        ],
    )
    def test_no_city(self, summary: str) -> None:
        assert extract_city_from_summary(summary) is None

    def test_only_the_first_match_counts_even_when_rejected(self) -> None:
        assert extract_city_from_summary("Lunch in My Kitchen, dinner in Paris.") == "My Kitchen"
        assert extract_city_from_summary("Seen in It, then in Paris.") is None


class TestIsLikelyCityToken:
    @pytest.mark.parametrize("token", ["Austin", "New York", "Ciudad De México", "San Miguel De Allende"])
    def test_accepts(self, token: str) -> None:
        assert is_likely_city_token(token)

    @pytest.mark.parametrize(
        "token",
        [
            "St",
            "  Ab ",
            "Congress Ave",
            "Queen St.",
            "Sixth Street",
            "Prospect Interested In The Full PVL Product Line",
        ],
    )
    def test_rejects(self, token: str) -> None:
        assert not is_likely_city_token(token)


class TestDeriveFromPageSummaries:
    def test_city_cluster_from_summaries(self) -> None:
        out = derive_parent_candidates_from_page_summaries(
            [
                _Page("p1", "Momofuku Daishō", "Korean-inspired restaurant in Toronto."),
                _Page("p2", "Nana", "Thai restaurant in Toronto."),
                _Page("p3", "Franklin Barbecue", "BBQ joint in Austin, TX."),
            ]
        )
        assert [(c.parent_title, c.source_record_ids, c.supporting_count) for c in out] == [
            ("Toronto", ["p1", "p2"], 2)
        ]

    def test_preserves_accented_city_names(self) -> None:
        out = derive_parent_candidates_from_page_summaries(
            [
                _Page("p1", "Andrés", "Cafe in Bogotá."),
                _Page("p2", "Leo", "Restaurant in Bogotá."),
                _Page("p3", "Joe's", "Cafe in Montréal."),
                _Page("p4", "Ma Poule", "Bistro in Montréal."),
            ]
        )
        assert {(c.parent_title, c.parent_slug, c.supporting_count) for c in out} == {
            ("Bogotá", "bogota", 2),
            ("Montréal", "montreal", 2),
        }

    def test_min_cluster_size_one(self) -> None:
        out = derive_parent_candidates_from_page_summaries(
            [_Page("p1", "Franklin", "BBQ joint in Austin.")], min_cluster_size=1
        )
        assert [(c.parent_title, c.supporting_count) for c in out] == [("Austin", 1)]

    def test_pages_without_usable_summary(self) -> None:
        pages = [
            _Page("p1", "X", None),
            _Page("p2", "Y", ""),
            _Page("p3", "Z", "a thing with no city reference"),
        ]
        assert derive_parent_candidates_from_page_summaries(pages) == []

    def test_trailing_state_codes_are_not_part_of_the_city(self) -> None:
        out = derive_parent_candidates_from_page_summaries(
            [
                _Page("p1", "X", "Located in Austin, TX and popular."),
                _Page("p2", "Y", "A spot in Austin, TX with great views."),
            ]
        )
        assert [(c.parent_title, c.supporting_count) for c in out] == [("Austin", 2)]

    def test_address_fallback_inside_a_summary(self) -> None:
        out = derive_parent_candidates_from_page_summaries(
            [
                _Page(
                    "p1",
                    "Momofuku Daishō",
                    "Korean restaurant at 190 University Avenue, Toronto, ON M5H 0A3, Canada.",
                ),
                _Page("p2", "Nana", "Thai joint at 785 Queen St W, Toronto, ON M6J 1G1, Canada."),
            ]
        )
        assert [(c.parent_title, c.supporting_count) for c in out] == [("Toronto", 2)]

    def test_preposition_match_wins_over_the_address_without_double_counting(self) -> None:
        out = derive_parent_candidates_from_page_summaries(
            [
                _Page("p1", "Foo", "Restaurant in Austin, at 123 Main St, Austin, TX 78701, USA."),
                _Page("p2", "Bar", "Restaurant in Austin, at 456 Other St, Austin, TX 78702, USA."),
            ]
        )
        assert [(c.parent_title, c.supporting_count) for c in out] == [("Austin", 2)]

    @pytest.mark.parametrize(
        "summaries",
        [
            [
                "Sales opportunity, Prospect Interested In The Full PVL Product Line, active.",
                "Account note, Prospect Interested In The Full PVL Product Line, ongoing.",
            ],
            ["Cafe in St with great coffee.", "Bistro in St by the water."],
            ["Bar on Congress Ave for drinks.", "Cafe on Congress Ave nearby."],
        ],
    )
    def test_precision_filters(self, summaries: list[str]) -> None:
        pages = [_Page(f"p{index}", "X", summary) for index, summary in enumerate(summaries)]
        assert derive_parent_candidates_from_page_summaries(pages, min_cluster_size=1) == []

    def test_summary_candidates_are_summary_kind_with_overview_section_and_page_tags(self) -> None:
        out = derive_parent_candidates_from_page_summaries(
            [
                _Page("p1", "X", "Bistro in Paris.", ["food"]),
                _Page("p2", "Y", "Wine bar in Paris.", ["wine", "food"]),
            ]
        )
        paris = out[0]
        assert (paris.source_kind, paris.reason, paris.parent_type) == ("summary", "city", "topic")
        assert (paris.suggested_section_slug, paris.suggested_section_heading) == ("overview", "Overview")
        assert paris.observed_tags == ["food", "wine"]

    def test_pages_without_a_tags_attribute(self) -> None:
        @dataclass
        class _Untagged:
            id: str
            title: str
            summary: str | None

        out = derive_parent_candidates_from_page_summaries(
            [_Untagged("p1", "X", "Bistro in Paris.")], min_cluster_size=1
        )
        assert out[0].observed_tags == []


class TestMergeParentCandidates:
    def test_unions_supporting_ids_by_slug(self) -> None:
        records = derive_parent_candidates(
            _records(
                {"place_address": "1 A, Toronto, ON M6J 1G1, Canada"},
                {"place_address": "2 B, Toronto, ON M6J 1G2, Canada"},
            )
        )
        summaries = derive_parent_candidates_from_page_summaries(
            [_Page("p9", "Pai", "Thai kitchen in Toronto."), _Page("p10", "Canoe", "Fine dining in Toronto.")]
        )
        merged = merge_parent_candidates(records, summaries)
        assert len(merged) == 1
        toronto = merged[0]
        assert toronto.source_record_ids == ["r1", "r2", "p9", "p10"]
        assert toronto.supporting_count == 4
        # The first list's reason, section and kind win.
        assert toronto.source_kind == "record"

    def test_no_inputs(self) -> None:
        assert merge_parent_candidates() == []
        assert merge_parent_candidates([], []) == []

    def test_dedupes_ids_and_tags_sorts_and_leaves_inputs_untouched(self) -> None:
        def candidate(slug: str, ids: list[str], tags: list[str]) -> ParentCandidate:
            return ParentCandidate(
                reason="city",
                parent_title=slug.title(),
                parent_slug=slug,
                suggested_section_slug="overview",
                suggested_section_heading="Overview",
                source_record_ids=ids,
                observed_tags=tags,
                supporting_count=len(ids),
            )

        first = [candidate("paris", ["a", "b"], ["food"]), candidate("austin", ["c"], [])]
        second = [candidate("austin", ["c", "d", "e"], ["bbq"]), candidate("paris", ["b"], ["food", "wine"])]
        merged = merge_parent_candidates(first, second)
        assert [
            (c.parent_slug, c.source_record_ids, c.observed_tags, c.supporting_count) for c in merged
        ] == [
            ("austin", ["c", "d", "e"], ["bbq"], 3),
            ("paris", ["a", "b"], ["food", "wine"], 2),
        ]
        assert first[1].source_record_ids == ["c"] and first[1].supporting_count == 1


class TestIsGeoQualifiedExtension:
    @pytest.mark.parametrize(
        ("candidate", "target", "expected"),
        [
            ("Austin", "Austin, Texas", True),
            ("Paris", "Paris, France", True),
            ("Portland", "Portland, Oregon", True),
            ("Austin", "Austin Reggae Fest", False),
            ("Toronto", "Toronto Life", False),
            ("Honolulu", "Merriman's Honolulu", False),
            ("", "Austin, Texas", False),
            ("Austin", "", False),
            ("Austin", "Austin", False),
            ("AUSTIN", "Austin, Texas", True),
            ("São Paulo", "São Paulo, Brazil", True),
            # The word boundary is Unicode-aware: an ASCII \b would reject a candidate ending in "á".
            ("Bogotá", "Bogotá, Colombia", True),
            ("Bogotá", "Bogotáx, Colombia", False),
            ("Austin", "Austinite Club, TX", False),
            ("Austin", "Austin,Texas", False),
            ("St. Louis (MO)", "St. Louis (MO), USA", False),  # "\b" after ")" needs a word character next
        ],
    )
    def test_matrix(self, candidate: str, target: str, expected: bool) -> None:
        assert is_geo_qualified_extension(candidate, target) is expected


class TestSectionForPlaceTypes:
    @pytest.mark.parametrize(
        ("types", "section"),
        [
            (["cafe", "food"], ("coffee", "Coffee")),
            (["Coffee"], ("coffee", "Coffee")),
            (["meal_takeaway"], ("restaurants", "Restaurants")),
            (["natural_feature"], ("parks-and-outdoors", "Parks & Outdoors")),
            (["hotel"], ("lodging", "Lodging")),
            (["museum"], ("overview", "Overview")),
            ([], ("overview", "Overview")),
        ],
    )
    def test_narrowest_category_first(self, types: list[str], section: tuple[str, str]) -> None:
        assert section_for_place_types(types) == section
