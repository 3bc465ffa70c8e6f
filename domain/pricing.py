"""Model prices and the cost of a call (USD per million tokens, Anthropic list prices).

Every model call is priced by the model that served it, cache writes and reads included: a price
taken from one model for all would misstate every run that mixes models or reuses a cached prompt.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

TOKENS_PER_PRICE_UNIT = 1_000_000
# Message Batches are billed at half the list price, on every token type (input, output, cache
# writes and reads alike).
BATCH_DISCOUNT = 0.5


class TokenCounts(BaseModel):
    """A call's token counts (as the API reports them) and its cost: what a model activity returns."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0


class ModelPrice(BaseModel):
    model_config = ConfigDict(frozen=True)

    family: str
    input: float
    output: float
    cache_write: float
    cache_read: float
    # Shortest prompt prefix a cache breakpoint caches for this model.
    min_cacheable_tokens: int = 4096
    # False when the model id matched no family and a fallback price was used (see price_for).
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


def _price(family: str, input_: float, output: float, *, cache_write: float | None = None,
           cache_read: float | None = None, min_cacheable_tokens: int = 4096) -> ModelPrice:
    # Where the list gives no cache rates, the standard multipliers: 1.25x input for a 5-minute
    # cache write, 0.1x input for a cache read.
    return ModelPrice(family=family, input=input_, output=output,
                      cache_write=round(input_ * 1.25, 6) if cache_write is None else cache_write,
                      cache_read=round(input_ * 0.10, 6) if cache_read is None else cache_read,
                      min_cacheable_tokens=min_cacheable_tokens)


# Anthropic's list prices (USD per million tokens; 5-minute cache writes), newest models first.
# min_cacheable_tokens: the shortest prefix a cache breakpoint caches for that model (a shorter one
# is silently not cached); 4,096 where no smaller minimum is documented, so we never count on a
# cache that would not form.
PRICES: dict[str, ModelPrice] = {
    price.family: price
    for price in (
        _price("claude-fable-5-1", 10.00, 50.00, cache_write=12.50, cache_read=0.25),
        _price("claude-mythos-5-1", 10.00, 50.00, cache_write=12.50, cache_read=0.25),
        _price("claude-fable-5", 10.00, 50.00, cache_write=12.50, cache_read=1.00),
        _price("claude-mythos-5", 10.00, 50.00, cache_write=12.50, cache_read=1.00),
        _price("claude-opus-5-5", 4.00, 20.00),
        _price("claude-sonnet-5-5", 2.00, 10.00),
        # Haiku 5.5's lower band (prompts up to 100k tokens), the band a compile's calls are in.
        _price("claude-haiku-5-5", 0.10, 0.50),
        _price("claude-opus-5", 5.00, 25.00, cache_write=6.25, cache_read=0.50),
        _price("claude-sonnet-5", 2.00, 10.00),
        _price("claude-opus-4-8", 5.00, 25.00, cache_write=6.25, cache_read=0.50),
        _price("claude-opus-4-7", 5.00, 25.00, cache_write=6.25, cache_read=0.50),
        _price("claude-opus-4-6", 5.00, 25.00, cache_write=6.25, cache_read=0.50),
        _price("claude-sonnet-4-6", 3.00, 15.00, cache_write=3.75, cache_read=0.30, min_cacheable_tokens=2048),
        _price("claude-opus-4-5", 5.00, 25.00, cache_write=6.25, cache_read=0.50),
        _price("claude-sonnet-4-5", 3.00, 15.00, cache_write=3.75, cache_read=0.30, min_cacheable_tokens=1024),
        _price("claude-haiku-4-5", 1.00, 5.00, cache_write=1.25, cache_read=0.10),
        _price("claude-opus-4-1", 15.00, 75.00, cache_write=18.75, cache_read=1.50, min_cacheable_tokens=1024),
        _price("claude-opus-4", 15.00, 75.00, cache_write=18.75, cache_read=1.50, min_cacheable_tokens=1024),
        _price("claude-sonnet-4", 3.00, 15.00, cache_write=3.75, cache_read=0.30, min_cacheable_tokens=1024),
        _price("claude-3-7-sonnet", 3.00, 15.00, cache_write=3.75, cache_read=0.30, min_cacheable_tokens=1024),
        _price("claude-3-5-haiku", 0.80, 4.00, cache_write=1.00, cache_read=0.08, min_cacheable_tokens=2048),
        _price("claude-3-haiku", 0.25, 1.25, cache_write=0.30, cache_read=0.03, min_cacheable_tokens=2048),
    )
}
# Tiers, for pricing an id the table does not know yet (a newer snapshot or model of a known tier).
TIERS = ("fable", "mythos", "opus", "sonnet", "haiku")

