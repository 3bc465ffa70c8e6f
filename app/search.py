"""`search`: the pages that hold the answers, ranked by recall's own ranking grouped by page.

Agents have one ranking of a scope's words: recall's (app/recall_retrieve.py, fused by
`domain.recall.fuse`). A search runs the same retrievers on its words, a word standing for any word
it begins ("empan" finds "empanada"); each page scores the fused scores of its claims that rank and
of the memories its sections cite that rank; a page the words name (its title or an alias, or a
first name opening one) comes first, with the alias it matched. So the same words rank the same
texts alike whether an agent asks `recall` or `search`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.reads import (
    DEFAULT_SEARCH_LIMIT,
    MAX_QUERY_CHARS,
    Database,
    Hit,
    ReadScope,
    SearchResult,
    bounded,
    connection,
    text_argument,
)
from app.recall import parse_retrievers
from app.recall_retrieve import retrieve
from domain.recall import DEFAULT_TUNING, SEMANTIC_RANKINGS, fuse
from domain.search import MAX_SEARCH_LIMIT, normalize_search_terms
from planners.embeddings import Embedder
from store import recall_reads

# Above any fused score (a sum of a few weights over 61 or more): the pages the words name first.
NAMED_BONUS = 1.0
CANDIDATES = 400  # the fused head whose claims and memories vote for their pages


@dataclass
class _Page:
    id: str
    type: str
    slug: str
    title: str
    summary: str | None
    score: float = 0.0
    alias: str | None = None


async def search(db: Database, scope: ReadScope, query: str, limit: int | None = None,
                 embedder: Callable[[], Embedder] | None = None) -> SearchResult:
    """The scope's active pages for `query`, best first, at most `limit` (1-50)."""
    query = text_argument("query", query, MAX_QUERY_CHARS)
    limit = bounded("limit", limit, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT)
    if not normalize_search_terms(query):
        return SearchResult(query=query, hits=[])
    async with connection(db) as conn:
        found = await retrieve(conn, scope, query, parse_retrievers(None), None, embedder, DEFAULT_TUNING,
                               prefixes=True)
        # A page is found by what its texts say, its names or its dates; the embeddings order those
        # hits but never make one alone (every text has a nearest neighbour, "zebra" included).
        fused = [f for f in fuse(found.rankings, DEFAULT_TUNING)
                 if not set(f.ranks) <= SEMANTIC_RANKINGS][:CANDIDATES]
        score = {f.key: f.score for f in fused}
        memories = [f.key[2:] for f in fused if f.key.startswith("m:")]
        citing = await recall_reads.pages_citing(conn, scope.tenant, scope.owner, memories)
        votes = {f.key[2:]: f.score for f in fused if f.key.startswith("c:")}
        claims = await recall_reads.claim_details(conn, scope.tenant, scope.owner, list(votes))
    pages: dict[str, _Page] = {}
    for claim in claims.values():
        page = pages.setdefault(claim.page_id, _Page(id=claim.page_id, type=claim.page_type, slug=claim.page_slug,
                                                     title=claim.page_title, summary=claim.page_summary))
        page.score += votes[claim.id]
    for cite in citing:  # a memory that ranks votes for every page citing it
        page = pages.setdefault(cite.page_id, _Page(id=cite.page_id, type=cite.type, slug=cite.slug, title=cite.title,
                                                    summary=cite.summary))
        page.score += score[f"m:{cite.memory_id}"]
    for named in found.named_pages:
        page = pages.setdefault(named.id, _Page(id=named.id, type=named.type, slug=named.slug, title=named.title,
                                                summary=named.summary))
        if page.alias is None:
            page.score += NAMED_BONUS
            page.alias = named.alias
    best = sorted(pages.values(), key=lambda p: (-p.score, p.title.casefold(), p.id))[:limit]
    return SearchResult(query=query, hits=[Hit(type=p.type, slug=p.slug, title=p.title, summary=p.summary,
                                               score=round(p.score, 6), matched_alias=p.alias) for p in best])
