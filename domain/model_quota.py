"""How many model calls a second the whole fleet may start: the provider's per-minute limits turned into
the model queue's rate limit (`WIKI_LLM_MAX_PER_SECOND`, docs/cluster.md).

The provider limits requests, input tokens and output tokens per minute, for the organisation, not per
process. Temporal limits how many tasks a second its task queue hands out, to all workers together. A
queue limit under the provider's keeps the backlog in Temporal, where priority and fairness order it;
over it, the provider's 429s decide who waits, and a throttled call retries with backoff whoever it is.
"""

from __future__ import annotations

from dataclasses import dataclass

# Calls vary around their mean and a bucket refills continuously: aim a little under the limit.
DEFAULT_HEADROOM = 0.85


@dataclass(frozen=True)
class ProviderLimits:
    requests_per_minute: int | None = None
    input_tokens_per_minute: int | None = None  # prompt tokens: input, cache writes and cache reads
    output_tokens_per_minute: int | None = None


def calls_per_second(limits: ProviderLimits, mean_input_tokens: float, mean_output_tokens: float,
                     headroom: float = DEFAULT_HEADROOM) -> float | None:
    """The dispatch rate that keeps every limit under `headroom` of itself for calls of the given mean
    size; None when no limit is set."""
    if not 0 < headroom <= 1:
        raise ValueError(f"headroom must be in (0, 1], got {headroom}")
    rates = []
    if limits.requests_per_minute:
        rates.append(limits.requests_per_minute / 60)
    if limits.input_tokens_per_minute and mean_input_tokens > 0:
        rates.append(limits.input_tokens_per_minute / 60 / mean_input_tokens)
    if limits.output_tokens_per_minute and mean_output_tokens > 0:
        rates.append(limits.output_tokens_per_minute / 60 / mean_output_tokens)
    return headroom * min(rates) if rates else None
