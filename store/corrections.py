"""The operator's corrections, kept apart from what compiles write so that every compile and every
`wiki rebuild` honours them (migration 0009_claim_validity).

A correction names pages by type and slug and names by their normalised form, never by row id: a
rebuild deletes the pages and writes them again under the same keys, and the correction applies to
them again. Apply calls `reapply_corrections` at the end of every batch (store/plan_apply.py): the
aliases added by hand are on their pages (as `manual` aliases, which the resolver's exact rung
matches before any fuzzy one), the aliases removed by hand are gone, and a name the operator ignores
is never an open mention. The planning activity drops new pages and promotions under an ignored
name (`ignored_names`), and the aggregation pass drops section promotions from a blocked section
(`blocked_sections`). A paused scope's compile reads no batch (`is_paused`), and the lint skips it.
"""

from __future__ import annotations

from uuid import UUID

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain import ids
from domain.aliases import normalize_alias


class ScopeCorrections(BaseModel):
    """What an operator has set on one scope (`wiki scope show`)."""

    paused: bool
    deterministic_links_off: bool
    aliases_added: list[str]  # "type/slug: alias"
    aliases_removed: list[str]
    ignored_names: list[str]
    blocked_sections: list[str]  # "type/slug#section"


async def _page_id(conn: AsyncConnection, tenant: str, owner: str, page_type: str, slug: str) -> UUID | None:
    return (await conn.execute(text("""
        SELECT id FROM wiki_pages WHERE tenant_id = :tenant AND owner_id = :owner AND type = :type AND slug = :slug
    """), {"tenant": tenant, "owner": owner, "type": page_type, "slug": slug})).scalar_one_or_none()


async def set_alias(conn: AsyncConnection, tenant: str, owner: str, page_type: str, slug: str, alias: str,
                    action: str) -> bool | None:
    """Add (`add`) or remove (`remove`) an alias of a page by hand, now and in every compile after;
    None when the scope has no such page, False when there was nothing to remove."""
    page_id = await _page_id(conn, tenant, owner, page_type, slug)
    if page_id is None:
        return None
    key = normalize_alias(alias)
    await conn.execute(text("""
        INSERT INTO wiki_alias_corrections (tenant_id, owner_id, page_type, page_slug, alias, action)
        VALUES (:tenant, :owner, :type, :slug, :alias, :action)
        ON CONFLICT (tenant_id, owner_id, page_type, page_slug, alias)
        DO UPDATE SET action = excluded.action, created_at = now()
    """), {"tenant": tenant, "owner": owner, "type": page_type, "slug": slug, "alias": key, "action": action})
    if action == "add":
        await conn.execute(text("""
            INSERT INTO wiki_page_aliases (id, page_id, alias, source) VALUES (:id, :page, :alias, 'manual')
            ON CONFLICT (page_id, alias) DO UPDATE SET source = 'manual'
        """), {"id": ids.alias_id(page_id, key), "page": page_id, "alias": key})
        return True
    removed = await conn.execute(text("DELETE FROM wiki_page_aliases WHERE page_id = :page AND alias = :alias"),
                                 {"page": page_id, "alias": key})
    return bool(removed.rowcount)


async def ignore_name(conn: AsyncConnection, tenant: str, owner: str, name: str) -> int:
    """Never promote this name nor show it to the planner again; returns how many open mentions of
    it were closed as ignored."""
    key = normalize_alias(name)
    await conn.execute(text("""
        INSERT INTO wiki_ignored_names (tenant_id, owner_id, alias_normalized, alias) VALUES (:tenant, :owner, :key, :name)
        ON CONFLICT (tenant_id, owner_id, alias_normalized) DO NOTHING
    """), {"tenant": tenant, "owner": owner, "key": key, "name": name.strip()})
    return await _close_ignored_mentions(conn, tenant, owner)


