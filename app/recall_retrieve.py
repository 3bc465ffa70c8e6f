"""Recall's retrievers: each enumerates every candidate it has for a question and ranks them in full
(store/recall_reads.py reads, the kept indexes of app/recall_cache.py score). Keys are "m:<id>" for a
memory and "c:<id>" for a claim; `domain.recall.fuse` fuses the rankings.

- memories: every memory of the scope holding any of the question's words, compiled or not, by BM25,
  each lifted by the best score of the memories said just before and after it (a reply holds the
  answer that its question's words find);
- lexical: the claims' own words, by BM25;
- evidence: the claims citing the best-matching memories, the most specific first;
- names: the claims of the pages the question names (an alias, or a capitalised first name);
- graph: the claims of the pages one link away from those;
- time: the claims seen, and the memories said, in the window the question names;
- semantic: the question's embedding against the claims' and the memories'.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncConnection

from app import recall_cache
from app.reads import ReadScope
from domain.aliases import normalize_alias
from domain.errors import StepFailed
from domain.name_words import question_names
from domain.recall import Tuning, question_name_keys, ranked
from domain.time_window import Anchor, TimeWindow, time_window
from planners.embeddings import Embedder, cosine_ranking
from store import recall_reads

log = logging.getLogger(__name__)
RANKED_PER_RETRIEVER = 300  # each ranking's head that enters the fusion
SCORED_MEMORIES = 2_000  # memories whose word scores are kept (to pick a claim's best memory, order a window)
EVIDENCE_MEMORIES = 200  # best-matching memories whose citing claims the evidence ranking holds


class Window(BaseModel):
    start: datetime | None
    end: datetime | None
    phrase: str


@dataclass
class Retrieved:
    rankings: dict[str, list[str]]
    memory_scores: dict[str, float]  # the best-matching memories' word scores (with their neighbours')
    named_pages: list[recall_reads.NamedPage]
    window: Window | None
    cited: dict[str, list[str]]  # claim -> the memories it cites that match the question, best first
    uncompiled: set[str]
    happened: dict[str, datetime] = field(default_factory=dict)


def _memory_words(texts: recall_cache.Texts, lexemes: list[str], tuning: Tuning,
                  as_of: datetime | None) -> np.ndarray:
    """Every memory slot's word score, lifted by its neighbours' (0 after `as_of`)."""
    scores = texts.index.score_array(lexemes)
    if tuning.neighbours > 0.0 and len(scores):
        padded = np.append(scores, 0.0)  # slot -1 (no neighbour) reads the 0 at the end
        scores = scores + tuning.neighbours * np.maximum(padded[texts.before[:len(scores)]],
                                                         padded[texts.after[:len(scores)]])
    if as_of is not None and len(scores):
        scores[texts.times[:len(scores)] > as_of.timestamp()] = 0.0
    return scores


def _head(scores: np.ndarray, texts: recall_cache.Texts, limit: int) -> dict[str, float]:
    """The `limit` best-scored slots with a positive score, as {key: score}."""
    positive = np.flatnonzero(scores > 0.0)
    if len(positive) > limit:
        positive = positive[np.argpartition(-scores[positive], limit - 1)[:limit]]
    return {texts.index.key_of(int(slot)): float(scores[slot]) for slot in positive}


async def _window(conn: AsyncConnection, memories: recall_cache.Texts, question: str, now: datetime,
                  as_of: datetime | None) -> Window | None:
    found = time_window(question, now)
    if isinstance(found, TimeWindow):
        return Window(start=found.start, end=found.end, phrase=found.phrase)
    if isinstance(found, Anchor):
        # "before the move": dated by the memory that best matches "the move".
        scores = memories.index.bm25(await recall_reads.question_lexemes(conn, found.phrase))
        if as_of is not None:
            scores = {m: v for m, v in scores.items() if (memories.happened.get(m) or as_of) <= as_of}
        best = ranked(scores, 1)
        if best and (at := memories.happened.get(best[0])) is not None:
            return Window(start=None if found.side == "before" else at, end=at if found.side == "before" else None,
                          phrase=f"{found.side} {found.phrase}")
    return None


async def retrieve(conn: AsyncConnection, scope: ReadScope, question: str, use: frozenset[str],
                   as_of: datetime | None, embedder: Callable[[], Embedder] | None, tuning: Tuning,
                   prefixes: bool = False) -> Retrieved:
    """Every retriever's ranking for `question`; with `prefixes` (search) a word also finds the words
    it begins."""
    tenant, owner = scope.tenant, scope.owner
    rankings: dict[str, list[str]] = {}
    model = embedder() if "semantic" in use and embedder is not None else None
    state = await recall_reads.recall_state(conn, tenant, owner, question)
    kept = await recall_cache.indexes(conn, tenant, owner, state.revision, model)
    lexemes = state.lexemes
    words = _memory_words(kept.memories, kept.memories.index.with_prefixes(lexemes) if prefixes else lexemes,
                          tuning, as_of)
    memory_scores = _head(words, kept.memories, SCORED_MEMORIES)
    best_memories = ranked(memory_scores, EVIDENCE_MEMORIES)
    if "memories" in use:
        rankings["memories"] = [f"m:{m}" for m in ranked(memory_scores, RANKED_PER_RETRIEVER)]
    claim_scores: dict[str, float] = {}
    if "lexical" in use:
        claim_scores = kept.claims.index.bm25(kept.claims.index.with_prefixes(lexemes) if prefixes else lexemes)
        rankings["lexical"] = [f"c:{c}" for c in ranked(claim_scores, RANKED_PER_RETRIEVER)]
    citations = await recall_reads.claims_citing(conn, tenant, owner, best_memories)
    claim_evidence: dict[str, float] = {}
    by_memory: dict[str, list[str]] = {}
    cited: dict[str, list[str]] = {}
    for cite in sorted(citations, key=lambda c: (-memory_scores[c.memory_id], c.memory_id)):
        by_memory.setdefault(cite.memory_id, []).append(cite.claim_id)
        cited.setdefault(cite.claim_id, []).append(cite.memory_id)
        claim_evidence[cite.claim_id] = max(claim_evidence.get(cite.claim_id, 0.0), memory_scores[cite.memory_id])
    if "evidence" in use:
        rankings["evidence"] = [f"c:{c}" for m in best_memories for c in by_memory.get(m, [])][:RANKED_PER_RETRIEVER]
    uncompiled = set(await recall_reads.uncompiled_memories(conn, tenant, owner))
    named_pages: list[recall_reads.NamedPage] = []
    matching = {c: claim_scores.get(c, 0.0) + claim_evidence.get(c, 0.0) for c in {*claim_scores, *claim_evidence}}
    if "names" in use or "graph" in use:
        # A search's whole query may open a name ("franklin" names Franklin Barbecue); a question's
        # first names are its capitalised words.
        whole = normalize_alias(question)
        first_names = ([whole] if len(whole) >= 3 else []) if prefixes else question_names(question)
        named_pages = await recall_reads.pages_for_names(conn, tenant, owner, question_name_keys(question),
                                                         first_names)
    named = [p.id for p in named_pages]
    # What orders the named and linked pages' claims: the best-matching claims with their scores.
    scored = [(c, matching[c]) for c in ranked(matching, recall_reads.MAX_SCORES_SENT)] if named else []
    if "names" in use and named:
        rankings["names"] = [f"c:{c}" for c in await recall_reads.claims_of_pages(
            conn, tenant, owner, named, scored, RANKED_PER_RETRIEVER, as_of)]
    if "graph" in use and named:
        near = await recall_reads.linked_pages(conn, tenant, owner, named)
        rankings["graph"] = [f"c:{c}" for c in await recall_reads.claims_of_pages(
            conn, tenant, owner, near, scored, RANKED_PER_RETRIEVER, as_of)]
    window = None
    if "time" in use:
        window = await _window(conn, kept.memories, question, as_of or datetime.now(UTC), as_of)
        if window is not None:
            in_window = await recall_reads.claims_in_window(conn, tenant, owner, window.start, window.end)
            memories = await recall_reads.memories_in_window(conn, tenant, owner, window.start, window.end)
            dated_citations = await recall_reads.claims_citing(conn, tenant, owner, memories)
            recency = {c: -i for i, c in enumerate(in_window)}
            pool = list(dict.fromkeys([*in_window, *(c.claim_id for c in dated_citations)]))
            pool.sort(key=lambda c: (-matching.get(c, 0.0), -recency.get(c, -10**9)))
            rankings["time"] = [f"c:{c}" for c in pool[:RANKED_PER_RETRIEVER]]
            dated = sorted(memories, key=lambda m: -memory_scores.get(m, 0.0))
            rankings["time_memories"] = [f"m:{m}" for m in dated[:RANKED_PER_RETRIEVER]]
    if model is not None:
        query = await _question_vector(model, question) if (kept.claim_vectors and kept.claim_vectors.ids) or (
            kept.memory_vectors and kept.memory_vectors.ids) else None
        if query is not None and kept.claim_vectors is not None:
            rankings["semantic"] = [f"c:{c}" for c in cosine_ranking(query, kept.claim_vectors.ids,
                                                                     kept.claim_vectors.matrix, RANKED_PER_RETRIEVER)]
        if query is not None and kept.memory_vectors is not None:
            near_memories = cosine_ranking(query, kept.memory_vectors.ids, kept.memory_vectors.matrix,
                                           RANKED_PER_RETRIEVER)
            if as_of is not None:
                near_memories = [m for m in near_memories
                                 if (when := kept.memories.happened.get(m)) is None or when <= as_of]
            rankings["semantic_memories"] = [f"m:{m}" for m in near_memories]
    return Retrieved(rankings=rankings, memory_scores=memory_scores, named_pages=named_pages, window=window,
                     cited=cited, uncompiled=uncompiled, happened=kept.memories.happened)


async def _question_vector(model: Embedder, question: str) -> np.ndarray | None:
    """The question's embedding, or None when the provider cannot give it now: recall then answers
    with its other retrievers rather than fail or keep the agent waiting."""
    try:
        return await recall_cache.question_vector(model, question)
    except StepFailed as failure:
        log.warning("recall answers without embeddings: %s", failure.message)
        return None
