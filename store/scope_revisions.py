"""Scope revisions (migration 0011): a number per scope that changes at the commit of every write to
its pages, sections, aliases, section sources, claims or claim sources, bumped by triggers whatever
code wrote the rows. A server keeps read answers under it (servers/read_cache.py)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

_REVISION = text("""
    SELECT coalesce((SELECT revision FROM wiki_scope_revisions WHERE tenant_id = :tenant AND owner_id = :owner), 0)
""")


async def scope_revision(conn: AsyncConnection, tenant: str, owner: str) -> int:
    """The scope's revision now (0 for a scope not written since revisions were counted)."""
    return int((await conn.execute(_REVISION, {"tenant": tenant, "owner": owner})).scalar_one())
