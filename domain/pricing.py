"""Model prices and the cost of a call (USD per million tokens, Anthropic list prices).

Every model call is priced by the model that served it, cache writes and reads included
(the original priced everything at Haiku input/output rates).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from domain.compile_messages import TokenCounts

TOKENS_PER_PRICE_UNIT = 1_000_000


class ModelPrice(BaseModel):
    model_config = ConfigDict(frozen=True)

    family: str
    input: float
    output: float
    cache_write: float
    cache_read: float
    # False when the model id matched no family and the fallback (Haiku) prices were used.
    known: bool = True


class TokenUsage(BaseModel):
    """Token counts of one or more calls. `input_tokens` excludes the cached tokens, as the API reports."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        if not isinstance(other, TokenUsage):
            return NotImplemented
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )


FALLBACK_FAMILY = "claude-haiku-4-5"

PRICES: dict[str, ModelPrice] = {
    "claude-haiku-4-5": ModelPrice(
        family="claude-haiku-4-5", input=1.00, output=5.00, cache_write=1.25, cache_read=0.10
    ),
    "claude-sonnet-4-5": ModelPrice(
        family="claude-sonnet-4-5", input=3.00, output=15.00, cache_write=3.75, cache_read=0.30
    ),
    "claude-sonnet-4": ModelPrice(
        family="claude-sonnet-4", input=3.00, output=15.00, cache_write=3.75, cache_read=0.30
    ),
    "claude-opus-4-1": ModelPrice(
        family="claude-opus-4-1", input=15.00, output=75.00, cache_write=18.75, cache_read=1.50
    ),
}

# Longest family first, so "claude-sonnet-4-5-…" is not taken for "claude-sonnet-4".
_FAMILIES_BY_SPECIFICITY = sorted(PRICES, key=len, reverse=True)


def _family_pattern(family: str) -> re.Pattern[str]:
    # The family must stand on its own: start of the id or after a provider prefix ("anthropic.",
    # "us.anthropic."), and not run on into another version digit ("claude-sonnet-45" is not 4).
    return re.compile(rf"(?:^|[./:]){re.escape(family)}(?![0-9])")


_FAMILY_PATTERNS = [(family, _family_pattern(family)) for family in _FAMILIES_BY_SPECIFICITY]


def price_for(model_id: str) -> ModelPrice:
    """Prices of the model family in `model_id`, accepting Anthropic ids ("claude-haiku-4-5-20251001")
    and Bedrock ids ("anthropic.claude-…-v1:0", "us.anthropic.claude-…"). Unknown ids get the Haiku
    prices with `known=False`, so costs stay estimated rather than silently zero."""
    normalized = model_id.strip().lower()
    for family, pattern in _FAMILY_PATTERNS:
        if pattern.search(normalized):
            return PRICES[family]
    return PRICES[FALLBACK_FAMILY].model_copy(update={"known": False})


def cost_usd(model_id: str, usage: TokenUsage) -> float:
    price = price_for(model_id)
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    ) / TOKENS_PER_PRICE_UNIT
    return round(total, 6)


def estimate_tokens(chars: int) -> int:
    """Tokens of a text of `chars` characters, at the usual four characters a token."""
    return (chars + 3) // 4


def priced(model_id: str, usage: TokenUsage) -> TokenCounts:
    """The call's token counts with its cost at `model_id`'s prices."""
    return TokenCounts(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
        cost_usd=cost_usd(model_id, usage),
    )
