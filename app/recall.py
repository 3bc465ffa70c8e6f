"""`recall`: a question in, the claims that answer it out, packed into a token budget.

Every retriever enumerates its candidates in full (store/recall_reads.py), each ranks them, the
rankings are fused by reciprocal rank (domain.recall.fuse), duplicates (the same claim text on two
pages) are dropped, and the result is packed best first into the budget. The retrievers:

- lexical: the claims' own words, every claim holding any of the question's words, BM25-scored;
- evidence: the memories' words, BM25-scored; a matching memory ranks the claims citing it (most
  specific first), and a claim that stands for several memories carries the ones that match best;
- names: the names the question mentions, resolved to pages by their alias keys; their claims;
- graph: the pages one link away from the named pages; their claims;
- time: the window the question names against the claims' first/last seen and the memories' dates;
- semantic: the question's embedding against the claims' (when the scope has vectors).

Memories retained and not compiled yet are searched too (by their words and dates) and returned as
`uncompiled`, so an agent finds what it stored a second ago.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncConnection

from app import recall_cache
from app.reads import BadInput, Database, ReadScope, connection, text_argument
from domain.claims import status_meanings
from domain.errors import StepFailed
from domain.memory import parse_instant
from domain.name_words import question_names
from domain.recall import (
    RETRIEVERS,
    Fused,
    Packable,
    fuse,
    pack,
    question_name_keys,
    ranked,
    text_cost,
    tokens_for,
)
from domain.time_window import Anchor, TimeWindow, time_window
from planners.embedding_providers import provider_embedder
from planners.embeddings import Embedder, cosine_ranking, static_embedder
from runtime.settings import Settings
from store import recall_reads
from store.recall_reads import RecallClaimRow

log = logging.getLogger(__name__)
MAX_QUESTION_CHARS = 1_000
DEFAULT_MAX_TOKENS = 500
MIN_MAX_TOKENS = 20
MAX_MAX_TOKENS = 8_000
SOURCES_SHOWN = 20  # memory ids listed per claim (the rest are counted in `source_count`)
CITED_SHOWN = 3  # best-matching cited memories a condensed claim may carry
RANKED_PER_RETRIEVER = 300  # each ranking's head that enters the fusion
PACKING_WINDOW = 200  # fused candidates considered for the budget, best first
EVIDENCE_MEMORIES = 200  # best-matching memories whose citing claims the evidence ranking holds


def embedder_for(settings: Settings) -> Callable[[], Embedder] | None:
    """The embedder WIKI_EMBEDDINGS names, made on first use and then kept (the compile embeds the
    claims with it, recall the question), or None when it is `off`."""
    if settings.embeddings == "off":
        return None
    if settings.embeddings == "static":
        return static_embedder
    return functools.cache(functools.partial(provider_embedder, settings))


class RecallPage(BaseModel):
    type: str
    slug: str
    title: str


class RecallSource(BaseModel):
    id: str
    occurred_at: datetime | None = None


class RecallMemory(BaseModel):
    id: str
    text: str
    occurred_at: datetime
    kind: Literal["cited", "uncompiled"]


class RecalledClaim(BaseModel):
    kind: Literal["claim"] = "claim"
    text: str
    page: RecallPage
    section: str  # the section's id on the page (get_sources takes it)
    heading: str
    claim_kind: str  # fact, or derived (a line the compiler computed: a count, a span, a summary)
    status: str  # quoted, verified, derived or unverified: `statuses` of the result says what each means
    confidence: float | None  # None for a derived or unverified line
    corroboration: int
    first_seen: datetime | None
    last_seen: datetime | None
    # Whether it holds: current, or disputed (a rival value with no clear order); with as_of, a
    # claim that held then may since be superseded. Valid from its earliest memory, until replaced.
    validity: str
    valid_from: datetime | None
    valid_to: datetime | None
    sources: list[RecallSource]  # best-matching first, at most SOURCES_SHOWN
    source_count: int
    memories: list[RecallMemory] = Field(default_factory=list)  # cited memories that best match
    score: float
    signals: dict[str, int]  # retriever -> this claim's rank in it


class UncompiledHit(BaseModel):
    kind: Literal["uncompiled"] = "uncompiled"
    id: str
    text: str
    occurred_at: datetime
    score: float
    signals: dict[str, int]


Answer = Annotated[RecalledClaim | UncompiledHit, Field(discriminator="kind")]


class PageLine(BaseModel):
    type: str
    slug: str
    title: str
    summary: str


class LeftOut(BaseModel):
    """What the budget did not hold: never a silent drop of the best answer."""

    answers: int  # candidates found and not returned
    best: str | None = None  # the best-ranked answer left out, its text
    best_tokens: int | None = None  # what it would have cost
    memories: int = 0  # cited memories that did not fit under their claim


class Window(BaseModel):
    start: datetime | None
    end: datetime | None
    phrase: str


class RecallResult(BaseModel):
    question: str
    max_tokens: int
    tokens_used: int  # every text returned, four characters a token
    results: list[Answer]
    # What each status among the results means, in one line (domain/claims.py STATUS_MEANINGS).
    statuses: dict[str, str] = Field(default_factory=dict)
    pages: list[PageLine]
    left_out: LeftOut
    retrievers: list[str]
    time_window: Window | None
    took_ms: float


def parse_retrievers(without: list[str] | str | None) -> frozenset[str]:
    """The retrievers to run: all but those named in `without` (a list, or one comma-separated string)."""
    if without is None:
        return frozenset(RETRIEVERS)
    names = [n.strip() for n in (without.split(",") if isinstance(without, str) else without) if n.strip()]
    unknown = sorted(set(names) - set(RETRIEVERS))
    if unknown:
        raise BadInput(f"unknown retriever {', '.join(unknown)}; the retrievers are {', '.join(RETRIEVERS)}")
    return frozenset(RETRIEVERS) - set(names)


def min_confidence_of(value: float | None) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or not 0.0 <= value <= 1.0:
        raise BadInput(f"min_confidence must be a number from 0 to 1 (got {value!r})")
    return float(value)


def budget_of(max_tokens: int | None) -> int:
    if max_tokens is None:
        return DEFAULT_MAX_TOKENS
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not MIN_MAX_TOKENS <= max_tokens <= MAX_MAX_TOKENS:
        raise BadInput(f"max_tokens must be between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS} (got {max_tokens!r})")
    return max_tokens


def _as_of(value: str | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    try:
        return parse_instant("as_of", text_argument("as_of", value, 100))
    except ValueError as error:
        raise BadInput(f"as_of must be an ISO-8601 time such as 2026-11-01T00:00:00Z ({error})") from None


class _Retrieved(BaseModel):
    rankings: dict[str, list[str]]
    claim_scores: dict[str, float]
    memory_scores: dict[str, float]
    named_pages: list[recall_reads.NamedPage]
    window: Window | None
    cited: dict[str, list[str]]  # claim -> the memories it cites that match the question, best first


async def _window(conn: AsyncConnection, scope: ReadScope, question: str, now: datetime,
                  as_of: datetime | None) -> Window | None:
    found = time_window(question, now)
    if isinstance(found, TimeWindow):
        return Window(start=found.start, end=found.end, phrase=found.phrase)
    if isinstance(found, Anchor):
        # "before the move": dated by the memory that best matches "the move".
        memories = await recall_cache.texts(conn, scope.tenant, scope.owner, "memories")
        scores = memories.index.bm25(await recall_reads.question_lexemes(conn, found.phrase), len(memories.index))
        if as_of is not None:
            scores = {m: v for m, v in scores.items() if (memories.happened.get(m) or as_of) <= as_of}
        best = ranked(scores, 1)
        if best and (at := memories.happened.get(best[0])) is not None:
            return Window(start=None if found.side == "before" else at, end=at if found.side == "before" else None,
                          phrase=f"{found.side} {found.phrase}")
    return None


async def _retrieve(conn: AsyncConnection, scope: ReadScope, question: str, use: frozenset[str],
                    as_of: datetime | None, embedder: Callable[[], Embedder] | None) -> _Retrieved:
    tenant, owner = scope.tenant, scope.owner
    rankings: dict[str, list[str]] = {}
    claim_scores: dict[str, float] = {}
    model = embedder() if "semantic" in use and embedder is not None else None
    state = await recall_reads.recall_state(conn, tenant, owner, question, model.model if model else "",
                                            model.dimensions if model else 0)
    lexemes = state.lexemes
    if "lexical" in use:
        claim_texts = await recall_cache.texts(conn, tenant, owner, "claims", state.claims)
        claim_scores = claim_texts.index.bm25(lexemes, len(claim_texts.index))
        rankings["lexical"] = [f"c:{c}" for c in ranked(claim_scores, RANKED_PER_RETRIEVER)]
    memory_texts = await recall_cache.texts(conn, tenant, owner, "memories", state.memories)
    memory_scores = memory_texts.index.bm25(lexemes, len(memory_texts.index))
    if as_of is not None:
        memory_scores = {m: v for m, v in memory_scores.items()
                         if (when := memory_texts.happened.get(m)) is None or when <= as_of}
    best_memories = ranked(memory_scores, EVIDENCE_MEMORIES)
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
    rankings["uncompiled"] = [f"m:{m}" for m in ranked({m: v for m, v in memory_scores.items() if m in uncompiled},
                                                         RANKED_PER_RETRIEVER)]
    named: list[str] = []
    named_retrievers = "names" in use or "graph" in use
    named_pages: list[recall_reads.NamedPage] = []
    matching = {c: claim_scores.get(c, 0.0) + claim_evidence.get(c, 0.0) for c in {*claim_scores, *claim_evidence}}
    if named_retrievers:
        named_pages = await recall_reads.pages_for_names(conn, tenant, owner, question_name_keys(question),
                                                         question_names(question))
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
        window = await _window(conn, scope, question, as_of or datetime.now(UTC), as_of)
        if window is not None:
            in_window = await recall_reads.claims_in_window(conn, tenant, owner, window.start, window.end)
            memories = await recall_reads.memories_in_window(conn, tenant, owner, window.start, window.end)
            dated_citations = await recall_reads.claims_citing(conn, tenant, owner, memories)
            recency = {c: -i for i, c in enumerate(in_window)}
            pool = list(dict.fromkeys([*in_window, *(c.claim_id for c in dated_citations)]))
            pool.sort(key=lambda c: (-matching.get(c, 0.0), -recency.get(c, -10**9)))
            rankings["time"] = [f"c:{c}" for c in pool[:RANKED_PER_RETRIEVER]]
            dated = [m for m in memories if m in uncompiled]
            dated.sort(key=lambda m: -memory_scores.get(m, 0.0))
            rankings["uncompiled_time"] = [f"m:{m}" for m in dated[:RANKED_PER_RETRIEVER]]
    if model is not None and state.vectors.count:
        vectors = await recall_cache.vectors(conn, tenant, owner, model.model, model.dimensions, state.vectors)
        query = await _question_vector(model, question) if vectors.ids else None
        if query is not None:
            rankings["semantic"] = [f"c:{c}" for c in cosine_ranking(query, vectors.ids, vectors.matrix,
                                                                     RANKED_PER_RETRIEVER)]
    return _Retrieved(rankings=rankings, claim_scores=claim_scores, memory_scores=memory_scores, named_pages=named_pages,
                      window=window, cited=cited)


async def _question_vector(model: Embedder, question: str) -> np.ndarray | None:
    """The question's embedding, or None when the provider cannot give it now: recall then answers
    with its other retrievers rather than fail or keep the agent waiting."""
    try:
        return await recall_cache.question_vector(model, question)
    except StepFailed as failure:
        log.warning("recall answers without embeddings: %s", failure.message)
        return None


async def recall(db: Database, scope: ReadScope, question: str, max_tokens: int | None = None,
                 as_of: str | datetime | None = None, min_confidence: float | None = None,
                 without: list[str] | str | None = None,
                 embedder: Callable[[], Embedder] | None = None) -> RecallResult:
    """The claims (and uncompiled memories) that best answer `question`, best first, packed into
    `max_tokens` (every text returned counts, four characters a token), with what did not fit."""
    started = time.perf_counter()
    question = text_argument("question", question, MAX_QUESTION_CHARS)
    budget = budget_of(max_tokens)
    floor = min_confidence_of(min_confidence)
    moment = _as_of(as_of)
    use = parse_retrievers(without)
    budget_chars = budget * 4
    async with connection(db) as conn:
        found = await _retrieve(conn, scope, question, use, moment, embedder)
        fused = fuse(found.rankings)
        # The fused head the budget could hold (a claim costs some 30 characters at the least).
        head = fused[:min(PACKING_WINDOW, 40 + budget_chars // 30)]
        # Only claims that hold (or held at `moment`): an older value is history, never an answer.
        claims = await recall_reads.claim_details(conn, scope.tenant, scope.owner,
                                                  [f.key[2:] for f in head if f.key.startswith("c:")], moment)
        memory_ids = {f.key[2:] for f in head if f.key.startswith("m:")}
        best_cited = {c.id: _best_cited(c, found.cited) for c in claims.values()}
        memory_ids |= {m for cited in best_cited.values() for m in cited}
        texts = await recall_reads.memory_texts(conn, scope.tenant, scope.owner, sorted(memory_ids))
        pages = [PageLine(type=p.type, slug=p.slug, title=p.title, summary=p.summary)
                 for p in found.named_pages[:2] if p.summary]
        entries, skipped = _packables(head, claims, texts, best_cited, floor, moment)
        page_lines = [p for p in pages if text_cost(p.title, p.summary) <= budget_chars // 6][:1]
        reserved = sum(text_cost(p.title, p.summary) for p in page_lines)
        packed = pack(entries.values(), budget_chars - reserved)
        shown = {m for key in packed.chosen if key.startswith("c:")
                 for m in _shown_sources(claims[key[2:]], found.cited)} - set(texts)
        texts |= await recall_reads.memory_texts(conn, scope.tenant, scope.owner, sorted(shown))
    by_key = {f.key: f for f in head}
    results: list[RecalledClaim | UncompiledHit] = []
    for key in packed.chosen:
        item = by_key[key]
        signals = {r: rank for r, rank in item.ranks.items() if not r.startswith("uncompiled")}
        if key.startswith("c:"):
            claim = claims[key[2:]]
            results.append(_claim_answer(claim, item.score, signals, packed.extras.get(key, []), texts,
                                         found.cited))
        else:
            memory = texts[key[2:]]
            results.append(UncompiledHit(id=memory.id, text=memory.content, occurred_at=memory.occurred_at,
                                         score=round(item.score, 6),
                                         signals={("lexical" if r == "uncompiled" else "time"): rank
                                                  for r, rank in item.ranks.items()}))
    left = packed.left_out
    best_left = entries[left[0]] if left else None
    return RecallResult(
        question=question, max_tokens=budget, tokens_used=tokens_for(packed.used_chars + reserved),
        results=results, pages=page_lines,
        left_out=LeftOut(answers=len(fused) - len(results) - skipped, memories=packed.extras_left_out,
                         best=_answer_text(left[0], claims, texts) if left else None,
                         best_tokens=tokens_for(best_left.cost) if best_left else None),
        retrievers=[r for r in RETRIEVERS if r in use], time_window=found.window,
        took_ms=round((time.perf_counter() - started) * 1000, 1),
        statuses=status_meanings(r.status for r in results if isinstance(r, RecalledClaim)))


def _packables(head: list[Fused], claims: dict[str, RecallClaimRow], texts: dict, best_cited: dict[str, list[str]],
               floor: float, moment: datetime | None) -> tuple[dict[str, Packable], int]:
    """The fused head as items to pack, best first: claims under `floor` or first seen after `moment`
    dropped, and a claim whose text another better-ranked claim already says."""
    entries: dict[str, Packable] = {}
    seen_texts: set[str] = set()
    skipped = 0
    for item in head:
        kind, key = item.key[:1], item.key[2:]
        if kind == "c":
            claim = claims.get(key)
            if (claim is None or (floor > 0 and (claim.confidence or 0.0) < floor) or claim.text_key in seen_texts
                    or (moment and claim.first_seen and claim.first_seen > moment)):
                skipped += 1
                continue
            seen_texts.add(claim.text_key)
            entries[item.key] = Packable(key=item.key, cost=text_cost(claim.text, claim.page_title, claim.heading),
                                         extras=[(m, text_cost(texts[m].content)) for m in best_cited[key]
                                                 if m in texts])
        elif key in texts:
            entries[item.key] = Packable(key=item.key, cost=text_cost(texts[key].content))
    return entries, skipped


def _answer_text(key: str, claims: dict[str, RecallClaimRow], texts: dict) -> str:
    return claims[key[2:]].text if key.startswith("c:") else texts[key[2:]].content


def _best_cited(claim: RecallClaimRow, cited: dict[str, list[str]]) -> list[str]:
    """A claim that stands for several memories (a count, a condensed line, a summary) carries the
    cited memories that best match the question; a claim of one memory is that memory already."""
    if claim.kind != "derived" and claim.corroboration < 2:
        return []
    return cited.get(claim.id, [])[:CITED_SHOWN]


def _shown_sources(claim: RecallClaimRow, cited: dict[str, list[str]]) -> list[str]:
    """The memories that match the question first, then the claim's first others."""
    return list(dict.fromkeys([*cited.get(claim.id, []), *claim.sources]))[:SOURCES_SHOWN]


def _claim_answer(claim: RecallClaimRow, score: float, signals: dict[str, int], cited: list[str], texts: dict,
                  matching: dict[str, list[str]]) -> RecalledClaim:
    return RecalledClaim(
        text=claim.text, page=RecallPage(type=claim.page_type, slug=claim.page_slug, title=claim.page_title),
        section=claim.section_slug, heading=claim.heading, claim_kind=claim.kind, status=claim.status,
        confidence=claim.confidence, corroboration=claim.corroboration, first_seen=claim.first_seen,
        last_seen=claim.last_seen, validity=claim.validity, valid_from=claim.valid_from, valid_to=claim.valid_to,
        sources=[RecallSource(id=m, occurred_at=texts[m].occurred_at if m in texts else None)
                 for m in _shown_sources(claim, matching)],
        source_count=claim.corroboration,
        memories=[RecallMemory(id=m, text=texts[m].content, occurred_at=texts[m].occurred_at, kind="cited")
                  for m in cited],
        score=round(score, 6), signals=signals)
