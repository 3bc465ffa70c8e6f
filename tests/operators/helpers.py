"""Rows written straight into the database, for the operator tests' seeded states."""

from __future__ import annotations

import json
import uuid
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.memory import MemoryIn
from messages.compile import compile_workflow_id
from store.memories import store_memories


async def execute(engine: AsyncEngine, sql: str, **params: Any) -> None:
    async with engine.begin() as conn:
        await conn.execute(text(sql), params)


async def rows(engine: AsyncEngine, sql: str, **params: Any) -> list:
    async with engine.connect() as conn:
        return (await conn.execute(text(sql), params)).all()


async def page(engine: AsyncEngine, tenant: str, owner: str, slug: str, *, page_type: str = "entity",
               title: str | None = None, status: str = "active", body: str = "", summary: str | None = None,
               days_old: int = 0) -> uuid.UUID:
    page_id = uuid.uuid4()
    await execute(engine, """
        INSERT INTO wiki_pages (id, tenant_id, owner_id, type, slug, title, summary, body_md, status,
                                last_compiled_at, updated_at)
        VALUES (:id, :tenant, :owner, :type, :slug, :title, :summary, :body, :status,
                now() - make_interval(days => :days), now() - make_interval(days => :days))
    """, id=page_id, tenant=tenant, owner=owner, type=page_type, slug=slug, title=title or slug.title(),
        summary=summary, body=body, status=status, days=days_old)
    return page_id


async def alias(engine: AsyncEngine, page_id: uuid.UUID, name: str) -> None:
    await execute(engine, "INSERT INTO wiki_page_aliases (id, page_id, alias) VALUES (:id, :page, :alias)",
                  id=uuid.uuid4(), page=page_id, alias=name)


async def link(engine: AsyncEngine, from_page: uuid.UUID, to_page: uuid.UUID, kind: str = "reference",
               context: str | None = None) -> None:
    await execute(engine, """
        INSERT INTO wiki_page_links (id, from_page_id, to_page_id, kind, context)
        VALUES (:id, :from_page, :to_page, :kind, :context)
    """, id=uuid.uuid4(), from_page=from_page, to_page=to_page, kind=kind, context=context)


async def section(engine: AsyncEngine, page_id: uuid.UUID, slug: str, body: str, position: int,
                  sources: list[str] = ()) -> uuid.UUID:
    section_id = uuid.uuid4()
    await execute(engine, """
        INSERT INTO wiki_page_sections (id, page_id, section_slug, heading, body_md, position)
        VALUES (:id, :page, :slug, :heading, :body, :position)
    """, id=section_id, page=page_id, slug=slug, heading=slug.replace("-", " ").title(), body=body,
        position=position)
    for ref in sources:
        await execute(engine, """
            INSERT INTO wiki_section_sources (id, section_id, source_kind, source_ref)
            VALUES (:id, :section, 'memory_unit', :ref)
        """, id=uuid.uuid4(), section=section_id, ref=ref)
    return section_id


async def mention(engine: AsyncEngine, tenant: str, owner: str, name: str, count: int, *, days_ago: int = 0,
                  status: str = "open", contexts: list[dict] = (), suggested_type: str | None = "entity") -> uuid.UUID:
    mention_id = uuid.uuid4()
    await execute(engine, """
        INSERT INTO wiki_unresolved_mentions (id, tenant_id, owner_id, alias, alias_normalized, mention_count,
            first_seen_at, last_seen_at, sample_contexts, suggested_type, status)
        VALUES (:id, :tenant, :owner, :alias, lower(:alias), :count, now() - make_interval(days => :days),
                now() - make_interval(days => :days), CAST(:contexts AS jsonb), :type, :status)
    """, id=mention_id, tenant=tenant, owner=owner, alias=name, count=count, days=days_ago,
        contexts=json.dumps(list(contexts)), type=suggested_type, status=status)
    return mention_id


async def ledger_row(engine: AsyncEngine, *, status: str, days_old: int, tenant: str = "t", owner: str = "o",
                     trigger: str = "admin") -> str:
    run_id = str(uuid.uuid4())
    await execute(engine, """
        INSERT INTO wiki_compile_jobs (id, kind, tenant_id, owner_id, workflow_id, run_id, trigger, status,
                                       started_at, created_at)
        VALUES (:id, 'compile', :tenant, :owner, :workflow_id, :run_id, :trigger, :status,
                now() - make_interval(days => :days), now() - make_interval(days => :days))
    """, id=uuid.uuid4(), tenant=tenant, owner=owner, workflow_id=compile_workflow_id(tenant, owner), run_id=run_id,
        trigger=trigger, status=status, days=days_old)
    return run_id


async def memories(engine: AsyncEngine, tenant: str, owner: str, contents: list[str]) -> list[str]:
    """Retain plain memories (no metadata hints: the scripted planner makes nothing of them)."""
    result = await store_memories(engine, tenant, owner, [MemoryIn(content=c) for c in contents])
    return [str(m) for m in result.inserted]


async def move_cursor_past_every_memory(engine: AsyncEngine, tenant: str, owner: str) -> None:
    """As if every memory of the scope had been compiled: the next compile has nothing new to read."""
    await execute(engine, """
        INSERT INTO wiki_compile_cursors (tenant_id, owner_id, last_record_updated_at, last_record_id)
        SELECT tenant_id, owner_id, date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', id
        FROM memory_units WHERE tenant_id = :tenant AND owner_id = :owner
        ORDER BY date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC') DESC, id DESC LIMIT 1
        ON CONFLICT (tenant_id, owner_id) DO UPDATE
        SET last_record_updated_at = excluded.last_record_updated_at, last_record_id = excluded.last_record_id
    """, tenant=tenant, owner=owner)
