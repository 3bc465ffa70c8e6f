"""A scope's revision: a number every committed write to its wiki or its memories moves forward
(triggers of migration 0012_web_counts), 0 before the first one.

A reader keeping something it computed from the whole scope keys it on the revision read *before*
the data: read committed, the data is then at least as new as the revision, so a kept value is never
older than its key says (at worst newer, and computed again on the next read).
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


async def scope_revision(conn: AsyncConnection, tenant: str, owner: str) -> int:
    found = (await conn.execute(text("""
        SELECT revision FROM wiki_scope_revisions WHERE tenant_id = :tenant AND owner_id = :owner
    """), {"tenant": tenant, "owner": owner})).scalar_one_or_none()
    return found or 0
