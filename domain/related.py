"""Related pages: enumerate the link cone, score every candidate, sort fully, then cut (seed 004).

Two axes are kept apart on purpose: *enumeration* (which pages are candidates: the cone reachable
over page links, each direction walked on its own) and *scoring* (how candidates rank: graph
influence composed with text relevance and recency). The limit is applied only after a full sort:
the composed score is not monotone along links (text and recency can spike at any depth), so a
best-first walk that stops after k pages would miss better pages further out.

The graph signal is random-walk influence, i.e. personalised PageRank without normalisation: the
expected, α-discounted number of visits a walk started at the origin pays to each page, where the
walk follows a uniformly chosen outgoing link with probability α at every step. On a DAG this is
exactly the one-pass topological computation (origin 1, each page α · Σ pred / outdeg(pred)); page
links have cycles (reciprocal co-mention and parent/child links), where a one-pass computation is
impossible, so influence is the fixed point of the same equation, reached by residual pushing:
mass flows from page to page until what is left to push everywhere is below a tolerance. With
α < 1 every walk dies out, so the push always terminates.

A bidirectional query walks outgoing links and incoming links separately and merges per page
(highest influence, fewest hops): a walk never alternates directions, so from A in A → B ← C the
page C is not reached (it is neither downstream nor upstream of A).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import deque
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict


class _PageId(Hashable, Protocol):
    """A page id: hashable, and comparable, so links can be walked in a fixed order."""

    def __lt__(self, other: Any, /) -> bool: ...


N = TypeVar("N", bound=_PageId)

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[str, ...] = ("out", "in", "both")

ALPHA = 0.85  # the usual PageRank damping; seed 004 finds it shifts decay sharpness, not orderings
PUSH_TOLERANCE = 1e-6  # residual left unpushed at a page; far below any difference that changes a ranking
# Pushes are bounded so a pathological cone (a large dense clique) cannot stall a read; the residual
# still unpushed when the budget ends is below the tolerance on all but those pages, and is reported.
MAX_PUSH_WORK = 400_000

DEFAULT_MAX_HOPS = 3
MAX_MAX_HOPS = 6
# A cone is enumerated level by level; a level that would take it past this many pages is not
# expanded, so the cone is always complete up to a (smaller) hop bound rather than cut arbitrarily.
MAX_CONE_PAGES = 5_000

DEFAULT_RELATED_LIMIT = 10
MAX_RELATED_LIMIT = 50

RECENCY_HALF_LIFE_DAYS = 30.0


class ScoreWeights(BaseModel):
    """How the three axes add up; influence dominates, text and recency break near-ties and lift."""

    model_config = ConfigDict(frozen=True)

    influence: float = 1.0
    text: float = 0.5
    recency: float = 0.1


DEFAULT_WEIGHTS = ScoreWeights()


# Candidates and their scores are plain dataclasses, not models: a related call builds one of each per
# page of its cone (up to thousands), from values the walk and the store already typed, and never
# sends them anywhere as they are.


@dataclass(frozen=True, slots=True)
class Reached:
    """A page of the cone as the walk reached it: how many hops away, and along which direction."""

    id: str
    hops: int
    direction: Literal["out", "in", "both"]


@dataclass(frozen=True, slots=True)
class Candidate(Reached):
    """A page of the cone with what scoring needs: its hop count, text and last change."""

    text: str
    changed_at: datetime | None


@dataclass(frozen=True, slots=True)
class ScoredCandidate(Reached):
    influence: float
    text_relevance: float
    recency: float
    score: float


# ------------------------------------------------------------------------------------ enumeration


def successors_of(edges: Iterable[tuple[N, N]]) -> dict[N, set[N]]:
    """The adjacency of a directed edge list (duplicates collapse: a link of two kinds is one edge)."""
    adjacency: dict[N, set[N]] = {}
    for source, target in edges:
        if source != target:
            adjacency.setdefault(source, set()).add(target)
    return adjacency


def transpose(successors: Mapping[N, Iterable[N]]) -> dict[N, set[N]]:
    reverse: dict[N, set[N]] = {}
    for source, targets in successors.items():
        for target in targets:
            reverse.setdefault(target, set()).add(source)
    return reverse


def hop_distances(origin: N, successors: Mapping[N, Iterable[N]], max_hops: int | None = None) -> dict[N, int]:
    """Breadth-first hop counts from `origin` along one relation (the origin itself at 0)."""
    distances = {origin: 0}
    frontier = deque([origin])
    while frontier:
        node = frontier.popleft()
        depth = distances[node]
        if max_hops is not None and depth >= max_hops:
            continue
        for target in successors.get(node, ()):
            if target not in distances:
                distances[target] = depth + 1
                frontier.append(target)
    return distances


def direction_relations(successors: Mapping[N, Iterable[N]], direction: Direction) -> dict[str, Mapping]:
    """The relation each direction walks: links as they point ("out"), and reversed ("in")."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)} (got {direction!r})")
    relations: dict[str, Mapping] = {}
    if direction in ("out", "both"):
        relations["out"] = successors
    if direction in ("in", "both"):
        relations["in"] = transpose(successors)
    return relations


def cone(origin: N, relations: Mapping[str, Mapping[N, Iterable[N]]],
         max_hops: int | None = None) -> dict[N, tuple[int, str]]:
    """Pages reachable from `origin` (excluded) with (hops, direction they were reached in).

    Each relation ("out", "in") is walked on its own and the results merge with the fewest hops; a
    page reached both ways at the same distance is marked "both".
    """
    merged: dict[N, tuple[int, str]] = {}
    for name, relation in relations.items():
        for node, hops in hop_distances(origin, relation, max_hops).items():
            if node == origin:
                continue
            seen = merged.get(node)
            if seen is None or hops < seen[0]:
                merged[node] = (hops, name)
            elif hops == seen[0] and seen[1] != name:
                merged[node] = (hops, "both")
    return merged


