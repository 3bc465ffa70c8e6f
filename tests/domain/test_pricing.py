"""Per-model prices and call costs."""

from __future__ import annotations

import pytest

from domain.pricing import TokenUsage, cost_usd, price_for

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
    "model_id", ["openai.gpt-oss-120b-1:0", "claude-opus-4-20250514", "claude-sonnet-45"]
)
def test_unknown_models_get_haiku_prices_flagged_as_unknown(model_id: str) -> None:
    price = price_for(model_id)
    assert not price.known
    assert (price.input, price.output, price.cache_write, price.cache_read) == (1.00, 5.00, 1.25, 0.10)


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
