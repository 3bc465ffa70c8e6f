"""Lines the compiler derives from a section's cited memories, so that the model never writes them.

A plan's output tokens are its cost and its wall time. Some lines of a section say nothing but what
its citations already hold: how many memories it cites and the days they span, the days of the visits
they record, the address their place has. In the compact reply contract (planners/compact_plan.py)
the model writes such a line as its name after "=", and the compiler writes the line from the
section's cited memories (as the prompt showed them):

    =count    - 3 new memories.                    (how many memories the section cites)
    =span     - 3 memories, 2026-03-01 to 2026-03-09.   (how many, and the days they span)
    =visits   - Visited 3 times, 2026-03-01 to 2026-03-09.   (and, over several months, a line by
              - Latest: 2026-03-09, 2026-03-04, 2026-03-01.    month; then the latest days)
    =visited  - Visited on 2026-03-09.             (one line per day, newest first)
              - Visited on 2026-03-01.
    =address  Address: 801 S Lamar Blvd, Austin, TX 78704, USA.   (the one address they give)

Each is a pure function of the cited memories' dates or metadata, in a format of
domain/line_formats.py, so the gate recounts it from them (domain/claim_checks.py `derived_holds`):
a derived line never goes to the claim judge. A derivation with nothing to derive from (no address among the memories, or two) gives
no line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from uuid import NAMESPACE_URL, uuid5

from domain.context import MemoryRecord
from domain.line_formats import address_line, count_line, span_line, visited_on_line
from planners.memory_text import as_utc, clean, memory_date, unique
from planners.scripted.condense import visits_body

DERIVED_PREFIX = "="


def _newest_first(memories: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    return sorted(memories, key=lambda m: (as_utc(m.created_at), str(m.id)), reverse=True)


def _count(memories: Sequence[MemoryRecord]) -> list[str]:
    return [count_line(len(memories))] if memories else []


def _span(memories: Sequence[MemoryRecord]) -> list[str]:
    days = sorted(memory_date(m) for m in memories)
    if not days:
        return []
    return [span_line(len(days), days[0], days[-1])]


def _visits(memories: Sequence[MemoryRecord]) -> list[str]:
    return visits_body(memories).splitlines()


def _visited(memories: Sequence[MemoryRecord]) -> list[str]:
    return unique(visited_on_line(memory_date(m)) for m in _newest_first(memories))


def _address(memories: Sequence[MemoryRecord]) -> list[str]:
    addresses = unique(clean(place.get("address")) for m in memories
                       if isinstance(place := (m.metadata or {}).get("place"), dict))
    addresses = [a for a in addresses if a]
    return [address_line(addresses[0])] if len(addresses) == 1 else []


DERIVATIONS: dict[str, Callable[[Sequence[MemoryRecord]], list[str]]] = {
    "count": _count, "span": _span, "visits": _visits, "visited": _visited, "address": _address,
}


def derivation_name(line: str) -> str | None:
    """The derivation a whole line names ("=count"), or None for any other line."""
    stripped = line.strip()
    if not stripped.startswith(DERIVED_PREFIX):
        return None
    name = stripped[len(DERIVED_PREFIX):].lower()
    return name if name.isalpha() and name.isascii() else None


def derive(name: str, memories: Sequence[MemoryRecord]) -> list[str] | None:
    """The lines `=name` stands for over these memories; None for a name that is no derivation."""
    derivation = DERIVATIONS.get(name)
    return None if derivation is None else derivation(memories)


def memory_stub(handle: str, happened: str, address: str | None) -> MemoryRecord:
    """What a derivation reads of a memory (its date and its place's address), rebuilt from what the
    prompt's handles keep of it (planners/handles.py) when the reply is read."""
    moment = datetime.fromisoformat(happened)
    metadata = {"place": {"address": address}} if address else {}
    return MemoryRecord(id=uuid5(NAMESPACE_URL, f"derived-line:{handle}"), content="", metadata=metadata,
                        created_at=moment, updated_at=moment)


def section_memories(citations: Sequence[str], memories: dict[str, MemoryRecord]) -> list[MemoryRecord] | None:
    """The memories a section's derived lines are written from: its citations, when every one is a
    memory of the batch (`memories`, by citation); else None, and its derived lines give nothing."""
    found = [memories.get(ref.strip().lower()) for ref in dict.fromkeys(citations)]
    return [m for m in found if m is not None] if found and all(m is not None for m in found) else None
