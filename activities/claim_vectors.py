"""Embeddings of new and changed claims, made inside the compile's own activities (after a batch's
apply commits, and when a run finishes, for the aggregation pass's claims), so the workflow and its
history do not change.

Incremental: only claims with no embedding of their current text by the configured model are
embedded (`store.recall_reads.claims_without_vectors`), so an unchanged claim is never embedded
twice and a retried activity does nothing more. A failure here is logged and left for the next
batch to catch up: the compile never fails for want of an embedding, and recall answers without
one (the other retrievers).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine

from messages.compile import Scope
from store.recall_reads import claims_without_vectors, store_claim_vectors

if TYPE_CHECKING:
    from planners.embeddings import Embedder

EMBED_CHUNK = 2_000
log = logging.getLogger(__name__)


async def embed_new_claims(engine: AsyncEngine, scope: Scope, embedder: Callable[[], Embedder]) -> int:
    """Embed the scope's claims that lack an embedding of their current text; how many were embedded."""
    from planners.embeddings import to_bytes

    done = 0
    try:
        model = embedder()
        while True:
            async with engine.begin() as conn:
                claims = await claims_without_vectors(conn, scope.tenant, scope.owner, model.model, EMBED_CHUNK)
                if not claims:
                    return done
                vectors = model.embed([c.text for c in claims])
                await store_claim_vectors(conn, scope.tenant, scope.owner, model.model, claims,
                                          [to_bytes(v) for v in vectors])
            done += len(claims)
            if len(claims) < EMBED_CHUNK:
                return done
    except Exception as error:  # noqa: BLE001 - an embedding never fails the compile (see the docstring)
        log.warning("claim embeddings for %s/%s not made: %s", scope.tenant, scope.owner, error)
        return done