async def _close_ignored_mentions(conn: AsyncConnection, tenant: str, owner: str) -> int:
    """Open mentions of ignored names become ignored: counted into the ignored row when there is one
    already (a mention is unique per name and status), else moved to it."""
    # The sightings (by memory) go with the count, so a forget can take them out of it again.
    await conn.execute(text("""
        INSERT INTO wiki_mention_sightings (mention_id, memory_id, sightings)
        SELECT i.id, s.memory_id, s.sightings FROM wiki_unresolved_mentions o
        JOIN wiki_ignored_names n ON n.tenant_id = o.tenant_id AND n.owner_id = o.owner_id
                                 AND n.alias_normalized = o.alias_normalized
        JOIN wiki_unresolved_mentions i ON i.tenant_id = o.tenant_id AND i.owner_id = o.owner_id
                                       AND i.alias_normalized = o.alias_normalized AND i.status = 'ignored'
        JOIN wiki_mention_sightings s ON s.mention_id = o.id
        WHERE o.tenant_id = :tenant AND o.owner_id = :owner AND o.status = 'open'
        ON CONFLICT (mention_id, memory_id) DO UPDATE SET sightings = wiki_mention_sightings.sightings + excluded.sightings
    """), {"tenant": tenant, "owner": owner})
    await conn.execute(text("""
        WITH open AS (
            DELETE FROM wiki_unresolved_mentions o
            USING wiki_ignored_names n, wiki_unresolved_mentions i
            WHERE o.tenant_id = :tenant AND o.owner_id = :owner AND o.status = 'open'
              AND n.tenant_id = o.tenant_id AND n.owner_id = o.owner_id AND n.alias_normalized = o.alias_normalized
              AND i.tenant_id = o.tenant_id AND i.owner_id = o.owner_id AND i.alias_normalized = o.alias_normalized
              AND i.status = 'ignored'
            RETURNING o.alias_normalized, o.mention_count
        )
        UPDATE wiki_unresolved_mentions i SET mention_count = i.mention_count + open.mention_count, updated_at = now()
        FROM open WHERE i.tenant_id = :tenant AND i.owner_id = :owner AND i.status = 'ignored'
          AND i.alias_normalized = open.alias_normalized
    """), {"tenant": tenant, "owner": owner})
    moved = await conn.execute(text("""
        UPDATE wiki_unresolved_mentions m SET status = 'ignored', updated_at = now()
        FROM wiki_ignored_names n
        WHERE m.tenant_id = :tenant AND m.owner_id = :owner AND m.status = 'open'
          AND n.tenant_id = m.tenant_id AND n.owner_id = m.owner_id AND n.alias_normalized = m.alias_normalized
    """), {"tenant": tenant, "owner": owner})
    return moved.rowcount or 0


async def ignored_names(conn: AsyncConnection, tenant: str, owner: str) -> set[str]:
    rows = await conn.execute(text("""
        SELECT alias_normalized FROM wiki_ignored_names WHERE tenant_id = :tenant AND owner_id = :owner
    """), {"tenant": tenant, "owner": owner})
    return {row.alias_normalized for row in rows}


async def set_section_block(conn: AsyncConnection, tenant: str, owner: str, page_type: str, slug: str,
                            section: str, blocked: bool) -> bool | None:
    """Never promote (`blocked`) or again allow promoting a section of a page to a page of its own;
    None when the scope has no such page."""
    if await _page_id(conn, tenant, owner, page_type, slug) is None:
        return None
    params = {"tenant": tenant, "owner": owner, "type": page_type, "slug": slug, "section": section}
    if blocked:
        await conn.execute(text("""
            INSERT INTO wiki_section_promotion_blocks (tenant_id, owner_id, page_type, page_slug, section_slug)
            VALUES (:tenant, :owner, :type, :slug, :section) ON CONFLICT DO NOTHING
        """), params)
        return True
    gone = await conn.execute(text("""
        DELETE FROM wiki_section_promotion_blocks WHERE tenant_id = :tenant AND owner_id = :owner
          AND page_type = :type AND page_slug = :slug AND section_slug = :section
    """), params)
    return bool(gone.rowcount)


async def blocked_sections(conn: AsyncConnection, tenant: str, owner: str) -> set[tuple[str, str]]:
    """(page id, section slug) of the scope's sections never to promote from."""
    rows = await conn.execute(text("""
        SELECT p.id::text AS page_id, b.section_slug FROM wiki_section_promotion_blocks b
        JOIN wiki_pages p ON p.tenant_id = b.tenant_id AND p.owner_id = b.owner_id AND p.type = b.page_type
             AND p.slug = b.page_slug
        WHERE b.tenant_id = :tenant AND b.owner_id = :owner
    """), {"tenant": tenant, "owner": owner})
    return {(row.page_id, row.section_slug) for row in rows}


async def _switch(conn: AsyncConnection, tenant: str, owner: str, column: str, on: bool) -> None:
    assert column in ("paused_at", "deterministic_links_off_at")
    await conn.execute(text(f"""
        INSERT INTO wiki_scope_switches (tenant_id, owner_id, {column}) VALUES (:tenant, :owner, CASE WHEN :on THEN now() END)
        ON CONFLICT (tenant_id, owner_id) DO UPDATE SET
            {column} = CASE WHEN :on THEN coalesce(wiki_scope_switches.{column}, now()) END, updated_at = now()
    """), {"tenant": tenant, "owner": owner, "on": on})


async def set_paused(conn: AsyncConnection, tenant: str, owner: str, paused: bool) -> None:
    await _switch(conn, tenant, owner, "paused_at", paused)


async def is_paused(conn: AsyncConnection, tenant: str, owner: str) -> bool:
    return bool((await conn.execute(text("""
        SELECT EXISTS (SELECT 1 FROM wiki_scope_switches WHERE tenant_id = :tenant AND owner_id = :owner
                       AND paused_at IS NOT NULL)
    """), {"tenant": tenant, "owner": owner})).scalar_one())


async def rollback_deterministic_links(conn: AsyncConnection, tenant: str, owner: str) -> int:
    """Drop the scope's deterministic parent and co-mention links (their context tags say which) and
    stop compiles writing them again; the planner's links stay. Returns how many were dropped."""
    await _switch(conn, tenant, owner, "deterministic_links_off_at", True)
    dropped = await conn.execute(text("""
        DELETE FROM wiki_page_links l USING wiki_pages p
        WHERE p.id = l.from_page_id AND p.tenant_id = :tenant AND p.owner_id = :owner
          AND (l.context LIKE 'deterministic:%' OR l.context LIKE 'co\\_mention:%')
    """), {"tenant": tenant, "owner": owner})
    return dropped.rowcount or 0