# Longest family first, so "claude-sonnet-4-5-…" is not taken for "claude-sonnet-4".
_FAMILIES_BY_SPECIFICITY = sorted(PRICES, key=len, reverse=True)


def _family_pattern(family: str) -> re.Pattern[str]:
    # The family must stand on its own: start of the id or after a provider prefix ("anthropic.",
    # "us.anthropic."), and not run on into another version digit ("claude-sonnet-45" is not 4).
    # Dated ids ("claude-opus-4-20250514") are their family: an 8-digit date is not a version.
    return re.compile(rf"(?:^|[./:]){re.escape(family)}(?![0-9]|-[0-9](?![0-9]{{7}}))")


_FAMILY_PATTERNS = [(family, _family_pattern(family)) for family in _FAMILIES_BY_SPECIFICITY]


def _most_expensive(prices: list[ModelPrice]) -> ModelPrice:
    return max(prices, key=lambda price: (price.output, price.input))


def price_for(model_id: str) -> ModelPrice:
    """Prices of the model family in `model_id`, accepting Anthropic ids ("claude-haiku-4-5-20251001")
    and Bedrock ids ("anthropic.claude-…-v1:0", "us.anthropic.claude-…", inference profile ARNs).

    The fallback, for an id the table does not know (`known=False`): the most expensive known model of
    the same tier when the id names one ("claude-sonnet-9" at the dearest Sonnet), else the most
    expensive model of all. A cost is then an upper estimate, never silently low or zero."""
    normalized = model_id.strip().lower()
    for family, pattern in _FAMILY_PATTERNS:
        if pattern.search(normalized):
            return PRICES[family]
    tier = next((tier for tier in TIERS if tier in normalized), None)
    same_tier = [price for price in PRICES.values() if tier and tier in price.family]
    fallback = _most_expensive(same_tier or list(PRICES.values()))
    return fallback.model_copy(update={"known": False})


def flat_price(input_per_million: float, output_per_million: float) -> ModelPrice:
    """The price an operator sets for a model of their own server (an OpenAI-compatible one): input
    and output per million tokens, prompt tokens the server reports as cached at the input price (a
    local server charges nothing for either; 0 and 0 unless set)."""
    return ModelPrice(family="operator-set", input=input_per_million, output=output_per_million,
                      cache_write=input_per_million, cache_read=input_per_million)


def cost_usd(model_id: str, usage: TokenUsage, *, batch: bool = False, price: ModelPrice | None = None) -> float:
    """The call's cost at list prices, or at the Message Batches price (`batch`: half of it); at
    `price` instead when given (a model the list does not price: an operator's own server)."""
    price = price or price_for(model_id)
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    ) / TOKENS_PER_PRICE_UNIT
    return round(total * (1 - BATCH_DISCOUNT) if batch else total, 6)


def estimate_tokens(chars: int) -> int:
    """Tokens of a text of `chars` characters, at the usual four characters a token."""
    return (chars + 3) // 4


def priced(model_id: str, usage: TokenUsage, *, batch: bool = False, price: ModelPrice | None = None) -> TokenCounts:
    """The call's token counts with its cost at `model_id`'s prices (`batch`: the Message Batches price),
    or at `price` when given."""
    return TokenCounts(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
        cost_usd=cost_usd(model_id, usage, batch=batch, price=price),
    )


def cache_prefix_worthwhile(model_id: str, prefix_tokens: int) -> bool:
    """Whether a cache breakpoint after a stable prefix of `prefix_tokens` can ever be read back: the
    prefix must reach the model's minimum cacheable length (a shorter one is never cached)."""
    return prefix_tokens >= price_for(model_id).min_cacheable_tokens
