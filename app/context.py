"""`context`: the scope's most important current claims with no question, for an agent's system
prompt, within the same budget rules as recall (every text returned counts, four characters a token).

Every fact claim that holds now (never a superseded one) at least `min_confidence` sure is a
candidate (up to the surest POOL); each is scored by `domain.recall.importance` (confidence,
corroboration, recency of its last sighting, the hubness of its page), sorted, de-duplicated by
text and packed best first.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, Field

from app.reads import Database, ReadScope, connection
from app.recall import (
    LeftOut,
    RecalledClaim,
    RecallPage,
    RecallSource,
    budget_of,
    min_confidence_of,
)
from domain.claims import status_meanings
from domain.recall import Packable, importance, pack, text_cost, tokens_for
from store import recall_reads

POOL = 2_000
SOURCES_SHOWN = 5


class ContextResult(BaseModel):
    max_tokens: int
    tokens_used: int
    results: list[RecalledClaim]
    left_out: LeftOut
    # What each status among the results means, in one line (domain/claims.py STATUS_MEANINGS).
    statuses: dict[str, str] = Field(default_factory=dict)


async def context(db: Database, scope: ReadScope, max_tokens: int | None = None,
                  min_confidence: float | None = None) -> ContextResult:
    budget = budget_of(max_tokens)
    floor = min_confidence_of(min_confidence)
    now = datetime.now(UTC)
    async with connection(db) as conn:
        claims = await recall_reads.important_claims(conn, scope.tenant, scope.owner, floor, POOL)
        score = {c.id: importance(c.confidence or 0.0, c.corroboration,
                                  (now - c.last_seen).total_seconds() / 86_400 if c.last_seen else None, c.hubness)
                 for c in claims}
        by_id: dict[str, recall_reads.RecallClaimRow] = {}
        items: dict[str, Packable] = {}
        seen: set[str] = set()
        for claim in sorted(claims, key=lambda c: (-score[c.id], c.id)):
            if claim.text_key in seen:
                continue
            seen.add(claim.text_key)
            by_id[claim.id] = claim
            items[claim.id] = Packable(key=claim.id, cost=text_cost(claim.text, claim.page_title, claim.heading))
        packed = pack(items.values(), budget * 4)
        by_id |= await recall_reads.claim_details(conn, scope.tenant, scope.owner, packed.chosen)  # with sources
    results = [RecalledClaim(
        text=c.text, page=RecallPage(type=c.page_type, slug=c.page_slug, title=c.page_title), section=c.section_slug,
        heading=c.heading, claim_kind=c.kind, status=c.status, confidence=c.confidence,
        corroboration=c.corroboration, first_seen=c.first_seen, last_seen=c.last_seen, validity=c.validity,
        valid_from=c.valid_from, valid_to=c.valid_to,
        sources=[RecallSource(id=s) for s in c.sources[:SOURCES_SHOWN]], source_count=c.corroboration,
        score=round(score[c.id], 6), signals={}) for c in (by_id[k] for k in packed.chosen)]
    left = packed.left_out
    return ContextResult(max_tokens=budget, tokens_used=tokens_for(packed.used_chars), results=results,
                         statuses=status_meanings(r.status for r in results),
                         left_out=LeftOut(answers=len(left), best=by_id[left[0]].text if left else None,
                                          best_tokens=tokens_for(items[left[0]].cost) if left else None))