class InForce(BaseModel):
    """Which corrections a scope has, read once per batch so a scope with none pays one statement."""

    aliases: bool = False
    ignored_names: bool = False
    deterministic_links_off: bool = False


async def in_force(conn: AsyncConnection, tenant: str, owner: str) -> InForce:
    row = (await conn.execute(text("""
        SELECT EXISTS (SELECT 1 FROM wiki_alias_corrections WHERE tenant_id = :tenant AND owner_id = :owner) AS aliases,
               EXISTS (SELECT 1 FROM wiki_ignored_names WHERE tenant_id = :tenant AND owner_id = :owner) AS ignored,
               EXISTS (SELECT 1 FROM wiki_scope_switches WHERE tenant_id = :tenant AND owner_id = :owner
                       AND deterministic_links_off_at IS NOT NULL) AS links_off
    """), {"tenant": tenant, "owner": owner})).one()
    return InForce(aliases=row.aliases, ignored_names=row.ignored, deterministic_links_off=row.links_off)


async def reapply_corrections(conn: AsyncConnection, tenant: str, owner: str, found: InForce) -> None:
    """After a batch: the hand-made aliases on their pages, the hand-removed ones gone, and no open
    mention of an ignored name."""
    if found.ignored_names:
        await _close_ignored_mentions(conn, tenant, owner)
    if not found.aliases:
        return
    missing = (await conn.execute(text("""
        SELECT p.id AS page_id, c.alias
        FROM wiki_alias_corrections c JOIN wiki_pages p ON p.tenant_id = c.tenant_id AND p.owner_id = c.owner_id
             AND p.type = c.page_type AND p.slug = c.page_slug
        LEFT JOIN wiki_page_aliases a ON a.page_id = p.id AND a.alias = c.alias AND a.source = 'manual'
        WHERE c.tenant_id = :tenant AND c.owner_id = :owner AND c.action = 'add' AND a.page_id IS NULL
    """), {"tenant": tenant, "owner": owner})).all()
    if missing:
        await conn.execute(text("""
            INSERT INTO wiki_page_aliases (id, page_id, alias, source)
            SELECT id, page_id, alias, 'manual'
            FROM unnest(CAST(:ids AS uuid[]), CAST(:pages AS uuid[]), CAST(:aliases AS text[])) AS m(id, page_id, alias)
            ON CONFLICT (page_id, alias) DO UPDATE SET source = 'manual'
        """), {"ids": [ids.alias_id(row.page_id, row.alias) for row in missing],
               "pages": [row.page_id for row in missing], "aliases": [row.alias for row in missing]})
    await conn.execute(text("""
        DELETE FROM wiki_page_aliases a USING wiki_alias_corrections c, wiki_pages p
        WHERE c.tenant_id = :tenant AND c.owner_id = :owner AND c.action = 'remove'
          AND p.tenant_id = c.tenant_id AND p.owner_id = c.owner_id AND p.type = c.page_type AND p.slug = c.page_slug
          AND a.page_id = p.id AND a.alias = c.alias
    """), {"tenant": tenant, "owner": owner})


async def scope_corrections(conn: AsyncConnection, tenant: str, owner: str) -> ScopeCorrections:
    params = {"tenant": tenant, "owner": owner}
    switches = (await conn.execute(text("""
        SELECT paused_at, deterministic_links_off_at FROM wiki_scope_switches
        WHERE tenant_id = :tenant AND owner_id = :owner
    """), params)).first()
    aliases = (await conn.execute(text("""
        SELECT page_type || '/' || page_slug || ': ' || alias AS entry, action FROM wiki_alias_corrections
        WHERE tenant_id = :tenant AND owner_id = :owner
        ORDER BY page_type COLLATE "C", page_slug COLLATE "C", alias COLLATE "C"
    """), params)).all()
    names = (await conn.execute(text("""
        SELECT alias FROM wiki_ignored_names WHERE tenant_id = :tenant AND owner_id = :owner
        ORDER BY alias_normalized COLLATE "C"
    """), params)).scalars().all()
    blocks = (await conn.execute(text("""
        SELECT page_type || '/' || page_slug || '#' || section_slug AS entry FROM wiki_section_promotion_blocks
        WHERE tenant_id = :tenant AND owner_id = :owner
        ORDER BY page_type COLLATE "C", page_slug COLLATE "C", section_slug COLLATE "C"
    """), params)).scalars().all()
    return ScopeCorrections(
        paused=bool(switches and switches.paused_at), deterministic_links_off=bool(switches and
                                                                                   switches.deterministic_links_off_at),
        aliases_added=[a.entry for a in aliases if a.action == "add"],
        aliases_removed=[a.entry for a in aliases if a.action == "remove"],
        ignored_names=list(names), blocked_sections=list(blocks))
