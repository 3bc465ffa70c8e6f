"""The sample corpus: deterministic, well-formed, and shaped the way the compiler's tests rely on."""

from __future__ import annotations

import io
import json
import re
import time
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from functools import cache
from typing import Any

import pytest

from domain.aliases import normalize_alias, trigrams
from domain.aliases import trigram_similarity as similarity
from domain.memory import MemoryIn
from domain.parents import extract_city_from_address
from sample.corpus import (
    ALL_PLACES,
    DECISIONS,
    NAME_VARIANTS,
    RARE_NAMES,
    RECURRING_ENTITIES,
    TRIPS,
    generate_sample,
    main_write,
    write_sample_jsonl,
)
from sample.schedule import BATCH_SIZE

FUZZY_ALIAS_THRESHOLD = 0.85


@cache
def corpus(memories: int, seed: int = 7) -> tuple[dict[str, Any], ...]:
    # Cached: rows are only read, and several tests look at the same corpus.
    return tuple(generate_sample(memories, seed))


def _entities(rows: tuple[dict[str, Any], ...]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, e) for i, row in enumerate(rows) for e in row["metadata"].get("entities", [])]


@cache
def _canonical_by_written() -> dict[str, str]:
    names: dict[str, str] = {}
    for spec in RECURRING_ENTITIES:
        for written in (spec.name, *spec.aliases, *(variant for variant, _ in spec.variants)):
            names[normalize_alias(written)] = spec.name
    return names


