"""The budget bounds what the agent receives: recall's and context's answers are packed, best first,
into a body whose every character counts, at four characters a token.

`max_tokens` bounds the whole body as sent: the JSON of an HTTP response or an MCP tool result (keys,
ids, dates, punctuation and all), or everything the CLI prints. An item that does not fit is skipped
(a smaller one after it may fit) and `left_out` says how many were, and what the best of them would
have cost. `tokens_used` is the body's own length in characters divided by four, rounded up.

Four characters a token is the documented rate. The project ships no tokenizer of the models an agent
may use (Claude's is not published); measured with the one tokenizer the project does ship (LLaMA 2's,
inside `wordllama`), compact bodies of LoCoMo answers ran at 2.2 to 2.9 characters a token (2.5 on
average: UUIDs and JSON punctuation tokenize densely), so an agent whose model tokenizes like it
receives about 1.6 times `max_tokens` tokens (docs/agents.md). A character count is what every
client can check; the rate is the documented one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4
PREVIEW_CHARS = 100  # the best left-out answer's text shown in a verbose body, at most


def tokens_for(chars: int) -> int:
    """Tokens a body of `chars` characters counts for (four characters a token, rounded up)."""
    return math.ceil(chars / CHARS_PER_TOKEN)


def dumps(value: Any) -> str:
    """JSON as recall sends it: compact, UTF-8 text as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def preview(text: str) -> str:
    """The start of a text, at most PREVIEW_CHARS characters once written as JSON (escapes counted)."""
    if len(dumps(text)) <= PREVIEW_CHARS:
        return text
    cut = text[:PREVIEW_CHARS]
    while cut and len(dumps(cut + "…")) > PREVIEW_CHARS:
        cut = cut[:-1]
    return cut.rstrip() + "…"


@dataclass(frozen=True)
class Candidate:
    """An answer ready to send: its JSON object (or its lines, for the CLI) and its text."""

    item: Any
    text: str


@dataclass(frozen=True)
class Body:
    text: str  # exactly what is sent
    chosen: list[int]  # the candidates it holds, by index
    left_out: int
    tokens_used: int


def _choose(costs: Sequence[int], room: int, separator: int) -> list[int]:
    chosen: list[int] = []
    used = 0
    for index, cost in enumerate(costs):
        extra = cost + (separator if chosen else 0)
        if used + extra <= room:
            chosen.append(index)
            used += extra
    return chosen


def _settled(render: Callable[[int], str]) -> tuple[str, int]:
    """The body and its token count, the count written inside it (a fixed point: one more digit
    can change the count, at most once)."""
    tokens = 0
    for _ in range(3):
        body = render(tokens)
        counted = tokens_for(len(body))
        if counted == tokens:
            break
        tokens = counted
    body = render(tokens)
    return body, tokens


def pack_json(frame: dict[str, Any], candidates: Sequence[Candidate], max_tokens: int,
              extras: Sequence[dict[str, Any]] = (), verbose: bool = False, reserve: int = 0) -> Body:
    """`{**frame, "tokens_used", "results", "left_out", **extras}` holding the best candidates that
    fit in `max_tokens` with it. `extras` are tried richest first: the first whose frame leaves at
    least half the budget for answers is kept (a verbose body sheds its details under a tight budget).
    `reserve`: characters the caller prints after the body (the CLI's final newline), kept out of it."""
    budget = max_tokens * CHARS_PER_TOKEN - reserve
    sizes = [len(dumps(c.item)) for c in candidates]
    worst_left: dict[str, Any] = {"answers": len(candidates),
                                  "best_tokens": max((tokens_for(s) for s in sizes), default=0)}
    if verbose and candidates:
        worst_left["best"] = max((preview(c.text) for c in candidates), key=lambda t: len(dumps(t)))

    def body_of(tokens: int, results: list[Any], left: dict[str, Any], extra: dict[str, Any]) -> str:
        return dumps({**frame, "tokens_used": tokens, "results": results, "left_out": left, **extra})

    extra: dict[str, Any] = {}
    for option in [*extras, {}]:
        extra = option
        if len(body_of(tokens_for(budget), [], worst_left, extra)) * 2 <= budget:
            break
    if verbose and len(body_of(tokens_for(budget), [], worst_left, extra)) * 2 > budget:
        worst_left.pop("best", None)  # a tight budget sheds the preview too
        verbose = False
    room = budget - len(body_of(tokens_for(budget), [], worst_left, extra))
    chosen = _choose(sizes, room, 1) if room > 0 else []
    kept = set(chosen)
    left = [i for i in range(len(candidates)) if i not in kept]
    left_out: dict[str, Any] = {"answers": len(left)}
    if left:
        left_out["best_tokens"] = tokens_for(sizes[left[0]])
        if verbose:
            left_out["best"] = preview(candidates[left[0]].text)
    results = [candidates[i].item for i in chosen]
    text, tokens = _settled(lambda t: body_of(t, results, left_out, extra))
    return Body(text=text, chosen=chosen, left_out=len(left), tokens_used=tokens)


def pack_lines(header: Callable[[int, int], str], candidates: Sequence[Candidate], max_tokens: int,
               footer: Callable[[int, str | None], str], reserve: int = 0) -> Body:
    """Text for people (the CLI): `header(tokens_used, max_tokens)`, each chosen candidate's lines
    (`item` is a string of lines), then `footer(left_out, best_left_out_text)`; newline-joined, all
    of it within `max_tokens` less `reserve` characters."""
    budget = max_tokens * CHARS_PER_TOKEN - reserve
    worst_footer = footer(len(candidates), preview(max((c.text for c in candidates), key=len, default="")))
    frame = len(header(tokens_for(budget), max_tokens)) + 1 + len(worst_footer)
    chosen = _choose([len(c.item) for c in candidates], budget - frame, 1) if frame < budget else []
    kept = set(chosen)
    left = [i for i in range(len(candidates)) if i not in kept]
    tail = footer(len(left), preview(candidates[left[0]].text) if left else None)

    def render(tokens: int) -> str:
        parts = [header(tokens, max_tokens), *(candidates[i].item for i in chosen)]
        return "\n".join(parts + ([tail] if tail else []))

    text, tokens = _settled(render)
    return Body(text=text, chosen=chosen, left_out=len(left), tokens_used=tokens)
