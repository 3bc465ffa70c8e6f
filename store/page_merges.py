"""An operator's page merge and its exact undo, kept on record.

`merge_pages(A, B)` moves A's sections (with their claims and sources, which hang off the section
rows) and its aliases onto B, archives A, and writes a `wiki_page_merges` row listing exactly what
moved: each section's id, slug and position, each alias moved or dropped (B had it already), and
A's status before. `unmerge_page(A)` reads that row and puts every moved row back where it was,
so both pages, their claims, sources and aliases are as before the merge (what later compiles
added to B stays on B). Both also keep a decision in `wiki_merge_decisions` (decided by
"operator").

The merge survives compiles and `wiki rebuild`: page ids are uuid5 of (scope, type, slug), and the
resolver sends any proposal of A's (type, slug) to B (`follow_operator_merge`), so a rebuilt scope
never writes A again while the merge stands.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.render import render_body_markdown
from store.merge_records import Proposal

_NAMESPACE = uuid.UUID("5c3e8a61-0d7b-4f2e-a4c9-7e1b2d3f4a58")


class MergeRefused(Exception):
    """A merge or unmerge that cannot be done, with the sentence that says why."""


class PageMerge(BaseModel):
    id: str
    source: str  # type/slug
    target: str
    sections_moved: int
    aliases_moved: int
    merged_at: str
    undone_at: str | None = None


async def _page(conn: AsyncConnection, tenant: str, owner: str, page_type: str, slug: str) -> Any:
    return (await conn.execute(text("""
        SELECT id, type, slug, title, status FROM wiki_pages
        WHERE tenant_id = :tenant AND owner_id = :owner AND type = :type AND slug = :slug FOR UPDATE
    """), {"tenant": tenant, "owner": owner, "type": page_type, "slug": slug})).first()


async def _render(conn: AsyncConnection, page_ids: list[str]) -> None:
    for page_id in page_ids:
        rows = (await conn.execute(text("""
            SELECT heading, body_md, position FROM wiki_page_sections WHERE page_id = :id ORDER BY position, section_slug
        """), {"id": page_id})).all()
        await conn.execute(text("UPDATE wiki_pages SET body_md = :body, updated_at = now() WHERE id = :id"),
                           {"id": page_id, "body": render_body_markdown(rows)})


async def _decision(conn: AsyncConnection, tenant: str, owner: str, source: Any, target: Any, same: bool,
                    reason: str, merge_id: str) -> None:
    await conn.execute(text("""
        INSERT INTO wiki_merge_decisions (id, tenant_id, owner_id, proposal_type, proposal_slug, proposal_names,
                                          candidate_page_id, rung, decided_by, same, reason, evidence)
        VALUES (:id, :tenant, :owner, :type, :slug, :names, :target, 'operator', 'operator', :same, :reason,
                CAST(:evidence AS jsonb))
    """), {"id": uuid.uuid5(_NAMESPACE, f"{merge_id}\x1f{same}"), "tenant": tenant, "owner": owner,
           "type": source.type, "slug": source.slug, "names": [source.title], "target": target.id, "same": same,
           "reason": reason, "evidence": json.dumps({"merge": merge_id})})


async def merge_pages(conn: AsyncConnection, tenant: str, owner: str, source_key: tuple[str, str],
                      target_key: tuple[str, str]) -> PageMerge:
    """Merge page `source_key` (type, slug) into `target_key`; raises MergeRefused with the reason."""
    source = await _page(conn, tenant, owner, *source_key)
    target = await _page(conn, tenant, owner, *target_key)
    for key, page in ((source_key, source), (target_key, target)):
        if page is None:
            raise MergeRefused(f"no page {key[0]}/{key[1]} in {tenant}/{owner}")
        if page.status != "active":
            raise MergeRefused(f"{key[0]}/{key[1]} is {page.status}: only active pages merge")
    if source.id == target.id:
        raise MergeRefused("a page cannot be merged into itself")
    if source.type != target.type:
        raise MergeRefused(f"{source.type}/{source.slug} and {target.type}/{target.slug} are pages of different "
                           "types: only pages of one type merge")
    scope = {"source": source.id, "target": target.id}
    target_slugs = {row.section_slug for row in await conn.execute(
        text("SELECT section_slug FROM wiki_page_sections WHERE page_id = :target"), scope)}
    next_position = (await conn.execute(text(
        "SELECT coalesce(max(position), -1) + 1 FROM wiki_page_sections WHERE page_id = :target"), scope)).scalar_one()
    sections = []
    for index, row in enumerate((await conn.execute(text("""
        SELECT id, section_slug, position FROM wiki_page_sections WHERE page_id = :source ORDER BY position, section_slug
    """), scope)).all()):
        new_slug = row.section_slug if row.section_slug not in target_slugs else f"{row.section_slug}-{source.slug}"
        sections.append({"id": str(row.id), "slug": row.section_slug, "position": row.position, "new_slug": new_slug,
                         "new_position": next_position + index})
        target_slugs.add(new_slug)
    target_aliases = {row.alias for row in await conn.execute(
        text("SELECT alias FROM wiki_page_aliases WHERE page_id = :target"), scope)}
    moved: list[dict[str, str]] = []
    dropped: list[dict[str, str]] = []
    for row in await conn.execute(text("SELECT id, alias, source FROM wiki_page_aliases WHERE page_id = :source"), scope):
        (dropped if row.alias in target_aliases else moved).append(
            {"id": str(row.id), "alias": row.alias, "source": row.source})
    for section in sections:
        await conn.execute(text("""
            UPDATE wiki_page_sections SET page_id = :target, section_slug = :slug, position = :position,
                   updated_at = now() WHERE id = :id
        """), {**scope, "id": section["id"], "slug": section["new_slug"], "position": section["new_position"]})
    if moved:
        ids = [alias["id"] for alias in moved]
        await conn.execute(text("UPDATE wiki_page_aliases SET page_id = :target WHERE id = ANY(CAST(:ids AS uuid[]))"),
                           {**scope, "ids": ids})
        await conn.execute(text("UPDATE wiki_alias_keys SET page_id = :target WHERE alias_id = ANY(CAST(:ids AS uuid[]))"),
                           {**scope, "ids": ids})
    if dropped:
        await conn.execute(text("DELETE FROM wiki_page_aliases WHERE id = ANY(CAST(:ids AS uuid[]))"),
                           {"ids": [alias["id"] for alias in dropped]})
    await conn.execute(text("UPDATE wiki_pages SET status = 'archived', updated_at = now() WHERE id = :source"), scope)
    await _render(conn, [str(source.id), str(target.id)])
    merge_id = str(uuid.uuid4())
    record = {"sections": sections, "aliases_moved": moved, "aliases_dropped": dropped, "status": source.status,
              "source": {"type": source.type, "slug": source.slug, "title": source.title},
              "target": {"type": target.type, "slug": target.slug, "title": target.title}}
    row = (await conn.execute(text("""
        INSERT INTO wiki_page_merges (id, tenant_id, owner_id, source_page_id, target_page_id, moved)
        VALUES (:id, :tenant, :owner, :source, :target, CAST(:moved AS jsonb)) RETURNING merged_at
    """), {**scope, "id": merge_id, "tenant": tenant, "owner": owner, "moved": json.dumps(record)})).one()
    await _decision(conn, tenant, owner, source, target, True, "merged by an operator", merge_id)
    return PageMerge(id=merge_id, source=f"{source.type}/{source.slug}", target=f"{target.type}/{target.slug}",
                     sections_moved=len(sections), aliases_moved=len(moved), merged_at=row.merged_at.isoformat())


async def unmerge_page(conn: AsyncConnection, tenant: str, owner: str, source_key: tuple[str, str]) -> PageMerge:
    """Undo the standing merge of page `source_key` into another; raises MergeRefused when there is none."""
    found = (await conn.execute(text("""
        SELECT m.id, m.source_page_id, m.target_page_id, m.moved, m.merged_at FROM wiki_page_merges m
        WHERE m.tenant_id = :tenant AND m.owner_id = :owner AND m.undone_at IS NULL
          AND m.moved -> 'source' ->> 'type' = :type AND m.moved -> 'source' ->> 'slug' = :slug
        ORDER BY m.merged_at DESC LIMIT 1 FOR UPDATE
    """), {"tenant": tenant, "owner": owner, "type": source_key[0], "slug": source_key[1]})).first()
    if found is None:
        raise MergeRefused(f"{source_key[0]}/{source_key[1]} of {tenant}/{owner} is not merged into another page")
    record = found.moved
    source = await _page(conn, tenant, owner, *source_key)
    target = await _page(conn, tenant, owner, record["target"]["type"], record["target"]["slug"])
    if source is None or target is None:
        raise MergeRefused(f"the pages of the merge of {source_key[0]}/{source_key[1]} are gone (a rebuild that "
                           "ran before this merge was recorded?); nothing to restore")
    scope = {"source": source.id, "target": target.id}
    for section in record["sections"]:
        await conn.execute(text("""
            UPDATE wiki_page_sections SET page_id = :source, section_slug = :slug, position = :position,
                   updated_at = now() WHERE id = :id AND page_id = :target
        """), {**scope, "id": section["id"], "slug": section["slug"], "position": section["position"]})
    ids = [alias["id"] for alias in record["aliases_moved"]]
    if ids:
        await conn.execute(text("""
            UPDATE wiki_page_aliases SET page_id = :source WHERE id = ANY(CAST(:ids AS uuid[])) AND page_id = :target
        """), {**scope, "ids": ids})
        await conn.execute(text("UPDATE wiki_alias_keys SET page_id = :source WHERE alias_id = ANY(CAST(:ids AS uuid[]))"),
                           {**scope, "ids": ids})
    for alias in record["aliases_dropped"]:
        await conn.execute(text("""
            INSERT INTO wiki_page_aliases (id, page_id, alias, source) VALUES (:id, :source, :alias, :kind)
            ON CONFLICT DO NOTHING
        """), {**scope, "id": alias["id"], "alias": alias["alias"], "kind": alias["source"]})
    await conn.execute(text("UPDATE wiki_pages SET status = :status, updated_at = now() WHERE id = :source"),
                       {**scope, "status": record.get("status", "active")})
    await _render(conn, [str(source.id), str(target.id)])
    undone = (await conn.execute(text("UPDATE wiki_page_merges SET undone_at = now() WHERE id = :id RETURNING undone_at"),
                                 {"id": found.id})).scalar_one()
    await _decision(conn, tenant, owner, source, target, False, "unmerged by an operator", str(found.id))
    return PageMerge(id=str(found.id), source=f"{source.type}/{source.slug}", target=f"{target.type}/{target.slug}",
                     sections_moved=len(record["sections"]), aliases_moved=len(ids),
                     merged_at=found.merged_at.isoformat(), undone_at=undone.isoformat())


async def page_merges(conn: AsyncConnection, tenant: str, owner: str, page_id: str) -> list[PageMerge]:
    """The operator merges a page took part in (either side), newest first."""
    rows = await conn.execute(text("""
        SELECT id, moved, merged_at, undone_at FROM wiki_page_merges
        WHERE tenant_id = :tenant AND owner_id = :owner AND (source_page_id = :page OR target_page_id = :page)
        ORDER BY merged_at DESC
    """), {"tenant": tenant, "owner": owner, "page": page_id})
    return [PageMerge(id=str(row.id), source=f"{row.moved['source']['type']}/{row.moved['source']['slug']}",
                      target=f"{row.moved['target']['type']}/{row.moved['target']['slug']}",
                      sections_moved=len(row.moved["sections"]), aliases_moved=len(row.moved["aliases_moved"]),
                      merged_at=row.merged_at.isoformat(),
                      undone_at=row.undone_at.isoformat() if row.undone_at else None) for row in rows]


async def follow_operator_merge(conn: AsyncConnection, tenant: str, owner: str, proposal: Proposal) -> Proposal:
    """The proposal sent to the page an operator merged its (type, slug) into, its own title kept as an
    alias; the proposal itself when no merge stands."""
    row = (await conn.execute(text("""
        SELECT moved -> 'target' AS target FROM wiki_page_merges
        WHERE tenant_id = :tenant AND owner_id = :owner AND undone_at IS NULL
          AND moved -> 'source' ->> 'type' = :type AND moved -> 'source' ->> 'slug' = :slug
        ORDER BY merged_at DESC LIMIT 1
    """), {"tenant": tenant, "owner": owner, "type": proposal.type, "slug": proposal.slug})).first()
    if row is None:
        return proposal
    return replace(proposal, slug=row.target["slug"], title=row.target["title"],
                   aliases=(proposal.title, *proposal.aliases))
