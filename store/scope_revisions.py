"""A scope's revisions (triggers of migration 0011_scope_revisions), 0 before the first write:
`revision` moves at the commit of every write to its wiki, its memories or its runs; `wiki_revision`
only with writes to the wiki's own tables (pages, sections, aliases, links, claims, citations).

A reader keeping something it computed from the scope keys it on the revision read *before* the data,
on the same connection: read committed, the data is then at least as new as the revision, so a kept
value is never older than its key says (at worst newer, and computed again on the next read). An
answer made of pages alone keys on `wiki_revision`, so retains streaming in do not empty its cache.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

_REVISIONS = text("""
    SELECT revision, wiki_revision FROM wiki_scope_revisions WHERE tenant_id = :tenant AND owner_id = :owner
""")


async def _revisions(conn: AsyncConnection, tenant: str, owner: str) -> tuple[int, int]:
    found = (await conn.execute(_REVISIONS, {"tenant": tenant, "owner": owner})).one_or_none()
    return (int(found[0]), int(found[1])) if found else (0, 0)


async def scope_revision(conn: AsyncConnection, tenant: str, owner: str) -> int:
    """Moves with every committed write to the scope (wiki, memories, runs)."""
    return (await _revisions(conn, tenant, owner))[0]


async def wiki_revision(conn: AsyncConnection, tenant: str, owner: str) -> int:
    """Moves with every committed write to the scope's wiki tables; retains and runs leave it."""
    return (await _revisions(conn, tenant, owner))[1]
