"""Recall's pure rules: the name keys a question may mention, reciprocal-rank fusion of the retrievers'
rankings, and packing the fused answers into a token budget.

Seed 004's rule holds here: every retriever enumerates its candidates, every candidate is scored and
fused, and only then is the list cut (by the budget), never earlier on a partial score.

The budget counts the characters of every text an answer carries (a claim's text, its page's title,
its section's heading, a memory's text, a page's summary line) at four characters per token;
identifiers, dates and numbers are structure, not text, and are not counted.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from domain.aliases import normalize_alias

CHARS_PER_TOKEN = 4
RRF_K = 60  # the constant of reciprocal-rank fusion (Cormack et al.): rank 1 scores 1/61
MAX_NAME_WORDS = 4

Retriever = Literal["lexical", "evidence", "names", "graph", "time", "semantic"]
RETRIEVERS: tuple[Retriever, ...] = ("lexical", "evidence", "names", "graph", "time", "semantic")
RETRIEVER_HELP = {
    "lexical": "the claims' own words: full text with OR semantics, ranked by ts_rank_cd",
    "evidence": "the cited memories' words: a memory that matches lifts the claims citing it",
    "names": "the names and aliases the question mentions, resolved to their pages",
    "graph": "pages linked to the named pages (one hop, both directions)",
    "time": "the dates and relative phrases of the question against first/last seen and occurred_at",
    "semantic": "embeddings of the question and the claims (cosine similarity)",
}

_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def tokens_for(chars: int) -> int:
    """Tokens a text of `chars` characters counts for (four characters a token, rounded up)."""
    return math.ceil(chars / CHARS_PER_TOKEN)


def text_cost(*texts: str | None) -> int:
    """Characters the budget counts for these texts."""
    return sum(len(t) for t in texts if t)


def question_name_keys(question: str) -> list[str]:
    """Every run of one to four consecutive words of the question, as alias keys (`normalize_alias`),
    longest first: the names the question may mention, in the resolver's own key."""
    words = _WORD.findall(question)
    keys: list[str] = []
    for size in range(min(MAX_NAME_WORDS, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            key = normalize_alias(" ".join(words[start:start + size]))
            if key and len(key) >= 2:
                keys.append(key)
    return list(dict.fromkeys(keys))


@dataclass
class Fused:
    key: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # retriever -> the candidate's rank there (1-based)


def fuse(rankings: Mapping[str, Sequence[str]], k: int = RRF_K) -> list[Fused]:
    """Reciprocal-rank fusion: each candidate scores the sum of 1 / (k + rank) over the rankings it is
    in. Ties keep the order in which candidates were first met (the first ranking's order first)."""
    fused: dict[str, Fused] = {}
    for retriever, ranking in rankings.items():
        for rank, key in enumerate(dict.fromkeys(ranking), 1):
            entry = fused.setdefault(key, Fused(key=key, score=0.0))
            entry.score += 1.0 / (k + rank)
            entry.ranks[retriever] = rank
    order = {key: index for index, key in enumerate(fused)}
    return sorted(fused.values(), key=lambda f: (-f.score, order[f.key]))


@dataclass
class Packable:
    key: str
    cost: int  # characters the budget counts for the item itself
    extras: list[tuple[str, int]] = field(default_factory=list)  # optional attachments (key, cost), best first


@dataclass
class Packed:
    chosen: list[str]
    extras: dict[str, list[str]]  # item key -> the attachments that fit
    used_chars: int
    left_out: list[str]  # items that did not fit, best first
    extras_left_out: int


def pack(items: Iterable[Packable], budget_chars: int) -> Packed:
    """Take the items best first while they fit; an item that does not fit is skipped (a smaller one
    after it may fit) and reported. Each item's attachments follow it while they fit."""
    used = 0
    chosen: list[str] = []
    extras: dict[str, list[str]] = {}
    left_out: list[str] = []
    extras_left_out = 0
    for item in items:
        if used + item.cost > budget_chars:
            left_out.append(item.key)
            continue
        used += item.cost
        chosen.append(item.key)
        for extra_key, extra_cost in item.extras:
            if used + extra_cost <= budget_chars:
                used += extra_cost
                extras.setdefault(item.key, []).append(extra_key)
            else:
                extras_left_out += 1
    return Packed(chosen=chosen, extras=extras, used_chars=used, left_out=left_out, extras_left_out=extras_left_out)


def importance(confidence: float, corroboration: int, days_since_seen: float | None, hubness: int) -> float:
    """How much a claim belongs in an agent's standing context: sure, corroborated, recent, and on a
    page many others lean on. Each term is bounded, so none drowns the others."""
    recency = 0.5 if days_since_seen is None else math.exp(-max(days_since_seen, 0.0) / 180.0)
    return (confidence + min(math.log1p(max(corroboration, 0)) / math.log1p(20), 1.0)
            + recency + min(math.log1p(max(hubness, 0)) / math.log1p(50), 1.0))


@dataclass
class TermDoc:
    """A text that holds some of a question's lexemes: how often each, and its length in lexemes."""

    key: str
    length: int
    tf: dict[str, int]


BM25_K1 = 1.2
BM25_B = 0.75


def bm25(docs: Sequence[TermDoc], total_docs: int) -> dict[str, float]:
    """Okapi BM25 of each document for the question whose lexemes they hold.

    `docs` must be every document holding any of the question's lexemes (an OR query returns exactly
    those), so a lexeme's document frequency counted over them is its true one; `total_docs` is the
    collection's size. The average length is taken over the matching documents."""
    if not docs:
        return {}
    df: dict[str, int] = {}
    for doc in docs:
        for lexeme in doc.tf:
            df[lexeme] = df.get(lexeme, 0) + 1
    n = max(total_docs, len(docs))
    idf = {lex: math.log(1.0 + (n - count + 0.5) / (count + 0.5)) for lex, count in df.items()}
    average = sum(doc.length for doc in docs) / len(docs)
    scores: dict[str, float] = {}
    for doc in docs:
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * doc.length / average)
        scores[doc.key] = sum(idf[lex] * tf * (BM25_K1 + 1.0) / (tf + norm) for lex, tf in doc.tf.items())
    return scores


def ranked(scores: Mapping[str, float], limit: int | None = None) -> list[str]:
    """Keys by score, best first (ties by key, so a ranking is reproducible); only the first `limit`
    when given (the same head as the full sort, found without sorting the rest)."""
    if limit is not None and limit < len(scores):
        return [key for key, _ in heapq.nsmallest(limit, scores.items(), key=_best_first)]
    return [key for key, _ in sorted(scores.items(), key=_best_first)]


def _best_first(item: tuple[str, float]) -> tuple[float, str]:
    return -item[1], item[0]
