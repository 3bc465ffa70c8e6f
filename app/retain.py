"""The seam between retain and compile: store a batch, then wake the scope's CompileWorkflow.

The signal is sent only after the transaction commits, so the compile it wakes always sees the
memories; and only when something changed, so re-sending a file costs no compile. If the signal
fails after the commit nothing is lost: the memories sit after the scope's cursor and the next
compile of the scope (any trigger) reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError

from domain.memory import MemoryIn
from runtime.settings import Settings
from runtime.temporal_client import SearchAttributeMissing, signal_compile
from store.memories import RetainResult, retain


class CompileNotSignalled(RuntimeError):
    """The memories were stored but the compile could not be woken; the message says what to run."""


@dataclass
class RetainOutcome:
    stored: RetainResult
    # The woken compile; None when nothing changed or no client was given (--no-compile).
    compile: WorkflowHandle | None = None


async def retain_and_signal(
    engine: AsyncEngine,
    tenant: str,
    owner: str,
    memories: list[MemoryIn],
    *,
    client: Client | None,
    settings: Settings | None = None,
) -> RetainOutcome:
    stored = await retain(engine, tenant, owner, memories)
    if client is None or stored.changed == 0:
        return RetainOutcome(stored)
    try:
        handle = await signal_compile(
            client, tenant, owner, trigger="memory_retain", memory_count=stored.changed, settings=settings
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
