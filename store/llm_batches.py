"""Requests sent in Message Batches (leaf plans, and the other model calls of a bulk compile): what
each one asked, until its result is collected.

A row is written before its batch is created (so a worker that dies after creating it leaves a row
naming the request) and gets the batch id once the provider returns it. Every read is scoped by
(tenant, owner): a request of another scope is not found.

Every batch sent is recorded too (`wiki_llm_batches`, with the scopes that had a request in it), until
it is deleted at the provider: a forget deletes every batch of its scope the provider still holds
(activities/batch_erasure.py). A request whose batch another scope's forget deleted before it was
read keeps its result here (`saved_outcome`).
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
    # The result saved for this request when another scope's forget deleted its batch first
    # (planners.claude_client.BatchOutcome as JSON).
    saved_outcome: str | None = None


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
        SELECT custom_id, batch_id, run_id, plan_id, model_id, memory_ids, call::text AS call_json,
               saved_outcome::text AS saved_outcome
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


# ------------------------------------------------------------------------ batches at the provider


async def record_batch(conn: AsyncConnection, batch_id: str, model_id: str, custom_ids: list[str],
                       provider: str = "anthropic") -> None:
    """A batch the provider created, with the scopes whose requests (`custom_ids`) it carries."""
    await conn.execute(text("""
        INSERT INTO wiki_llm_batches (batch_id, provider, model_id) VALUES (:batch, :provider, :model)
        ON CONFLICT (batch_id) DO NOTHING
    """), {"batch": batch_id, "provider": provider, "model": model_id})
    pairs = await scopes_of(conn, custom_ids)
    await conn.execute(text("""
        INSERT INTO wiki_llm_batch_scopes (batch_id, tenant_id, owner_id)
        SELECT :batch, t, o FROM unnest(CAST(:tenants AS text[]), CAST(:owners AS text[])) AS s(t, o)
        ON CONFLICT DO NOTHING
    """), {"batch": batch_id, "tenants": [t for t, _ in pairs], "owners": [o for _, o in pairs]})


async def scopes_of(conn: AsyncConnection, custom_ids: list[str]) -> list[tuple[str, str]]:
    rows = await conn.execute(text("""
        SELECT DISTINCT tenant_id, owner_id FROM wiki_llm_batch_requests WHERE custom_id = ANY(:ids)
    """), {"ids": custom_ids})
    return [(row.tenant_id, row.owner_id) for row in rows]


class HeldBatch(BaseModel):
    """A batch the provider may still hold (not deleted there yet) that carried a request of a scope."""

    batch_id: str
    provider: str
    requests: int  # this scope's requests of it still stored (unread, or read and kept)


async def held_batches(conn: AsyncConnection, tenant: str, owner: str) -> list[HeldBatch]:
    """Every batch that carried a request of the scope and is not deleted at the provider, oldest first."""
    rows = await conn.execute(text("""
        SELECT b.batch_id, b.provider,
               (SELECT count(*) FROM wiki_llm_batch_requests r WHERE r.batch_id = b.batch_id
                  AND r.tenant_id = :tenant AND r.owner_id = :owner) AS requests
        FROM wiki_llm_batches b JOIN wiki_llm_batch_scopes s ON s.batch_id = b.batch_id
        WHERE s.tenant_id = :tenant AND s.owner_id = :owner AND b.deleted_at IS NULL
        ORDER BY b.created_at, b.batch_id
    """), {"tenant": tenant, "owner": owner})
    return [HeldBatch(batch_id=row.batch_id, provider=row.provider, requests=row.requests) for row in rows]


async def discard_requests(conn: AsyncConnection, tenant: str, owner: str) -> int:
    """Drop every stored request of the scope: a forget serves where no request of its compile is
    still to be read, so none of them will be (their answers are discarded, asked again if needed)."""
    return (await conn.execute(text("""
        DELETE FROM wiki_llm_batch_requests WHERE tenant_id = :tenant AND owner_id = :owner
    """), {"tenant": tenant, "owner": owner})).rowcount


async def mark_cancel_requested(conn: AsyncConnection, batch_id: str) -> None:
    await conn.execute(text("""
        UPDATE wiki_llm_batches SET cancel_requested_at = coalesce(cancel_requested_at, now()) WHERE batch_id = :b
    """), {"b": batch_id})


async def unread_elsewhere(conn: AsyncConnection, batch_id: str, tenant: str, owner: str) -> list[str]:
    """Custom ids of other scopes' requests in the batch that were not read and have no saved result."""
    rows = await conn.execute(text("""
        SELECT custom_id FROM wiki_llm_batch_requests WHERE batch_id = :b AND collected_at IS NULL
          AND saved_outcome IS NULL AND NOT (tenant_id = :tenant AND owner_id = :owner)
    """), {"b": batch_id, "tenant": tenant, "owner": owner})
    return [row.custom_id for row in rows]


async def save_outcomes(conn: AsyncConnection, outcomes: dict[str, str]) -> None:
    """Keep results (custom id -> outcome JSON) for their requests before their batch is deleted."""
    if outcomes:
        await conn.execute(text("""
            UPDATE wiki_llm_batch_requests AS r SET saved_outcome = CAST(o.outcome AS jsonb)
            FROM unnest(CAST(:ids AS text[]), CAST(:outcomes AS text[])) AS o(id, outcome) WHERE r.custom_id = o.id
        """), {"ids": list(outcomes), "outcomes": list(outcomes.values())})


async def mark_deleted(conn: AsyncConnection, batch_id: str) -> None:
    await conn.execute(text("""
        UPDATE wiki_llm_batches SET deleted_at = coalesce(deleted_at, now()) WHERE batch_id = :b
    """), {"b": batch_id})


async def batch_deleted(conn: AsyncConnection, batch_id: str) -> bool:
    """Whether a forget deleted the batch at the provider (its results are no longer there)."""
    return bool((await conn.execute(text("""
        SELECT deleted_at IS NOT NULL FROM wiki_llm_batches WHERE batch_id = :b
    """), {"b": batch_id})).scalar_one_or_none())


async def deleted_batches(conn: AsyncConnection, batch_ids: list[str]) -> set[str]:
    rows = await conn.execute(text("""
        SELECT batch_id FROM wiki_llm_batches WHERE batch_id = ANY(:ids) AND deleted_at IS NOT NULL
    """), {"ids": batch_ids})
    return {row.batch_id for row in rows}
