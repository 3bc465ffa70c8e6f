"""Per-model prices and call costs."""

from __future__ import annotations

import pytest

from domain.pricing import TokenUsage, cache_prefix_worthwhile, cost_usd, price_for

MILLION = 1_000_000


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("claude-haiku-4-5", "claude-haiku-4-5"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1"),
    ],
)
def test_model_ids_match_their_family(model_id: str, family: str) -> None:
    price = price_for(model_id)
    assert price.family == family
    assert price.known


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("claude-haiku-5-5", "claude-haiku-5-5"),
        ("us.anthropic.claude-opus-4-6-v1", "claude-opus-4-6"),
        ("claude-fable-5-1", "claude-fable-5-1"),
        ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
    ],
)
def test_current_and_older_models_are_in_the_table(model_id: str, family: str) -> None:
    price = price_for(model_id)
    assert (price.family, price.known) == (family, True)


@pytest.mark.parametrize(
    ("model_id", "expected_output_price"),
    [
        ("claude-sonnet-45", 15.00),  # a Sonnet the table does not know: the dearest Sonnet
        ("claude-haiku-9-9", 5.00),  # the dearest Haiku
        ("openai.gpt-oss-120b-1:0", 75.00),  # no tier named: the dearest model of all
    ],
)
def test_unknown_models_get_the_dearest_price_of_their_tier_flagged_as_unknown(
        model_id: str, expected_output_price: float) -> None:
    price = price_for(model_id)
    assert not price.known
    assert price.output == expected_output_price


def test_a_cache_breakpoint_is_worthwhile_only_past_the_models_minimum() -> None:
    assert not cache_prefix_worthwhile("claude-haiku-4-5", 4095)
    assert cache_prefix_worthwhile("claude-haiku-4-5", 4096)
    assert cache_prefix_worthwhile("claude-sonnet-4-5", 1024)


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        ("claude-haiku-4-5", 1.00 + 5.00 + 1.25 + 0.10),
        ("claude-sonnet-4-5", 3 + 15 + 3.75 + 0.30),
        ("claude-sonnet-4", 3 + 15 + 3.75 + 0.30),
        ("claude-opus-4-1", 15 + 75 + 18.75 + 1.50),
    ],
)
def test_a_million_tokens_of_each_kind_costs_the_list_prices(model_id: str, expected: float) -> None:
    usage = TokenUsage(
        input_tokens=MILLION,
        output_tokens=MILLION,
        cache_creation_input_tokens=MILLION,
        cache_read_input_tokens=MILLION,
    )
    assert cost_usd(model_id, usage) == pytest.approx(expected)


def test_cost_is_rounded_to_six_decimals() -> None:
    # 1 input token of Haiku is 0.000001 USD; 7 cache-read tokens are 0.0000007 USD.
    assert cost_usd("claude-haiku-4-5", TokenUsage(input_tokens=1, cache_read_input_tokens=7)) == 0.000002
    assert cost_usd("claude-haiku-4-5", TokenUsage()) == 0.0


def test_usages_add_up() -> None:
    first = TokenUsage(
        input_tokens=1, output_tokens=2, cache_creation_input_tokens=3, cache_read_input_tokens=4
    )
    second = TokenUsage(
        input_tokens=10, output_tokens=20, cache_creation_input_tokens=30, cache_read_input_tokens=40
    )

    assert first + second == TokenUsage(
        input_tokens=11, output_tokens=22, cache_creation_input_tokens=33, cache_read_input_tokens=44
    )
    assert sum([first, second], TokenUsage()) == first + second
