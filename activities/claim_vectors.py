"""Embeddings of new and changed claims and memories, made inside the compile's own activities (after
a batch's apply commits, and when a run finishes, for the aggregation pass's claims), so the workflow
and its history do not change. Every memory of the scope is embedded, compiled or not: recall ranks
memories by meaning as well as claims.

Incremental: only claims (and memories) with no embedding of their current text by the configured model at the
configured size are embedded (`store.recall_reads.claims_without_vectors`), so an unchanged claim
is never embedded twice, a retried activity does nothing more, and a change of model or size embeds
every claim again (recall scores only the configured model's vectors, never a mix).

No database connection is held while a provider is called: the claims are read in one short
transaction, embedded (a provider in batches, retrying throttling within its bound:
planners/embedding_providers.py), and stored in another; a claim whose text changed in between is
stored under its old text key and embedded again next time.

A failure here is logged and left for the next batch to catch up: the compile never fails for want
of an embedding, and recall answers without one (the other retrievers).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncEngine

from messages.compile import Scope
from planners.cpu_pool import off_loop
from store.memory_vectors import memories_without_vectors, store_memory_vectors
from store.recall_reads import claims_without_vectors, store_claim_vectors

if TYPE_CHECKING:
    from planners.embeddings import Embedder

EMBED_CHUNK = 2_000
log = logging.getLogger(__name__)


async def embed_new_claims(engine: AsyncEngine, scope: Scope, embedder: Callable[[], Embedder]) -> int:
    """Embed the scope's claims that lack an embedding of their current text, then its memories
    (`embed_new_memories`); how many claims were embedded."""
    done, failed = await _embed_missing(engine, scope, embedder, "claim", claims_without_vectors,
                                        store_claim_vectors)
    if not failed:  # a provider that just failed is not asked again in the same step
        await embed_new_memories(engine, scope, embedder)
    return done


async def embed_new_memories(engine: AsyncEngine, scope: Scope, embedder: Callable[[], Embedder]) -> int:
    """Embed the scope's memories that lack an embedding of their current text; how many were embedded."""
    return (await _embed_missing(engine, scope, embedder, "memory", memories_without_vectors,
                                 store_memory_vectors))[0]


async def _embed_missing(engine: AsyncEngine, scope: Scope, embedder: Callable[[], Embedder], what: str,
                         missing: Callable[..., Awaitable[Sequence[Any]]],
                         store: Callable[..., Awaitable[None]]) -> tuple[int, bool]:
    """How many rows were embedded, and whether it stopped on a failure."""
    from planners.embeddings import to_bytes

    done = 0
    try:
        model = embedder()
        while True:
            async with engine.connect() as conn:
                rows = await missing(conn, scope.tenant, scope.owner, model.model, model.dimensions, EMBED_CHUNK)
            if not rows:
                return done, False
            texts = [row.text for row in rows]
            # A provider's call waits on the network; the static model computes: off the event loop either way.
            vectors = await (asyncio.to_thread(model.embed, texts) if model.remote else off_loop(model.embed, texts))
            async with engine.begin() as conn:
                await store(conn, scope.tenant, scope.owner, model.model, model.dimensions, rows,
                            [to_bytes(v) for v in vectors])
            done += len(rows)
            if len(rows) < EMBED_CHUNK:
                return done, False
    except Exception as error:  # noqa: BLE001 - an embedding never fails the compile (see the docstring)
        log.warning("%s embeddings for %s/%s not made: %s", what, scope.tenant, scope.owner, error)
        return done, True