def _moment(row: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(row["occurred_at"].replace("Z", "+00:00"))


# --------------------------------------------------------------------------- determinism and shape


def test_same_seed_gives_byte_identical_jsonl() -> None:
    first, second = io.StringIO(), io.StringIO()
    write_sample_jsonl(first, 300, 7)
    write_sample_jsonl(second, 300, 7)
    assert first.getvalue() == second.getvalue()
    assert len(first.getvalue().splitlines()) == 300


def test_different_seeds_give_different_corpora() -> None:
    seven = [row["content"] for row in generate_sample(300, 7)]
    eight = [row["content"] for row in generate_sample(300, 8)]
    assert seven != eight


@pytest.mark.parametrize("memories", [0, 1, 37, 700])
def test_returns_the_requested_number_of_memories(memories: int) -> None:
    assert len(generate_sample(memories)) == memories


def test_negative_count_is_refused() -> None:
    with pytest.raises(ValueError, match="memories"):
        generate_sample(-1)


def test_rows_have_the_documented_shape() -> None:
    for row in corpus(700):
        assert list(row) == ["content", "metadata", "occurred_at"]
        assert set(row["metadata"]) <= {"entities", "place", "journal", "tags"}
        for entity in row["metadata"].get("entities", []):
            assert entity["type"] in {"entity", "topic", "decision"}
            assert entity["name"] and entity["kind"]
        place = row["metadata"].get("place")
        if place is not None:
            assert set(place) == {"name", "city", "address", "types"}


def test_retained_ids_are_unique_and_differ_between_scopes() -> None:
    memories = [MemoryIn.model_validate(row) for row in corpus(700)]
    alice = {memory.resolved_id("t1", "alice") for memory in memories}
    assert len(alice) == len(memories)
    assert alice.isdisjoint(memory.resolved_id("t2", "alice") for memory in memories)


def test_memories_are_in_strict_chronological_order_over_nine_months() -> None:
    rows = corpus(3000)
    stamps = [row["occurred_at"] for row in rows]
    assert all(re.fullmatch(r"2026-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp) for stamp in stamps)
    moments = [_moment(row) for row in rows]
    assert all(a < b for a, b in zip(moments, moments[1:], strict=False))
    assert moments[0].month == 1 and moments[-1].month == 9


def test_content_is_plain_prose_that_names_its_entities() -> None:
    for row in corpus(700):
        content = row["content"]
        assert content[-1] == "." and content[0].isupper()
        assert not re.search(r"\*\*|\[\[|\]\(|^#|`|\{|\}", content), content
        for entity in row["metadata"].get("entities", []):
            assert entity["name"].lower() in content.lower(), (entity["name"], content)


def test_most_memories_are_tagged() -> None:
    rows = corpus(700)
    tagged = [row for row in rows if row["metadata"].get("tags")]
    assert len(tagged) >= 0.85 * len(rows)
    all_tags = {tag for row in tagged for tag in row["metadata"]["tags"]}
    assert {"food", "bbq", "coffee", "outdoors", "travel", "family", "work"} <= all_tags


def test_generation_is_fast() -> None:
    # Best of three, so a busy machine does not fail the test; one run takes about a tenth of a second.
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        generate_sample(3000)
        timings.append(time.perf_counter() - started)
    assert min(timings) < 1.0


def test_main_write_writes_a_file_or_stdout(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "sample.jsonl"
    assert main_write(str(target), 20, 3) == 20
    from_file = target.read_text(encoding="utf-8")
    assert main_write("-", 20, 3) == 20
    assert capsys.readouterr().out == from_file
    assert [json.loads(line) for line in from_file.splitlines()] == generate_sample(20, 3)


# --------------------------------------------------------------------------- places and addresses

# What the city rule (domain.parents.extract_city_from_address) reads from each address format. UK and
# Japanese addresses put the postcode after the city with no comma, so the rule keeps it there.
EXPECTED_ADDRESS_CITY = {
    "Austin": "Austin",
    "San Francisco": "San Francisco",
    "Toronto": "Toronto",
    "Paris": "Paris",
    "Mexico City": "Ciudad de México",
    "Lisbon": "Lisboa",
    "London": "London",
    "Tokyo": "Tokyo",
}
ADDRESS_FORMATS = {
    "US": re.compile(r", [A-Z][a-z]+(?: [A-Z][a-z]+)*, [A-Z]{2} \d{5}, USA$"),
    "Canada": re.compile(r", Toronto, ON [A-Z]\d[A-Z] \d[A-Z]\d, Canada$"),
    "France": re.compile(r", 750\d\d Paris, France$"),
    "Mexico": re.compile(r", \d{5} Ciudad de México, CDMX, Mexico$"),
    "Portugal": re.compile(r", \d{4}-\d{3} Lisboa, Portugal$"),
    "UK": re.compile(r", London [A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}, UK$"),
    "Japan": re.compile(r", [A-Z][a-z]+ City, Tokyo \d{3}-\d{4}, Japan$"),
}


def test_every_address_format_is_present_and_the_city_rule_reads_it() -> None:
    places = [row["metadata"]["place"] for row in corpus(700) if "place" in row["metadata"]]
    cities = {place["city"] for place in places}
    assert cities == set(EXPECTED_ADDRESS_CITY)
    for country, pattern in ADDRESS_FORMATS.items():
        assert any(pattern.search(place["address"]) for place in places), country
    for place in places:
        assert any(pattern.search(place["address"]) for pattern in ADDRESS_FORMATS.values()), place["address"]
        parsed = extract_city_from_address(place["address"])
        expected = EXPECTED_ADDRESS_CITY[place["city"]]
        assert parsed is not None
        assert parsed == expected or parsed.startswith(expected + " "), (place["address"], parsed)


def test_every_catalogue_address_is_in_a_known_format() -> None:
    # Covers places a small corpus may not reach.
    for place in ALL_PLACES:
        assert any(pattern.search(place.address) for pattern in ADDRESS_FORMATS.values()), place.address
        parsed = extract_city_from_address(place.address)
        expected = EXPECTED_ADDRESS_CITY[place.city.name]
        assert parsed == expected or (parsed or "").startswith(expected + " "), (place.address, parsed)


def test_place_types_cover_every_parent_section() -> None:
    types = {tuple(row["metadata"]["place"]["types"]) for row in corpus(700) if "place" in row["metadata"]}
    assert {("restaurant", "food"), ("cafe",), ("park",), ("lodging", "hotel")} <= types


def test_place_entity_is_the_place_as_written() -> None:
    for row in corpus(700):
        place = row["metadata"].get("place")
        if place is not None:
            assert place["name"] in [entity["name"] for entity in row["metadata"]["entities"]]


def _visits_by_place(rows: tuple[dict[str, Any], ...]) -> dict[tuple[str, str], list[datetime]]:
    canonical = _canonical_by_written()
    visits: dict[tuple[str, str], list[datetime]] = defaultdict(list)
    for row in rows:
        place = row["metadata"].get("place")
        if place is not None:
            visits[(place["city"], canonical[normalize_alias(place["name"])])].append(_moment(row))
    return visits


def test_austin_is_dense_in_the_3000_corpus() -> None:
    visits = _visits_by_place(corpus(3000))
    revisited = [
        name
        for (city, name), moments in visits.items()
        if city == "Austin" and len(moments) >= 2 and max(moments) - min(moments) >= timedelta(days=30)
    ]
    assert len(revisited) >= 25
    assert "Franklin Barbecue" in revisited


def test_toronto_has_at_least_three_restaurants_including_momofuku() -> None:
    restaurants = {
        row["metadata"]["place"]["name"]
        for row in corpus(700)
        if row["metadata"].get("place", {}).get("city") == "Toronto"
        and "restaurant" in row["metadata"]["place"]["types"]
    }
    canonical_of = _canonical_by_written()
    canonical = {canonical_of[normalize_alias(name)] for name in restaurants}
    assert len(canonical) >= 3
    assert "Momofuku Daishō" in canonical


def test_favourites_recur_much_more_than_most_places() -> None:
    counts = sorted(len(moments) for moments in _visits_by_place(corpus(700)).values())
    median = counts[len(counts) // 2]
    assert 2 <= median <= 8
    assert counts[-1] >= 25
    assert len(counts) >= 50


# --------------------------------------------------------------------------- journals, nicknames, variants


def test_trip_memories_carry_their_journal_and_are_consecutive() -> None:
    rows = corpus(700)
    positions: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        journal = row["metadata"].get("journal")
        if journal is not None:
            positions[journal["id"]].append(index)
            assert journal["title"] == next(t.title for t in TRIPS if t.journal_id == journal["id"])
    assert set(positions) == {trip.journal_id for trip in TRIPS}
    assert {"j-paris-2026", "j-toronto-2026"} <= set(positions)
    for indices in positions.values():
        assert indices == list(range(indices[0], indices[-1] + 1))
        assert len(indices) >= 5


def test_nicknames_are_written_with_the_other_names_as_aliases() -> None:
    by_name = defaultdict(list)
    for _, entity in _entities(corpus(700)):
        by_name[entity["name"]].append(entity)
    assert {"Biscuit the corgi", "Bisky"} <= set(by_name["Biscuit"][0]["aliases"])
    assert "Biscuit" in by_name["Bisky"][0]["aliases"]
    assert "Biscuit" in by_name["Biscuit the corgi"][0]["aliases"]
    assert "Chef João" in by_name["João"][0]["aliases"]
    paris = by_name["Paris, France"][0]
    assert (paris["type"], paris["kind"], paris["aliases"]) == ("topic", "city", ["Paris"])


def test_pet_and_friend_recur_across_the_whole_span() -> None:
    rows = corpus(700)
    canonical_of = _canonical_by_written()
    for canonical in ("Biscuit", "Chef João"):
        moments = [
            _moment(rows[i])
            for i, entity in _entities(rows)
            if canonical_of.get(normalize_alias(entity["name"])) == canonical
        ]
        assert min(moments).month <= 2 and max(moments).month >= 8, canonical


def test_required_spelling_variants_appear_in_the_700_corpus() -> None:
    written = {entity["name"] for _, entity in _entities(corpus(700))}
    required = {
        "franklin barbecue",
        "Cafe de Flore",
        "Café de Flore",
        "Momofuku Daisho",
        "Momofuku Daishō",
        "Paris, France",
        "Paris",
        "Tartine Manufacttory",
        "Chef Joao",
    }
    assert required <= written
    typos_used = {variant for _, variant, how in NAME_VARIANTS if how == "typo" and variant in written}
    assert len(typos_used) >= 4


@pytest.mark.parametrize(("canonical", "variant"), [(c, v) for c, v, how in NAME_VARIANTS if how == "typo"])
def test_typo_variants_stay_within_fuzzy_alias_distance(canonical: str, variant: str) -> None:
    score = similarity(normalize_alias(canonical), normalize_alias(variant))
    assert FUZZY_ALIAS_THRESHOLD <= score < 1.0, score


def test_accent_and_case_variants_normalise_to_the_canonical_alias() -> None:
    for canonical, variant, how in NAME_VARIANTS:
        if how in {"accent", "case"}:
            assert variant != canonical
            assert normalize_alias(variant) == normalize_alias(canonical), (canonical, variant)


def test_trigram_helper_matches_pg_trgm() -> None:
    # Expected values are what pg_trgm on PostgreSQL 18 returns for the same calls.
    assert similarity("word", "words") == pytest.approx(0.5714286)
    assert similarity("barton springs pool", "barton spring pool") == pytest.approx(0.8571429)
    assert similarity("café crème", "cafe creme") == pytest.approx(0.3333333)
    assert similarity("Paris", "paris") == 1.0
    assert similarity("x_y", "x y") == 1.0
    assert similarity("abc", "xyz") == 0.0
    assert trigrams("a-b") == {"  a", " a ", "  b", " b "}


# --------------------------------------------------------------------------- decisions, rare and passing names


def test_decisions_are_mentioned_one_to_three_times() -> None:
    counts = Counter(entity["name"] for _, entity in _entities(corpus(700)) if entity["type"] == "decision")
    assert set(counts) == {storyline.entity.name for storyline in DECISIONS}
    assert all(1 <= count <= 3 for count in counts.values())
    assert "Book the Lisbon apartment for June" in counts
    assert all(
        entity["kind"] == "decision" for _, entity in _entities(corpus(700)) if entity["type"] == "decision"
    )


@pytest.mark.parametrize("memories", [700, 3000])
def test_rare_names_recur_three_or_four_times_each_in_its_own_batch(memories: int) -> None:
    rows = corpus(memories)
    for storyline in RARE_NAMES:
        name = storyline.entity.name
        positions = [i for i, entity in _entities(rows) if entity["name"] == name]
        assert len(positions) == len(storyline.lines) and 3 <= len(positions) <= 4, name
        assert sum(name in row["content"] for row in rows) == len(positions)
        assert all(b - a > BATCH_SIZE for a, b in zip(positions, positions[1:], strict=False)), positions
        spread = _moment(rows[positions[-1]]) - _moment(rows[positions[0]])
        assert spread <= timedelta(weeks=12), (name, spread)


@pytest.mark.parametrize("memories", [700, 3000])
def test_passing_names_appear_exactly_once(memories: int) -> None:
    rows = corpus(memories)
    recurring = set(_canonical_by_written())
    passing = [
        entity["name"] for _, entity in _entities(rows) if normalize_alias(entity["name"]) not in recurring
    ]
    assert len(passing) >= 0.03 * memories
    assert len(set(passing)) == len(passing)
    contents = [row["content"].lower() for row in rows]
    for name in passing:
        assert sum(content.count(name.lower()) for content in contents) == 1, name
