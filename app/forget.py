"""Forget memories, or preview what forgetting them would touch.

`wiki memory forget`, the HTTP API (`DELETE /v1/memories/{id}`, `POST /v1/memories/forget`) and the
MCP tool `forget` call these. A forget is queued in Postgres and the scope's compile is woken with
`forget` set: the compile serves it between batches (workflows/compile_forget.py), so it is durable
and never races a batch. An id of another scope is exactly an absent id. (A retain that changes a
cited memory queues an edit the same way: app/retain.py.)
"""

from __future__ import annotations

import asyncio
import time

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from app.reads import BadInput, NotFound, ReadScope
from app.retain import CompileUnavailable, TemporalConnector
from domain.forget_report import ForgetReport
from messages.compile import compile_workflow_id
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.forget import MAX_FORGET_IDS, enqueue, existing_memories, memory_key, receipt_of_request
from store.forget_report import blast_radius

# The preview of a forget is its blast radius: the same report its receipt will be (without names).
BlastRadius = ForgetReport

__all__ = ["BlastRadius", "ForgetOutcome", "ForgetQueued", "ForgetReceipt", "ReceiptTimeout", "forget_for_agent",
           "forget_memories", "memory_keys", "preview_forget", "wait_for_receipt"]
RECEIPT_POLL_SECONDS = 0.25


class ForgetQueued(BaseModel):
    """A forget the scope's compile will serve: the memories it found, those it did not."""

    request_id: str
    memory_ids: list[str]
    not_found: list[str] = Field(default_factory=list)
    compile_workflow_id: str


class ForgetOutcome(BaseModel):
    """One answer for both modes (an MCP tool has one output shape): the preview, or the queued forget."""

    blast_radius: BlastRadius | None = None
    queued: ForgetQueued | None = None


def memory_keys(raw: list[str] | tuple[str, ...]) -> list[str]:
    """Memory ids as the store keys them, each once; a malformed one is bad input, named."""
    if not raw:
        raise BadInput("name at least one memory id")
    if len(raw) > MAX_FORGET_IDS:
        raise BadInput(f"at most {MAX_FORGET_IDS} memory ids at once (got {len(raw)})")
    keys = []
    for value in raw:
        key = memory_key(value) if isinstance(value, str) else None
        if key is None:
            raise BadInput(f"not a memory id: {str(value)[:80]!r}")
        keys.append(key)
    return list(dict.fromkeys(keys))


async def preview_forget(engine: AsyncEngine, scope: ReadScope, raw_ids: list[str]) -> BlastRadius:
    """The blast radius of forgetting the memories, changing nothing (an id of another scope is not found)."""
    keys = memory_keys(raw_ids)
    async with engine.connect() as conn:
        radius = await blast_radius(conn, scope.tenant, scope.owner, keys)
    if not radius.memory_ids:
        raise NotFound(_none_found(scope, keys))
    return radius


async def forget_memories(engine: AsyncEngine, scope: ReadScope, raw_ids: list[str], client: Client,
                          settings: Settings) -> ForgetQueued:
    """Queue the forget of the scope's memories among `raw_ids` and wake the scope's compile; NotFound
    when none of them is a memory of the scope (nothing is queued)."""
    keys = memory_keys(raw_ids)
    async with engine.begin() as conn:
        found = await existing_memories(conn, scope.tenant, scope.owner, keys)
        if not found:
            raise NotFound(_none_found(scope, keys))
        request_id = await enqueue(conn, scope.tenant, scope.owner, "forget", found)
    # Stored first: a wake-up that fails leaves the request for the next one (`wiki resume`).
    await signal_compile(client, scope.tenant, scope.owner, trigger="forget", settings=settings, forget=True)
    return ForgetQueued(request_id=str(request_id), memory_ids=found, not_found=[k for k in keys if k not in found],
                        compile_workflow_id=compile_workflow_id(scope.tenant, scope.owner))


async def forget_for_agent(engine: AsyncEngine, scope: ReadScope, raw_ids: list[str], connect: TemporalConnector,
                           settings: Settings, *, dry_run: bool = False) -> ForgetQueued | BlastRadius:
    """The agents' forget (HTTP and MCP): the preview, or the forget queued once Temporal is reached
    (a forget it could not serve queues nothing)."""
    if dry_run:
        return await preview_forget(engine, scope, raw_ids)
    memory_keys(raw_ids)  # bad ids are refused before Temporal is reached
    try:
        client = await connect()
    except (RuntimeError, OSError) as error:
        raise CompileUnavailable(f"cannot reach Temporal to forget ({error}); nothing was queued") from None
    return await forget_memories(engine, scope, raw_ids, client, settings)


def _none_found(scope: ReadScope, keys: list[str]) -> str:
    shown = ", ".join(keys[:3]) + (", …" if len(keys) > 3 else "")
    return f"no memory {shown} in {scope.tenant}/{scope.owner}"


class ForgetReceipt(BaseModel):
    """A served forget: its receipt (the report, ids and counts only) and what the pass did in all."""

    request_id: str
    report: ForgetReport
    memories_forgotten: int = 0
    memories_edited: int = 0


class ReceiptTimeout(Exception):
    """No receipt within the time given (the forget stays queued and is served all the same)."""


async def wait_for_receipt(engine: AsyncEngine, scope: ReadScope, request_id: str,
                           timeout_seconds: float) -> ForgetReceipt:
    """The receipt of a queued forget once its pass has run to the end (its provider step included)."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        async with engine.connect() as conn:
            metrics = await receipt_of_request(conn, scope.tenant, scope.owner, request_id)
        if metrics is not None and metrics.get("provider_erasure") != "to do":
            return ForgetReceipt(request_id=request_id, report=ForgetReport.model_validate(metrics),
                                 memories_forgotten=int(metrics.get("memories_forgotten", 0)),
                                 memories_edited=int(metrics.get("memories_edited", 0)))
        if time.monotonic() >= deadline:
            state = ("served, but its Message Batches are not deleted at the provider yet" if metrics is not None
                     else "still queued for the compile of the scope, which serves it between batches")
            raise ReceiptTimeout(f"no receipt within {timeout_seconds:g} s for forget request {request_id}: it is "
                                 f"{state}; `wiki jobs --tenant {scope.tenant} --owner {scope.owner}` shows the "
                                 "receipt once it is done")
        await asyncio.sleep(RECEIPT_POLL_SECONDS)