# ------------------------------------------------------------------------------------ influence


def random_walk_influence(origin: N, successors: Mapping[N, Iterable[N]], alpha: float = ALPHA,
                          tolerance: float = PUSH_TOLERANCE, max_work: int = MAX_PUSH_WORK) -> dict[N, float]:
    """Influence of `origin` on every page it reaches along `successors`, cycles allowed.

    The fixed point of x(v) = [v = origin] + α · Σ_{u → v} x(u) / outdeg(u), by residual pushing
    (each push moves a page's pending mass into its estimate and spreads α of it over its links).
    On a DAG this equals seed 004's one-pass result; the origin's own value includes walks that
    come back to it.
    """
    if not 0 < alpha < 1:
        raise ValueError("alpha must be strictly between 0 and 1")
    # A fixed order of links, so the pushes (and the last digits of the result) never depend on set order.
    targets = {node: tuple(sorted(nodes)) for node, nodes in successors.items()}
    estimate: dict[N, float] = {}
    residual: dict[N, float] = {origin: 1.0}
    queue = deque([origin])
    queued = {origin}
    work = 0
    while queue and work < max_work:
        node = queue.popleft()
        queued.discard(node)
        mass = residual.pop(node, 0.0)
        if mass == 0.0:
            continue
        estimate[node] = estimate.get(node, 0.0) + mass
        outgoing = targets.get(node, ())
        work += 1 + len(outgoing)
        if not outgoing:
            continue
        share = alpha * mass / len(outgoing)
        for target in outgoing:
            pending = residual.get(target, 0.0) + share
            residual[target] = pending
            if pending > tolerance and target not in queued:
                queued.add(target)
                queue.append(target)
    # Whatever is left (each below the tolerance, or cut by the work budget) is added as is: the
    # estimate never misses mass that has already reached a page.
    for node, mass in residual.items():
        estimate[node] = estimate.get(node, 0.0) + mass
    return estimate


def influence_by_direction(origin: N, relations: Mapping[str, Mapping[N, Iterable[N]]],
                           alpha: float = ALPHA) -> dict[N, float]:
    """Influence along each relation on its own, merged with max (a walk never switches direction)."""
    merged: dict[N, float] = {}
    for relation in relations.values():
        for node, value in random_walk_influence(origin, relation, alpha).items():
            if value > merged.get(node, 0.0):
                merged[node] = value
    return merged


# ------------------------------------------------------------------------------------ scoring

_TOKEN = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=8192)
def tokens(text: str) -> frozenset[str]:
    """Case- and accent-folded words of at least two characters. Cached: the pages around a page are
    scored again by every related call that reaches them, and the result is immutable."""
    if text.isascii():  # nothing to fold: the common case, and the fast one
        folded = text.lower()
    else:
        decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).lower())
        folded = "".join(ch for ch in decomposed if not unicodedata.category(ch).startswith("M"))
    return frozenset(word for word in _TOKEN.findall(folded) if len(word) >= 2)


def token_jaccard(query: frozenset[str], text: frozenset[str]) -> float:
    """|q ∩ t| / |q ∪ t|: seed 004's baseline text scorer (0 when either side has no word)."""
    if not query or not text:
        return 0.0
    return len(query & text) / len(query | text)


def recency(changed_at: datetime | None, now: datetime, half_life_days: float = RECENCY_HALF_LIFE_DAYS) -> float:
    """1 for a page changed now, halving every `half_life_days`; 0 for a page never compiled."""
    if changed_at is None:
        return 0.0
    age_days = max(0.0, (now - changed_at).total_seconds() / 86_400)
    return math.pow(0.5, age_days / half_life_days)


def score_candidates(candidates: Iterable[Candidate], influence: Mapping[str, float], query_text: str,
                     now: datetime, weights: ScoreWeights = DEFAULT_WEIGHTS) -> list[ScoredCandidate]:
    """Every candidate scored, sorted by (score desc, hops asc, id asc). No cut here."""
    query = tokens(query_text)
    scored = []
    for candidate in candidates:
        graph = influence.get(candidate.id, 0.0)
        text = token_jaccard(query, tokens(candidate.text))
        fresh = recency(candidate.changed_at, now)
        score = weights.influence * graph + weights.text * text + weights.recency * fresh
        scored.append(ScoredCandidate(id=candidate.id, hops=candidate.hops, direction=candidate.direction,
                                      influence=graph, text_relevance=text, recency=fresh, score=score))
    scored.sort(key=lambda item: (-item.score, item.hops, item.id))
    return scored


def rank_related(origin: str, relations: Mapping[str, Mapping[str, Iterable[str]]],
                 candidates: Iterable[Candidate], query_text: str, now: datetime, limit: int,
                 weights: ScoreWeights = DEFAULT_WEIGHTS) -> list[ScoredCandidate]:
    """The whole pipeline on an enumerated cone: influence, score every candidate, full sort, then limit."""
    influence = influence_by_direction(origin, relations)
    ranked = score_candidates((c for c in candidates if c.id != origin), influence, query_text, now, weights)
    return ranked[:max(0, limit)]


def clamp_max_hops(max_hops: int | None) -> int:
    return DEFAULT_MAX_HOPS if max_hops is None else max(1, min(max_hops, MAX_MAX_HOPS))
