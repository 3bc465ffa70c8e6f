"""Pooled open mentions: the sightings of one thing count together, whatever spelling each used.

The promotion rule (domain/promotion.py) counts sightings on an open mention. Counted per spelling,
a thing written three ways, each once ("Golnurgren & Startdros Ltd", "Golnurgren and Startdros",
"Golnurgren and Startdros Inc."), would never reach the threshold and never get a page. So a
sighting whose spelling has no open row of its own joins the open row of the scope that the
resolution ladder confidently calls the same name (domain/resolution.py: the same name key, the same
words reordered, a slip of the keyboard, ...), and the row keeps the spelling on the sighting's
sample context (`alias`) so that later spellings meet all of its names.

Only a confident rung pools, and only when it points at one row; a spelling one replaced letter
from any of the row's spellings (the ladder's near rung) never joins it. So the traps stay apart:
two names one letter apart, initials in another order and neighbouring ordinals never meet on a
confident rung, and the ambiguous rungs (an abbreviation, an acronym) stay their own mention.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.aliases import normalize_alias
from domain.resolution import NameSet, Rung, compare, name_blocking_keys

# The most recently seen open rows a sighting may join: a bound on the work per apply.
POOLED_MENTIONS = 2000


@dataclass(frozen=True)
class PoolRow:
    """An open mention as pooling reads it: its key (alias_normalized), type and every spelling."""

    alias_normalized: str
    suggested_type: str | None
    spellings: tuple[str, ...]


def spellings_of(alias: str, sample_contexts: Iterable[Any]) -> tuple[str, ...]:
    """The row's own spelling and those its sightings were written with."""
    pooled = (str(c["alias"]) for c in sample_contexts if isinstance(c, dict) and c.get("alias"))
    return tuple(dict.fromkeys([alias, *pooled]))


class MentionPool:
    """Open rows looked up by blocking key, each sighting's spelling compared only with the rows it
    shares a key with (domain/resolution.py `name_blocking_keys`)."""

    def __init__(self, rows: Sequence[PoolRow] = ()) -> None:
        self._rows: list[PoolRow] = []
        self._by_key: dict[str, list[int]] = {}
        for row in rows:
            self.add(row)

    def add(self, row: PoolRow) -> None:
        index = len(self._rows)
        self._rows.append(row)
        for key in name_blocking_keys(list(row.spellings)):
            self._by_key.setdefault(key, []).append(index)

    def extend(self, alias_normalized: str, spelling: str) -> None:
        """A spelling joined the row: later sightings meet it too."""
        for index, row in enumerate(self._rows):
            if row.alias_normalized == alias_normalized and spelling not in row.spellings:
                self._rows[index] = PoolRow(row.alias_normalized, row.suggested_type, (*row.spellings, spelling))
                for key in name_blocking_keys([spelling]):
                    self._by_key.setdefault(key, []).append(index)

    def kin(self, spelling: str, suggested_type: str | None) -> str | None:
        """The alias_normalized of the one open row a confident rung calls this spelling, else None."""
        normalized = normalize_alias(spelling)
        seen = NameSet(type=suggested_type or "entity", names=[spelling])
        hits: dict[str, None] = {}
        candidates = sorted({i for key in name_blocking_keys([spelling]) for i in self._by_key.get(key, ())})
        for index in candidates:
            row = self._rows[index]
            if row.alias_normalized == normalized:
                return row.alias_normalized
            if suggested_type and row.suggested_type and suggested_type != row.suggested_type:
                continue
            seen_as = seen.model_copy(update={"type": row.suggested_type or seen.type})
            verdicts = [compare(seen_as, NameSet(type=seen_as.type, names=[spelling])) for spelling in row.spellings]
            # One letter replaced against any of the row's spellings is another name (a trap), even
            # when a slip of the keyboard relates it to a further spelling.
            if any(v.confident for v in verdicts) and not any(v.rung is Rung.NEAR for v in verdicts):
                hits.setdefault(row.alias_normalized, None)
        return next(iter(hits)) if len(hits) == 1 else None


async def open_pool(conn: AsyncConnection, tenant: str, owner: str, skip: set[str] | None = None) -> MentionPool:
    """The scope's most recently seen open rows, but those whose ids are in `skip`."""
    rows = await conn.execute(text("""
        SELECT id, alias, alias_normalized, suggested_type, sample_contexts FROM wiki_unresolved_mentions
        WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'open'
        ORDER BY last_seen_at DESC, id LIMIT :limit
    """), {"tenant": tenant, "owner": owner, "limit": POOLED_MENTIONS})
    return MentionPool([PoolRow(row.alias_normalized, row.suggested_type,
                                spellings_of(row.alias, row.sample_contexts or [])) for row in rows
                        if str(row.id) not in (skip or set())])


async def kin_open_mentions(conn: AsyncConnection, tenant: str, owner: str, names: list[str]) -> list[Any]:
    """Ids of the open rows a confident rung calls one of `names` (a batch's names): the rows a
    planner must see to count a new spelling's sighting with the thing's earlier ones."""
    pool = await open_pool(conn, tenant, owner)
    found = [key for name in names if (key := pool.kin(name, None)) is not None]
    if not found:
        return []
    rows = await conn.execute(text("""
        SELECT id FROM wiki_unresolved_mentions
        WHERE tenant_id = :tenant AND owner_id = :owner AND status = 'open'
          AND alias_normalized = ANY(CAST(:aliases AS text[]))
    """), {"tenant": tenant, "owner": owner, "aliases": list(dict.fromkeys(found))})
    return [row.id for row in rows]
