"""Search input rules: Unicode-aware terms, the prefix tsquery, the limit, LIKE escaping."""

from __future__ import annotations

import pytest

from domain.search import clamp_search_limit, escape_like, normalize_search_terms


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("Franklin BBQ", ["franklin", "bbq"]),
        ("  empan ", ["empan"]),
        ("Café du Monde", ["café", "du", "monde"]),  # a letter with its accent is one letter, not a word break
        ("東京 タワー", ["東京", "タワー"]),
        ("a b c", []),  # single characters are dropped
        ("o'brien's pub", ["brien", "pub"]),
        ("tacos tacos TACOS", ["tacos"]),
        ("snake_case-word", ["snake", "case", "word"]),
        ("ＦＵＬＬ width", ["full", "width"]),  # NFKC folds full-width letters
        ("%_*:&|!", []),
    ],
)
def test_terms_are_letter_and_digit_runs(query, terms):
    assert normalize_search_terms(query) == terms


@pytest.mark.parametrize(("limit", "expected"), [(None, 20), (0, 1), (-5, 1), (7, 7), (50, 50), (51, 50)])
def test_the_limit_is_clamped_like_the_resolver(limit, expected):
    assert clamp_search_limit(limit) == expected


def test_like_wildcards_match_themselves():
    assert escape_like("100%_sure\\") == "100\\%\\_sure\\\\"
    assert escape_like("plain") == "plain"
