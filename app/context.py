"""`context`: the scope's most important current claims with no question, for an agent's system
prompt, in a body the budget bounds as sent (the rules of recall's, domain/recall_body.py).

Every fact claim that holds now (never a superseded one) at least `min_confidence` sure is a
candidate (up to the surest POOL); each is scored by `domain.recall.importance` (confidence,
corroboration, recency of its last sighting, the hubness of its page), sorted, de-duplicated by
text and packed best first. Lines that keep the wiki's books (counts, spans) are not facts and never
come.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from app.reads import Database, ReadScope, connection
from app.recall import (
    MEMORY_IDS_SHOWN,
    RecallItem,
    RecallResult,
    budget_of,
    item_json,
    item_lines,
    item_text,
    min_confidence_of,
)
from domain.claims import status_meanings
from domain.recall import importance
from domain.recall_body import Candidate, pack_json, pack_lines
from domain.recall_dates import span_text
from domain.recall_lines import line_role
from store import recall_reads

POOL = 2_000


async def context(db: Database, scope: ReadScope, max_tokens: int | None = None,
                  min_confidence: float | None = None, verbose: bool = False,
                  form: str = "json", reserve: int = 0) -> RecallResult:
    started = time.perf_counter()
    budget = budget_of(max_tokens)
    floor = min_confidence_of(min_confidence)
    now = datetime.now(UTC)
    async with connection(db) as conn:
        claims = await recall_reads.important_claims(conn, scope.tenant, scope.owner, floor, POOL)
        score = {c.id: importance(c.confidence or 0.0, c.corroboration,
                                  (now - c.last_seen).total_seconds() / 86_400 if c.last_seen else None, c.hubness)
                 for c in claims}
        ordered = []
        seen: set[str] = set()
        for claim in sorted(claims, key=lambda c: (-score[c.id], c.id)):
            if claim.text_key in seen or line_role(claim.text, claim.kind) == "bookkeeping":
                continue
            seen.add(claim.text_key)
            ordered.append(claim)
        # The head a budget could hold, with their sources.
        head = ordered[:30 + budget * 4 // 60]
        detailed = await recall_reads.claim_details(conn, scope.tenant, scope.owner, [c.id for c in head])
    items = [RecallItem(
        kind="claim", text=c.text, page=f"{c.page_type}/{c.page_slug}", date=span_text(c.first_seen, c.last_seen),
        memories=(detailed[c.id].sources if c.id in detailed else c.sources)[:MEMORY_IDS_SHOWN], claim_id=c.id,
        section=c.section_slug, heading=c.heading, claim_kind=c.kind, status=c.status, confidence=c.confidence,
        source_count=c.corroboration, validity=c.validity, valid_from=c.valid_from, valid_to=c.valid_to,
        score=round(score[c.id], 6)) for c in head]
    took = round((time.perf_counter() - started) * 1000, 1)
    candidates = [Candidate(item=item_json(i, verbose), text=item_text(i)) for i in items]
    if form == "text":
        body = pack_lines(lambda tokens, most: f"Context of {scope.tenant}/{scope.owner}: {tokens} of {most} tokens",
                          [Candidate(item=item_lines(rank, i), text=item_text(i)) for rank, i in enumerate(items, 1)],
                          budget, lambda left, _best: f"left out: {left} more claims" if left else
                          ("" if items else "no claim yet: compile some memories first"), reserve)
    else:
        body = pack_json({"max_tokens": budget}, candidates, budget, [{"statuses": status_meanings(i.status for i in items if i.status), "took_ms": took}] if verbose else [], verbose,
                         reserve)
    return RecallResult(body=body.text, max_tokens=budget, tokens_used=body.tokens_used,
                        results=[items[i] for i in body.chosen], left_out=body.left_out + len(ordered) - len(head),
                        time_window=None, took_ms=took)
