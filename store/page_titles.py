"""A page's title follows the evidence: the best-attested spelling of its name among the memories it cites.

A page is created under the spelling its first batch wrote most often, but later memories may spell
it otherwise more often ("Franklin Barbecue" outnumbering the "Franklin Barbecue, Charlotte" of the
first sightings), and a merge brings in another page's spellings. So after every write, each page
the batch touched takes `domain.aliases.attested_title` over the names its cited memories' metadata
gives, as the scripted planner reads them: the entities (with their type), and for a topic the
place's city and the journal's title. Only names of the page's type that normalise like one of the
page's names (its aliases) count, each memory once per spelling; ties go to the spelling seen first
(its earliest memory, then the spelling itself).

The title is a function of the page's citations and aliases only, so a rebuild (the same batches)
writes the same titles, and compiling again with nothing new changes none. Only the title moves: the
slug and the id stay, so every link and route keeps working. A page whose memories carry no such
metadata (free text for Claude to read) keeps the title its planner gave it.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.aliases import attested_title, normalize_alias
from domain.guards import strip_wikilinks
from domain.markup import safe_title

_UUID_TEXT = r"'^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$'"


def _spelling(name: str) -> str:
    """A name as a title may show it: no wikilinks, single spaces, no markup that could run."""
    return safe_title(" ".join(strip_wikilinks(name).split()))


async def retitle_by_attestation(conn: AsyncConnection, tenant: str, owner: str, page_ids: list[str]) -> int:
    """Give each active page of `page_ids` its best-attested title; returns how many titles changed."""
    if not page_ids:
        return 0
    pages = {str(row.id): row for row in await conn.execute(text("""
        SELECT p.id, p.title, array_agg(a.alias ORDER BY a.alias) FILTER (WHERE a.alias IS NOT NULL) AS aliases
        FROM wiki_pages p LEFT JOIN wiki_page_aliases a ON a.page_id = p.id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
          AND p.id = ANY(CAST(:ids AS uuid[]))
        GROUP BY p.id, p.title
    """), {"tenant": tenant, "owner": owner, "ids": page_ids})}
    if not pages:
        return 0
    # Every name of the page's type the memories the page cites give, with how many memories write it
    # and when it was first written. Memories are reached by primary key, in scope; a ref that is no
    # UUID finds nothing.
    rows = await conn.execute(text(f"""
        WITH cited AS (
            SELECT DISTINCT s.page_id, p.type,
                   CASE WHEN src.source_ref ~* {_UUID_TEXT} THEN CAST(src.source_ref AS uuid) END AS memory_id
            FROM wiki_page_sections s
            JOIN wiki_pages p ON p.id = s.page_id
            JOIN wiki_section_sources src ON src.section_id = s.id AND src.source_kind = 'memory_unit'
            WHERE s.page_id = ANY(CAST(:ids AS uuid[]))
        )
        SELECT c.page_id, named.name, count(DISTINCT m.id) AS memories, min(m.created_at) AS first_seen
        FROM cited c
        JOIN memory_units m ON m.tenant_id = :tenant AND m.owner_id = :owner AND m.id = c.memory_id
        CROSS JOIN LATERAL (
            SELECT entity.value ->> 'name' AS name,
                   CASE WHEN entity.value ->> 'type' IN ('entity', 'topic', 'decision')
                        THEN entity.value ->> 'type' ELSE 'entity' END AS type
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(m.metadata -> 'entities') = 'array'
                                           THEN m.metadata -> 'entities' ELSE '[]'::jsonb END) AS entity(value)
            WHERE jsonb_typeof(entity.value) = 'object' AND jsonb_typeof(entity.value -> 'name') = 'string'
            UNION ALL
            SELECT m.metadata #>> '{{place,city}}', 'topic'
            WHERE jsonb_typeof(m.metadata #> '{{place,city}}') = 'string'
            UNION ALL
            SELECT m.metadata #>> '{{journal,title}}', 'topic'
            WHERE jsonb_typeof(m.metadata #> '{{journal,title}}') = 'string'
        ) AS named
        WHERE named.type = c.type
        GROUP BY c.page_id, named.name
        ORDER BY c.page_id, first_seen, named.name COLLATE "C"
    """), {"tenant": tenant, "owner": owner, "ids": list(pages)})
    attested: dict[str, dict[str, int]] = {}
    for row in rows:
        page = pages[str(row.page_id)]
        names = {*(page.aliases or []), normalize_alias(page.title)}
        spelling = _spelling(row.name)
        if spelling and normalize_alias(spelling) in names:
            counts = attested.setdefault(str(row.page_id), {})  # insertion order: first seen first
            counts[spelling] = counts.get(spelling, 0) + row.memories
    changes = {page_id: title for page_id, counts in attested.items()
               if (title := attested_title(pages[page_id].title, list(counts.items()))) != pages[page_id].title}
    if changes:
        await conn.execute(text("""
            UPDATE wiki_pages AS p SET title = retitled.title, updated_at = now()
            FROM unnest(CAST(:ids AS uuid[]), CAST(:titles AS text[])) AS retitled(id, title)
            WHERE p.id = retitled.id AND p.tenant_id = :tenant AND p.owner_id = :owner
        """), {"tenant": tenant, "owner": owner, "ids": list(changes), "titles": list(changes.values())})
    return len(changes)
