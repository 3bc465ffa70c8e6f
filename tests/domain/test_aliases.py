import pytest

from domain.aliases import (
    attested_title,
    format_heading_from_slug,
    normalize_alias,
    seed_aliases_for_title,
    slugify_title,
)


class TestNormalizeAlias:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            # Punctuation becomes space, apostrophes and hyphens stay, diacritics are folded.
            ("Café  Mocha!", "cafe mocha"),
            ("O'Hara's Pub-House", "o'hara's pub-house"),
            ("!!! ... ???", ""),
            # Accented names match their plain spelling; a dotted capital I folds to "i", not "i stanbul".
            ("Chef João", "chef joao"),
            ("İstanbul", "istanbul"),
            ("Montréal", "montreal"),
            ("Crème Brûlée", "creme brulee"),
        ],
    )
    def test_folds_case_punctuation_and_diacritics(self, raw: str, expected: str) -> None:
        assert normalize_alias(raw) == expected

    @pytest.mark.parametrize(
        ("raw", "expected"),
        [("ﬁle", "file"), ("x²", "x2"), ("Ⅻ", "xii"), ("ＡＢＣ", "abc")],
    )
    def test_nfkc_folds_compatibility_characters(self, raw: str, expected: str) -> None:
        assert normalize_alias(raw) == expected

    def test_typographic_apostrophe_and_underscore_become_spaces(self) -> None:
        assert normalize_alias("O’Hara_s") == "o hara s"

    def test_collapses_every_kind_of_whitespace(self) -> None:
        assert normalize_alias("  Franklin\t\nBarbecue\u00a0 ") == "franklin barbecue"

    def test_keeps_letters_of_other_scripts(self) -> None:
        assert normalize_alias("東京 タワー") == "東京 タワー"
        assert normalize_alias("서울") == "서울"  # Hangul survives the decompose/recompose round trip

    def test_is_idempotent(self) -> None:
        once = normalize_alias("  Chef JOÃO's  Café-Bar! ")
        assert normalize_alias(once) == once


class TestSeedAliases:
    def test_emits_the_normalised_title(self) -> None:
        assert seed_aliases_for_title("Taberna dos Mercadores") == ["taberna dos mercadores"]

    def test_returns_nothing_for_punctuation_only_titles(self) -> None:
        assert seed_aliases_for_title("!!!") == []


class TestSlugifyTitle:
    @pytest.mark.parametrize(
        ("title", "expected"),
        [
            ("Taberna dos Mercadores", "taberna-dos-mercadores"),
            ("Café Mocha!", "cafe-mocha"),
            ("  ---Foo & Bar---  ", "foo-bar"),
            ("Momofuku Daishō", "momofuku-daisho"),
            ("Straße", "stra-e"),
            ("東京", ""),
            ("Austin Nature & Science Center", "austin-nature-science-center"),
            ("Johnson's (Grocery)", "johnson-s-grocery"),
        ],
    )
    def test_original_algorithm(self, title: str, expected: str) -> None:
        assert slugify_title(title) == expected

    def test_caps_at_120_characters(self) -> None:
        assert slugify_title("a" * 200) == "a" * 120

    def test_cuts_after_the_dash_trim_so_a_trailing_dash_can_survive(self) -> None:
        assert slugify_title("a" * 119 + " bc") == "a" * 119 + "-"


class TestFormatHeadingFromSlug:
    @pytest.mark.parametrize(
        ("slug", "expected"),
        [
            ("visits", "Visits"),
            ("parks-and-outdoors", "Parks And Outdoors"),
            ("related_entities", "Related Entities"),
            ("a--b__c", "A B C"),
            ("-lead", " Lead"),
        ],
    )
    def test_capitalises_each_part(self, slug: str, expected: str) -> None:
        assert format_heading_from_slug(slug) == expected


class TestAttestedTitle:
    @pytest.mark.parametrize(
        ("title", "attested", "expected"),
        [
            ("Franklin Barbecue, Charlotte", [("Franklin Barbecue, Charlotte", 1), ("Franklin Barbecue", 2)],
             "Franklin Barbecue"),
            ("Ivy Hotel", [("The Ivy Hotel", 2), ("Ivy Hotel", 2)], "The Ivy Hotel"),  # equals: the first seen
            ("Uchi", [("UCHI", 5), ("uchi", 3)], "Uchi"),  # nothing properly cased: the title stays
            ("UCHI", [("UCHI", 5), ("Uchi", 1)], "Uchi"),  # properly cased beats more frequent shouting
            ("Odd Duck", [], "Odd Duck"),
        ],
    )
    def test_the_most_frequent_properly_cased_spelling(self, title, attested, expected) -> None:
        assert attested_title(title, attested) == expected
