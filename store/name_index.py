"""The scope's names by blocking key: what the resolver looks a proposal's candidates up by.

Every stored alias has one `wiki_alias_keys` row per blocking key of its name (domain/name_key.py
`blocking_keys`: the name key, its letters without spaces, each significant word, acronyms, a
phonetic code). `index_new_aliases` keys the aliases of a scope that have none yet; the apply step
calls it after writing a batch's aliases, so any alias, whoever wrote it, is keyed by the next apply.
`pages_by_blocking_keys` returns, for each proposal, the active pages sharing a key with it, the
closest names first, a few per key.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.name_key import blocking_keys

PAGES_PER_BLOCKING_KEY = 8


async def index_new_aliases(conn: AsyncConnection, tenant: str, owner: str) -> int:
    """Key every alias of the scope that has no key yet; how many aliases were keyed."""
    rows = (await conn.execute(text("""
        SELECT a.id, a.page_id, a.alias FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner
          AND NOT EXISTS (SELECT 1 FROM wiki_alias_keys k WHERE k.alias_id = a.id)
    """), {"tenant": tenant, "owner": owner})).fetchall()
    keyed = [(str(row.id), str(row.page_id), key) for row in rows for key in blocking_keys(row.alias)]
    if keyed:
        await conn.execute(text("""
            INSERT INTO wiki_alias_keys (alias_id, page_id, tenant_id, owner_id, key)
            SELECT alias_id, page_id, :tenant, :owner, key
            FROM unnest(CAST(:aliases AS uuid[]), CAST(:pages AS uuid[]), CAST(:keys AS text[]))
                 AS keyed(alias_id, page_id, key)
            ON CONFLICT DO NOTHING
        """), {"tenant": tenant, "owner": owner, "aliases": [a for a, _, _ in keyed],
               "pages": [p for _, p, _ in keyed], "keys": [k for _, _, k in keyed]})
    return len(rows)


async def pages_by_blocking_keys(conn: AsyncConnection, tenant: str, owner: str,
                                 queries: list[tuple[int, str, str]]) -> list[tuple[int, str]]:
    """(query index, page id) for each (query index, blocking key, the proposal's normalised name):
    the scope's active pages with an alias of that key, the alias most like the name first."""
    if not queries:
        return []
    rows = await conn.execute(text("""
        SELECT q.idx, hit.page_id
        FROM unnest(CAST(:idx AS int[]), CAST(:keys AS text[]), CAST(:names AS text[])) AS q(idx, key, name)
        CROSS JOIN LATERAL (
            SELECT k.page_id, max(similarity(a.alias, q.name)) AS score
            FROM wiki_alias_keys k JOIN wiki_page_aliases a ON a.id = k.alias_id
            JOIN wiki_pages p ON p.id = k.page_id
            WHERE k.tenant_id = :tenant AND k.owner_id = :owner AND k.key = q.key AND p.status = 'active'
            GROUP BY k.page_id
            ORDER BY score DESC, k.page_id
            LIMIT :per_key
        ) hit
        ORDER BY q.idx, hit.score DESC
    """), {"tenant": tenant, "owner": owner, "idx": [i for i, _, _ in queries], "keys": [k for _, k, _ in queries],
           "names": [n for _, _, n in queries], "per_key": PAGES_PER_BLOCKING_KEY})
    return [(row.idx, str(row.page_id)) for row in rows]
