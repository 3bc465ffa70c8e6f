"""Requests sent in Message Batches (leaf plans, and the other model calls of a bulk compile): what
each one asked, until its result is collected.

A row is written before its batch is created (so a worker that dies after creating it leaves a row
naming the request) and gets the batch id once the provider returns it. Every read is scoped by
(tenant, owner): a request of another scope is not found.
"""

from __future__ import annotations

from uuid import UUID

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from messages.compile import Scope


class BatchRequestRow(BaseModel):
    custom_id: str
    batch_id: str | None
    run_id: str
    plan_id: UUID
    model_id: str
    memory_ids: list[UUID]
    # The request as JSON: a leaf plan's (planners.claude_planner.PlanCall) or another call's
    # (activities.batches.DeferredCall).
    call_json: str


async def store_request(conn: AsyncConnection, scope: Scope, row: BatchRequestRow) -> None:
    """Store (or, for a retried submit, replace) one request; its batch id is set by `set_batch`."""
    await conn.execute(text("""
        INSERT INTO wiki_llm_batch_requests (custom_id, batch_id, tenant_id, owner_id, run_id, plan_id, model_id,
                                             memory_ids, call)
        VALUES (:custom_id, NULL, :tenant, :owner, :run_id, :plan_id, :model_id, :memory_ids, CAST(:call AS jsonb))
        ON CONFLICT (custom_id) DO UPDATE SET call = excluded.call, batch_id = NULL, model_id = excluded.model_id
    """), {"custom_id": row.custom_id, "tenant": scope.tenant, "owner": scope.owner, "run_id": row.run_id,
           "plan_id": row.plan_id, "model_id": row.model_id, "memory_ids": list(row.memory_ids),
           "call": row.call_json})


async def set_batch(conn: AsyncConnection, custom_ids: list[str], batch_id: str) -> None:
    await conn.execute(text("UPDATE wiki_llm_batch_requests SET batch_id = :batch WHERE custom_id = ANY(:ids)"),
                       {"batch": batch_id, "ids": custom_ids})


async def load_request(conn: AsyncConnection, scope: Scope, custom_id: str) -> BatchRequestRow | None:
    row = (await conn.execute(text("""
        SELECT custom_id, batch_id, run_id, plan_id, model_id, memory_ids, call::text AS call_json
        FROM wiki_llm_batch_requests WHERE custom_id = :id AND tenant_id = :tenant AND owner_id = :owner
    """), {"id": custom_id, "tenant": scope.tenant, "owner": scope.owner})).mappings().first()
    return BatchRequestRow.model_validate(dict(row)) if row else None


async def request_batch(conn: AsyncConnection, scope: Scope, custom_id: str) -> str | None:
    """The batch a stored request was sent in (None: not sent yet, or no such request)."""
    return (await conn.execute(text("""
        SELECT batch_id FROM wiki_llm_batch_requests WHERE custom_id = :id AND tenant_id = :tenant AND owner_id = :owner
    """), {"id": custom_id, "tenant": scope.tenant, "owner": scope.owner})).scalar_one_or_none()


async def mark_collected(conn: AsyncConnection, custom_id: str) -> None:
    await conn.execute(text("UPDATE wiki_llm_batch_requests SET collected_at = now() WHERE custom_id = :id"),
                       {"id": custom_id})


async def delete_request(conn: AsyncConnection, scope: Scope, custom_id: str) -> None:
    """Drop a request once its reply is read: its prompt holds memory text no one needs any more."""
    await conn.execute(text("""
        DELETE FROM wiki_llm_batch_requests WHERE custom_id = :id AND tenant_id = :tenant AND owner_id = :owner
    """), {"id": custom_id, "tenant": scope.tenant, "owner": scope.owner})


async def take_submitter_lock(conn: AsyncConnection, model_id: str) -> bool:
    """Whether this transaction is the one that submits `model_id`'s pending requests now (a
    transaction-scoped advisory lock: released at commit or rollback, or when the connection dies)."""
    return bool((await conn.execute(text("SELECT pg_try_advisory_xact_lock(hashtext('wiki-llm-batch:' || :m))"),
                                    {"m": model_id})).scalar_one())


async def unsubmitted_requests(conn: AsyncConnection, model_id: str, limit: int) -> list[BatchRequestRow]:
    """Requests of every scope waiting for a batch on `model_id`, oldest first: one batch carries them
    all (results are matched back by custom_id, and each scope collects only its own)."""
    rows = (await conn.execute(text("""
        SELECT custom_id, batch_id, run_id, plan_id, model_id, memory_ids, call::text AS call_json
        FROM wiki_llm_batch_requests WHERE batch_id IS NULL AND model_id = :m ORDER BY created_at LIMIT :limit
    """), {"m": model_id, "limit": limit})).mappings().all()
    return [BatchRequestRow.model_validate(dict(row)) for row in rows]
