"""Metric 4: tokens and cost per memory, from the ledger of a 700-memory compile.

The tokens are what the Claude simulator reported for the product's real calls (the anthropic SDK
over loopback HTTP; four characters a simulated token), prompt caching included: a breakpoint only
where the prefix is stable and long enough for the model (none on Haiku 4.5, whose 4,096-token
minimum the planner's ~2,800-token prefix misses). "Uncached" prices cache reads and writes as
plain input.
"""

from __future__ import annotations

from domain.pricing import TokenUsage, cost_usd, price_for

# The original's published figure: $0.50-$1.00 for about 700 memories.
ORIGINAL_USD_PER_700 = (0.50, 1.00)
ORIGINAL_MEMORIES = 700


def per_1000(amount: float, memories: int) -> float:
    return amount * 1000 / memories


def cost_per_memory(ledger: dict[str, float], model_id: str) -> dict:
    memories = int(ledger["records_read"])
    cached = TokenUsage(
        input_tokens=int(ledger["input_tokens"]), output_tokens=int(ledger["output_tokens"]),
        cache_creation_input_tokens=int(ledger["cache_creation_input_tokens"]),
        cache_read_input_tokens=int(ledger["cache_read_tokens"]),
    )
    uncached = TokenUsage(
        input_tokens=cached.input_tokens + cached.cache_read_input_tokens + cached.cache_creation_input_tokens,
        output_tokens=cached.output_tokens,
    )
    original_low, original_high = (per_1000(usd, ORIGINAL_MEMORIES) for usd in ORIGINAL_USD_PER_700)
    return {
        "model_id": model_id,
        "prices_usd_per_million_tokens": price_for(model_id).model_dump(exclude={"known"}),
        "memories": memories,
        "tokens_per_memory": {
            "input": round(cached.input_tokens / memories, 1),
            "output": round(cached.output_tokens / memories, 1),
            "cache_read": round(cached.cache_read_input_tokens / memories, 1),
            "cache_creation": round(cached.cache_creation_input_tokens / memories, 1),
        },
        "cost_usd_ledger": ledger["cost_usd"],
        "cost_per_1000_memories_usd": round(per_1000(cost_usd(model_id, cached), memories), 4),
        "cost_per_1000_memories_usd_uncached": round(per_1000(cost_usd(model_id, uncached), memories), 4),
        "original_per_1000_memories_usd": [round(original_low, 4), round(original_high, 4)],
    }
