"""Memory embeddings (migration 0015_memory_vectors): which memories of a scope still need one, and
storing them. A memory's vector is keyed on its text (`text_key`, the md5 of its content), so a
retain that replaces a memory's text has it embedded again; a forget removes it with the memory."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


class MemoryToEmbed(BaseModel):
    id: str
    text: str
    text_key: str


# A vector made this long after the newest change of the scope's memories is of their current text:
# the embedding reads the texts and stores the vectors a moment later (well under this), so a change
# it did not see would be newer. Closer than this, the texts themselves are compared.
SETTLED_SECONDS = 5


async def memories_without_vectors(conn: AsyncConnection, tenant: str, owner: str, model: str, dimensions: int,
                                   limit: int = 5_000) -> list[MemoryToEmbed]:
    """Memories of the scope with no vector by `model` at `dimensions` for their current text (new or
    changed memories, and every memory once the settings name another model or size).

    The compile asks after every batch, so first comes a check from indexes alone: as many vectors as
    memories, the newest made well after the newest change of a memory, means none is missing."""
    settled = (await conn.execute(text("""
        SELECT (SELECT count(*) FROM memory_units WHERE tenant_id = :tenant AND owner_id = :owner)
                 = (SELECT count(*) FROM wiki_memory_vectors WHERE tenant_id = :tenant AND owner_id = :owner
                      AND model = :model AND dimensions = :dimensions)
               AND coalesce((SELECT max(created_at) FROM wiki_memory_vectors WHERE tenant_id = :tenant
                               AND owner_id = :owner AND model = :model AND dimensions = :dimensions), '-infinity')
                   > coalesce((SELECT max(updated_at) FROM memory_units WHERE tenant_id = :tenant
                                 AND owner_id = :owner), '-infinity') + make_interval(secs => :settled)
    """), {"tenant": tenant, "owner": owner, "model": model, "dimensions": dimensions,
           "settled": SETTLED_SECONDS})).scalar_one()
    if settled:
        return []
    rows = await conn.execute(text("""
        SELECT m.id::text AS id, m.content, md5(m.content) AS key FROM memory_units m
        LEFT JOIN wiki_memory_vectors v ON v.tenant_id = m.tenant_id AND v.owner_id = m.owner_id
                                        AND v.memory_id = m.id AND v.model = :model AND v.dimensions = :dimensions
                                        AND v.text_key = md5(m.content)
        WHERE m.tenant_id = :tenant AND m.owner_id = :owner AND v.memory_id IS NULL
        ORDER BY m.id
        LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "model": model, "dimensions": dimensions, "limit": limit})
    return [MemoryToEmbed(id=r.id, text=r.content, text_key=r.key) for r in rows]


async def store_memory_vectors(conn: AsyncConnection, tenant: str, owner: str, model: str, dimensions: int,
                               memories: Sequence[MemoryToEmbed], vectors: Sequence[bytes]) -> None:
    """One embedding per memory (float32 bytes, `dimensions` of them each), replacing the memory's
    embedding by any other model, size or text. A memory forgotten meanwhile is skipped."""
    if not memories:
        return
    await conn.execute(text("""
        INSERT INTO wiki_memory_vectors (tenant_id, owner_id, memory_id, model, dimensions, text_key, vector)
        SELECT :tenant, :owner, v.id, :model, :dimensions, v.key, v.vector
        FROM unnest(CAST(:ids AS uuid[]), CAST(:keys AS text[]), CAST(:vectors AS bytea[])) AS v(id, key, vector)
        JOIN memory_units m ON m.tenant_id = :tenant AND m.owner_id = :owner AND m.id = v.id
        ON CONFLICT (tenant_id, owner_id, memory_id) DO UPDATE
            SET model = excluded.model, dimensions = excluded.dimensions, text_key = excluded.text_key,
                vector = excluded.vector, created_at = now()
    """), {"tenant": tenant, "owner": owner, "model": model, "dimensions": dimensions,
           "ids": [m.id for m in memories], "keys": [m.text_key for m in memories], "vectors": list(vectors)})
