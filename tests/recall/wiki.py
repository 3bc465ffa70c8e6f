"""A small wiki written straight into the database for the recall tests: pages, sections, claims
with their citations and seen dates, memories, aliases and links, each built for one rule."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.claim_text import claim_key
from domain.claims import confidence
from domain.memory import MemoryIn
from store.memories import store_memories
from tests.operators import helpers as db

TENANT, OWNER = "acme", "agent"


def day(text_date: str) -> datetime:
    return datetime.fromisoformat(text_date).replace(tzinfo=UTC)


async def remember(engine: AsyncEngine, content: str, when: str | None = None, tenant: str = TENANT,
                   owner: str = OWNER) -> str:
    result = await store_memories(engine, tenant, owner, [MemoryIn(content=content, occurred_at=when and day(when))])
    return str((result.inserted or result.updated)[0])


async def entity(engine: AsyncEngine, title: str, *aliases: str, summary: str | None = None,
                 tenant: str = TENANT, owner: str = OWNER) -> uuid.UUID:
    slug = title.lower().replace(" ", "-")
    page_id = await db.page(engine, tenant, owner, slug, title=title, summary=summary)
    for name in {title.lower(), *aliases}:
        await db.alias(engine, page_id, name)
    return page_id


async def claim(engine: AsyncEngine, page_id: uuid.UUID, line: str, sources: list[str], *, section: str = "facts",
                kind: str = "fact", first: str | None = None, last: str | None = None) -> str:
    """One claim on the page's section (made when missing), citing `sources`."""
    async with engine.begin() as conn:
        section_id = (await conn.execute(text("""
            INSERT INTO wiki_page_sections (id, page_id, section_slug, heading, body_md, position)
            VALUES (:id, :page, :slug, :heading, '', 1)
            ON CONFLICT (page_id, section_slug) DO UPDATE SET heading = excluded.heading RETURNING id
        """), {"id": uuid.uuid4(), "page": page_id, "slug": section, "heading": section.title()})).scalar_one()
        position = (await conn.execute(text("SELECT count(*) FROM wiki_section_claims WHERE section_id = :s"),
                                       {"s": section_id})).scalar_one() + 1
        claim_id = str(uuid.uuid4())
        await conn.execute(text("""
            INSERT INTO wiki_section_claims (id, section_id, position, text, text_key, kind, status, confidence,
                                             corroboration, first_seen_at, last_seen_at)
            VALUES (:id, :section, :position, :text, :key, :kind, 'verified', :confidence, :n, :first, :last)
        """), {"id": claim_id, "section": section_id, "position": position, "text": line, "key": claim_key(line),
               "kind": kind, "confidence": confidence(len(sources)), "n": len(sources),
               "first": first and day(first), "last": (last or first) and day(last or first)})
        for ref in sources:
            await conn.execute(text("""
                INSERT INTO wiki_claim_sources (claim_id, tenant_id, owner_id, memory_id)
                SELECT :claim, p.tenant_id, p.owner_id, :ref FROM wiki_pages p WHERE p.id = :page
            """), {"claim": claim_id, "ref": ref, "page": page_id})
    return claim_id


async def fact(engine: AsyncEngine, page_id: uuid.UUID, line: str, when: str = "2024-03-01", **options) -> str:
    """A claim citing one memory of the same words, seen on `when`."""
    memory = await remember(engine, line, when)
    await db.move_cursor_past_every_memory(engine, TENANT, OWNER)  # compiled: the claim stands for it
    return await claim(engine, page_id, line, [memory], first=when, **options)
