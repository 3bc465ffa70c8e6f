"""Retain: store a batch of memories, then wake the scope's CompileWorkflow.

The signal is sent only after the transaction commits, so the compile it wakes always sees the
memories; and only when something changed, so re-sending a file costs no compile. If the signal
fails after the commit nothing is lost: the memories sit after the scope's cursor and the next
compile of the scope (any trigger) reads them.

`retain_and_signal` is that seam (`wiki retain` calls it); `retain_for_agent` is the path of the MCP
server and the HTTP API, which validates the memories an agent sent and reaches Temporal before
storing anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError

from app.reads import BadInput, ReadScope
from domain.memory import MemoryIn
from messages.compile import compile_workflow_id
from runtime.settings import Settings
from runtime.temporal_client import SearchAttributeMissing, signal_compile
from store.forget import cited_memories, enqueue, memory_key
from store.memories import RetainResult, store_memories

MAX_RETAIN_MEMORIES = 100

TemporalConnector = Callable[[], Awaitable[Client]]


class CompileNotSignalled(RuntimeError):
    """The memories were stored but the compile could not be woken; the message says what to run."""


class CompileUnavailable(RuntimeError):
    """Temporal cannot be reached, so a retain is refused before anything is stored."""


@dataclass
class RetainOutcome:
    stored: RetainResult
    # The woken compile; None when nothing changed or no client was given (--no-compile).
    compile: WorkflowHandle | None = None


class RetainSummary(BaseModel):
    inserted: int
    updated: int
    unchanged: int
    memory_ids: list[str]
    compile_workflow_id: str | None  # the compile woken, when anything changed


async def queue_edits(engine: AsyncEngine, tenant: str, owner: str, updated: list) -> bool:
    """Memories retained again with new text that some claim cites: their lines are re-derived from
    the new text by the scope's compile (an edit request); True when one was queued."""
    keys = [k for k in (memory_key(m) for m in updated) if k is not None]
    async with engine.begin() as conn:
        cited = await cited_memories(conn, tenant, owner, keys)
        if cited:
            await enqueue(conn, tenant, owner, "edit", cited)
    return bool(cited)


async def retain_and_signal(
    engine: AsyncEngine,
    tenant: str,
    owner: str,
    memories: list[MemoryIn],
    *,
    client: Client | None,
    settings: Settings | None = None,
) -> RetainOutcome:
    stored = await store_memories(engine, tenant, owner, memories)
    # A memory retained again with new text: the lines citing it are re-derived from the new text.
    edited = bool(stored.updated) and await queue_edits(engine, tenant, owner, stored.updated)
    if client is None or stored.changed == 0:
        return RetainOutcome(stored)
    try:
        handle = await signal_compile(
            client, tenant, owner, trigger="memory_retain", memory_count=stored.changed, settings=settings,
            forget=edited,
        )
    except (RPCError, SearchAttributeMissing) as error:
        raise CompileNotSignalled(
            f"stored {stored.changed} memories but could not wake the compile ({error}); "
            f"run `wiki compile --tenant {tenant} --owner {owner}`"
        ) from error
    return RetainOutcome(stored, handle)


NAMES_SHOWN = 3


def plain_memories_note(memories: list[MemoryIn], llm: str) -> str | None:
    """One line on the memories whose metadata lists no entities, and what compiling them will do;
    None when every memory lists its own."""
    from planners.text_entities import extract_entities, names_entities  # only when there is something to say

    plain = [memory for memory in memories if not names_entities(memory.metadata)]
    if not plain:
        return None
    count = f"{len(plain)} of {len(memories)} memories list no metadata.entities"
    if llm != "scripted":
        return f"{count}: the model reads the people, places and things they name from their text"
    names = list(dict.fromkeys(entity["name"] for memory in plain for entity in extract_entities(memory.content)))
    if not names:
        return (f"{count} and name nothing the offline planner can read (it reads capitalised names, "
                "such as Lena or Franklin Barbecue): no page will cite them")
    shown = ", ".join(names[:NAMES_SHOWN]) + (", …" if len(names) > NAMES_SHOWN else "")
    return (f"{count}: the offline planner read {len(names)} name(s) from their text ({shown}); a name "
            "seen in only one memory of a compile waits as an open mention (`wiki mention list`) until it "
            "is seen often enough for a page")


def parse_memories(raw: list[object]) -> list[MemoryIn]:
    """Memories as JSON objects, every one validated; the first problems are named by index."""
    if not raw:
        raise BadInput("memories must not be empty")
    if len(raw) > MAX_RETAIN_MEMORIES:
        raise BadInput(f"at most {MAX_RETAIN_MEMORIES} memories per call (got {len(raw)}); send several calls")
    memories, problems = [], []
    for index, item in enumerate(raw):
        try:
            memories.append(item if isinstance(item, MemoryIn) else MemoryIn.model_validate(item))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "memory"
            problems.append(f"memories[{index}].{where}: {first['msg']}")
    if problems:
        raise BadInput("; ".join(problems[:3]) + ("; …" if len(problems) > 3 else "") + "; nothing was stored")
    return memories


async def retain_for_agent(engine: AsyncEngine, scope: ReadScope, memories: list[MemoryIn],
                           connect: TemporalConnector, settings: Settings) -> RetainSummary:
    """The validated retain path: store the batch in one transaction, then wake the scope's compile.

    Temporal is reached first, so a retain it would not compile stores nothing.
    """
    memories = parse_memories(list(memories))
    try:
        client = await connect()
    except (RuntimeError, OSError) as error:
        raise CompileUnavailable(f"cannot reach Temporal to compile ({error}); nothing was stored") from None
    outcome = await retain_and_signal(engine, scope.tenant, scope.owner, memories, client=client, settings=settings)
    stored = outcome.stored
    return RetainSummary(
        inserted=len(stored.inserted), updated=len(stored.updated), unchanged=len(stored.unchanged),
        memory_ids=[str(m) for m in [*stored.inserted, *stored.updated, *stored.unchanged]],
        compile_workflow_id=compile_workflow_id(scope.tenant, scope.owner) if outcome.compile else None,
    )
