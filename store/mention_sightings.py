"""Which memories an unresolved mention's count rests on (`wiki_mention_sightings`, migration 0018).

A mention row keeps at most five sample contexts; its count is every sighting. So that forgetting a
memory takes its sightings out of the count (and out of the promotion rule) even when its sample fell
out of the five, each sighting's memory is kept here, by mention row. Rows made before the table
existed have their sample memories attributed and the rest of their count unattributed: a forgotten
memory that names such a mention's alias and has no sighting row of it is taken to be one of those.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.evidence import Evidence
from domain.forget import names


async def record_sightings(conn: AsyncConnection, sightings: Sequence[tuple[str, str]]) -> None:
    """(mention id, memory id) of each sighting, one more each time a pair repeats."""
    if not sightings:
        return
    counted = Counter(sightings)
    await conn.execute(text("""
        INSERT INTO wiki_mention_sightings (mention_id, memory_id, sightings)
        SELECT m, r, n FROM unnest(CAST(:mentions AS uuid[]), CAST(:refs AS text[]), CAST(:counts AS integer[]))
            AS s(m, r, n)
        ON CONFLICT (mention_id, memory_id) DO UPDATE SET sightings = wiki_mention_sightings.sightings + excluded.sightings
    """), {"mentions": [m for m, _ in counted], "refs": [r for _, r in counted], "counts": list(counted.values())})


async def move_sightings(conn: AsyncConnection, from_mention: Any, to_mention: Any) -> None:
    """A mention row merged into another hands its sightings on (before it is deleted)."""
    await conn.execute(text("""
        INSERT INTO wiki_mention_sightings (mention_id, memory_id, sightings)
        SELECT CAST(:to AS uuid), memory_id, sightings FROM wiki_mention_sightings WHERE mention_id = CAST(:from AS uuid)
        ON CONFLICT (mention_id, memory_id) DO UPDATE SET sightings = wiki_mention_sightings.sightings + excluded.sightings
    """), {"from": str(from_mention), "to": str(to_mention)})


@dataclass
class MentionFate:
    """What forgetting memories does to one mention row: the sightings it loses, the samples it keeps."""

    id: str
    alias: str
    alias_normalized: str
    status: str
    count: int
    samples: list[Any]
    promoted_page_id: str | None
    lost: int = 0  # sightings of forgotten memories
    kept_samples: list[Any] = field(default_factory=list)
    samples_changed: bool = False

    @property
    def left(self) -> int:
        return max(self.count - self.lost, 0)


async def mention_fates(conn: AsyncConnection, tenant: str, owner: str, forgotten: Sequence[str],
                        edited: Sequence[str], evidence: dict[str, Evidence],
                        stale: Any) -> list[MentionFate]:
    """Every mention of the scope whose count rests on a forgotten memory, or whose samples quote a
    forgotten or edited memory or hold a word only the forgotten memories had (`stale(text)`)."""
    gone, touched = set(forgotten), set(forgotten) | set(edited)
    said = " ".join(evidence[m].text for m in sorted(gone) if m in evidence)
    rows = (await conn.execute(text("""
        SELECT m.id::text AS id, m.alias, m.alias_normalized, m.status, m.mention_count, m.sample_contexts,
               m.promoted_page_id::text AS promoted_page_id,
               coalesce((SELECT sum(s.sightings) FROM wiki_mention_sightings s WHERE s.mention_id = m.id
                         AND s.memory_id = ANY(CAST(:forgotten AS text[]))), 0) AS lost,
               coalesce((SELECT sum(s.sightings) FROM wiki_mention_sightings s WHERE s.mention_id = m.id), 0)
                   AS attributed,
               coalesce((SELECT array_agg(s.memory_id) FROM wiki_mention_sightings s WHERE s.mention_id = m.id
                         AND s.memory_id = ANY(CAST(:forgotten AS text[]))), '{}') AS seen_by_forgotten
        FROM wiki_unresolved_mentions m
        WHERE m.tenant_id = :tenant AND m.owner_id = :owner AND (
            EXISTS (SELECT 1 FROM wiki_mention_sightings s WHERE s.mention_id = m.id
                    AND s.memory_id = ANY(CAST(:forgotten AS text[])))
            OR EXISTS (SELECT 1 FROM jsonb_array_elements(m.sample_contexts) e
                       WHERE e->>'source_ref' = ANY(CAST(:touched AS text[])))
            OR (m.mention_count > (SELECT coalesce(sum(s.sightings), 0) FROM wiki_mention_sightings s
                                   WHERE s.mention_id = m.id)
                AND strpos(:said, ' ' || m.alias_normalized || ' ') > 0)
            OR m.sample_contexts::text ILIKE ANY(CAST(:patterns AS text[])))
        ORDER BY m.alias_normalized, m.status
    """), {"tenant": tenant, "owner": owner, "forgotten": sorted(gone), "touched": sorted(touched),
           "said": said, "patterns": stale.patterns})).all()
    fates = []
    for row in rows:
        fate = MentionFate(id=row.id, alias=row.alias, alias_normalized=row.alias_normalized, status=row.status,
                           count=row.mention_count, samples=list(row.sample_contexts or []),
                           promoted_page_id=row.promoted_page_id, lost=int(row.lost))
        # Sightings counted before they were recorded by memory: a forgotten memory naming the alias
        # that has no sighting row of it was one of them, as far as the count can tell.
        unattributed = max(row.mention_count - int(row.attributed), 0)
        if unattributed:
            seen = set(row.seen_by_forgotten)
            naming = [m for m in sorted(gone - seen) if m in evidence and names(row.alias, evidence[m])]
            fate.lost += min(unattributed, len(naming))
        fate.kept_samples = [s for s in fate.samples if not _stale_sample(s, touched, stale)]
        fate.samples_changed = len(fate.kept_samples) != len(fate.samples)
        if fate.lost or fate.samples_changed:
            fates.append(fate)
    return fates


def _stale_sample(sample: Any, touched: set[str], stale: Any) -> bool:
    if not isinstance(sample, dict):
        return False
    if str(sample.get("source_ref") or "") in touched:
        return True
    return stale.holds(str(sample.get("quote") or ""), str(sample.get("alias") or ""))


async def drop_sightings(conn: AsyncConnection, mention_ids: Sequence[str], forgotten: Sequence[str]) -> None:
    if mention_ids and forgotten:
        await conn.execute(text("""
            DELETE FROM wiki_mention_sightings WHERE mention_id = ANY(CAST(:mentions AS uuid[]))
              AND memory_id = ANY(CAST(:forgotten AS text[]))
        """), {"mentions": list(mention_ids), "forgotten": list(forgotten)})
