"""Fault modes: what the simulator does to a call instead of (or while) answering it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FaultKind = Literal[
    "rate_limit",  # 429 rate_limit_error with retry-after (Bedrock: ThrottlingException)
    "overloaded",  # 529 overloaded_error (Bedrock: 503 ServiceUnavailableException)
    "spend_limit",  # 429 with x-should-retry: false, error_code enforced_spend_limit_reached (API only)
    "server_error",  # 500 api_error (Bedrock: InternalServerException)
    "model_error",  # Bedrock 424 ModelErrorException (API: 500 api_error)
    "hang",  # the request is accepted and never answered
    "stall",  # the stream starts, then sends nothing more
    "stream_error",  # the stream starts, then ends with an overloaded error event
    "truncate",  # the reply stops at max_tokens halfway through
    "malformed",  # the tool input does not match the schema
    "refusal",  # stop_reason "refusal", no answer
    "miscopied_ids",  # every id or handle in the plan has its last character changed (m1 -> m0)
]
CallKind = Literal["planner", "writer", "aggregation", "judge", "any"]


@dataclass
class Fault:
    kind: FaultKind
    call: CallKind = "any"
    # For rate_limit: the retry-after to send (seconds); None lets the rate limiter compute it.
    retry_after: float | None = None
    # A lasting fault is never used up: every matching call gets it (a provider that stays throttled).
    lasting: bool = False

    def matches(self, call: str) -> bool:
        return self.call in ("any", call)


def miscopy(value: str) -> str:
    """The id with one character changed, as a model copying it carelessly might write it."""
    if not value:
        return value
    last = value[-1]
    return value[:-1] + ("0" if last != "0" else "1")
