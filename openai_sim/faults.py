"""What the fake does to a call instead of (or while) answering it: the failures of a local server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FaultKind = Literal[
    "rate_limit",  # 429 with Retry-After (a server's request queue is full: vLLM, a proxy)
    "overloaded",  # 503 with Retry-After (Ollama's queue full, llama.cpp loading the model)
    "server_error",  # 500
    "hang",  # the request is accepted and never answered (a timeout)
    "stall",  # the stream starts, then sends nothing more
    "drop",  # the connection is closed mid-stream, after the first chunks
    "drop_before",  # the connection is closed before any response
    "error_event",  # the stream starts, then carries an error object (vLLM mid-stream failure)
    "context_length",  # 400: the prompt does not fit the model's context window
    "silent_cut",  # the prompt is cut to the context window without a word; usage shows the cut
    "truncate",  # the reply stops halfway with finish_reason "length"
    "malformed",  # the reply is not the JSON asked for
    "refusal",  # the model refuses (message.refusal, no content)
]
CallKind = Literal["planner", "writer", "aggregation", "judge", "claim_judge", "rederive", "embeddings", "any"]


@dataclass
class Fault:
    kind: FaultKind
    call: CallKind = "any"
    retry_after: float | None = None  # for rate_limit and overloaded: the Retry-After to send (seconds)
    lasting: bool = False  # never used up: every matching call gets it

    def matches(self, call: str) -> bool:
        return self.call in ("any", call)
