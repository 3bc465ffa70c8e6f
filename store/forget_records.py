"""Forgetting, part three: the records other features derive from memories, cleared in the pass.

store/forget_apply.py removes the memories, their claims, sections, pages, aliases and sightings;
this module clears what was derived from them and kept elsewhere, in the same transaction:

- name-resolution decisions (`wiki_merge_decisions`): a decision about a removed page (as the
  candidate or as the proposal), one whose evidence cites a forgotten or edited memory (its shared
  sources), or one whose names, evidence, reason or detail hold a word only the forgotten memories
  had, is deleted whole. A decision is an audit record of one compile; what
  is left of the evidence is re-decided by the next compile that meets the names again.
- an operator's page merge record (`wiki_page_merges`): the aliases the pass removed, or that hold
  a word only the forgotten memories had, leave its lists (an unmerge must not bring them back); a
  merge whose page the pass removed is deleted.
- supersession marks (`wiki_claim_supersessions`, keyed by claim text): a mark naming a claim the
  pass removed, or holding a word only the forgotten memories had, goes; then every claim of the
  surviving pages gets its validity again, so no `superseded_by` names a removed claim and a claim
  superseded only by a removed one is current again.

Decisions and merge records are found read-only first (`derived_records`: the preview counts them)
and cleared by `clear_records`. Blocking keys (`wiki_alias_keys`) and claim embeddings
(`wiki_claim_vectors`) go with their alias or claim row (foreign keys with ON DELETE CASCADE); every
process's caches drop the scope when the pass commits (domain/process_caches.py). The operator's
corrections (aliases added or removed by hand, ignored names, promotion blocks, switches) are the
operator's words, not a memory's: kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.aliases import normalize_alias
from domain.evidence import Evidence, flat_values
from store.claim_validity import settle_validity
from store.forget import Radius


@dataclass
class DerivedRecords:
    """The records a pass clears: merge decisions deleted whole, operator merge records changed
    (`moved` is the new record, None: deleted)."""

    decision_ids: list[str] = field(default_factory=list)
    merge_changes: list[tuple[str, dict[str, Any] | None]] = field(default_factory=list)


def _words(values: Iterable[str | None]) -> set[str]:
    return {w for value in values for w in normalize_alias(value or "").split() if len(w) >= 3}


class _Gone:
    """The words only the forgotten memories had: those no remaining memory of the radius holds."""

    def __init__(self, r: Radius) -> None:
        forgotten = [r.evidence[m] for m in sorted(r.forgotten) if m in r.evidence]
        remaining: list[Evidence] = [e for key, e in r.evidence.items() if key not in r.forgotten]
        held = set().union(*(e.words for e in remaining)) if remaining else set()
        self.words = (set().union(*(e.words for e in forgotten)) if forgotten else set()) - held

    def holds(self, *values: str | None) -> bool:
        return bool(self.words and _words(values) & self.words)


async def derived_records(conn: AsyncConnection, r: Radius, scope: dict[str, str], removed_pages: set[str],
                          removed_alias_ids: Sequence[str]) -> DerivedRecords:
    """What of the other features' records rests on the pass's memories (the module's docstring says
    what), read-only: the preview counts it, the pass clears it (`clear_records`)."""
    gone = _Gone(r)
    return DerivedRecords(decision_ids=await _decisions(conn, r, scope, removed_pages, gone),
                          merge_changes=await _page_merges(conn, scope, removed_pages, set(removed_alias_ids), gone))


async def clear_records(conn: AsyncConnection, records: DerivedRecords) -> None:
    if records.decision_ids:
        await conn.execute(text("DELETE FROM wiki_merge_decisions WHERE id = ANY(CAST(:ids AS uuid[]))"),
                           {"ids": records.decision_ids})
    for merge_id, moved in records.merge_changes:
        if moved is None:
            await conn.execute(text("DELETE FROM wiki_page_merges WHERE id = CAST(:id AS uuid)"), {"id": merge_id})
        else:
            await conn.execute(text("UPDATE wiki_page_merges SET moved = CAST(:moved AS jsonb) WHERE id = CAST(:id AS uuid)"),
                               {"id": merge_id, "moved": json.dumps(moved)})


async def claim_keys_by_page(conn: AsyncConnection, page_ids: Sequence[str]) -> dict[str, set[str]]:
    """The claim keys of each page (read before the pass, to know which claims it removed)."""
    out: dict[str, set[str]] = {page: set() for page in page_ids}
    for row in await conn.execute(text("""
        SELECT s.page_id::text AS page_id, c.text_key FROM wiki_section_claims c
        JOIN wiki_page_sections s ON s.id = c.section_id WHERE s.page_id = ANY(CAST(:pages AS uuid[]))
    """), {"pages": list(page_ids)}):
        out.setdefault(row.page_id, set()).add(row.text_key)
    return out


async def _decisions(conn: AsyncConnection, r: Radius, scope: dict[str, str], removed_pages: set[str],
                     gone: _Gone) -> list[str]:
    if not r.touched:
        return []
    removed_refs = sorted(r.page_refs[p][0] for p in removed_pages if p in r.page_refs)
    patterns = [f"%{word}%" for word in sorted(gone.words)]
    rows = (await conn.execute(text("""
        SELECT id::text AS id, candidate_page_id::text AS candidate, proposal_type || '/' || proposal_slug AS proposal,
               proposal_names, detail, reason, evidence
        FROM wiki_merge_decisions d
        WHERE tenant_id = :tenant AND owner_id = :owner AND (
              candidate_page_id = ANY(CAST(:pages AS uuid[]))
              OR proposal_type || '/' || proposal_slug = ANY(CAST(:refs AS text[]))
              OR (array_to_string(proposal_names, ' ') || ' ' || detail || ' ' || reason || ' ' || evidence::text)
                 ILIKE ANY(CAST(:patterns AS text[]))
              OR EXISTS (SELECT 1 FROM unnest(CAST(:touched AS text[])) AS m(id) WHERE strpos(evidence::text, m.id) > 0))
    """), {**scope, "pages": sorted(r.page_refs), "refs": removed_refs, "patterns": patterns,
           "touched": sorted(r.touched)})).all()
    doomed = [row.id for row in rows
              if row.candidate in removed_pages or row.proposal in removed_refs
              or set(flat_values(row.evidence or {})) & r.touched
              or gone.holds(*row.proposal_names, row.detail, row.reason, *flat_values(row.evidence or {}))]
    return doomed


async def _page_merges(conn: AsyncConnection, scope: dict[str, str], removed_pages: set[str],
                       removed_aliases: set[str], gone: _Gone) -> list[tuple[str, dict[str, Any] | None]]:
    rows = (await conn.execute(text("""
        SELECT id::text AS id, source_page_id::text AS source, target_page_id::text AS target, moved
        FROM wiki_page_merges WHERE tenant_id = :tenant AND owner_id = :owner
    """), scope)).all()
    changes: list[tuple[str, dict[str, Any] | None]] = []
    for row in rows:
        if row.source in removed_pages or row.target in removed_pages:
            changes.append((row.id, None))
            continue
        moved: dict[str, Any] = dict(row.moved)
        kept = {key: [alias for alias in moved.get(key, [])
                      if alias.get("id") not in removed_aliases and not gone.holds(alias.get("alias"))]
                for key in ("aliases_moved", "aliases_dropped")}
        if any(len(kept[key]) != len(moved.get(key, [])) for key in kept):
            changes.append((row.id, {**moved, **kept}))
    return changes


async def clear_marks(conn: AsyncConnection, r: Radius, scope: dict[str, str], surviving: Sequence[str],
                      keys_before: dict[str, set[str]]) -> int:
    """Marks naming a removed claim go; every claim of the surviving pages is given its validity again."""
    if not surviving:
        return 0
    gone = _Gone(r)
    keys_after = await claim_keys_by_page(conn, surviving)
    marks = (await conn.execute(text("""
        SELECT page_id::text AS page_id, claim_key, replaced_key FROM wiki_claim_supersessions
        WHERE page_id = ANY(CAST(:pages AS uuid[]))
    """), {"pages": list(surviving)})).all()
    doomed = [(m.page_id, m.claim_key, m.replaced_key) for m in marks
              if {m.claim_key, m.replaced_key} & (keys_before.get(m.page_id, set()) - keys_after.get(m.page_id, set()))
              or gone.holds(m.claim_key, m.replaced_key)]
    if doomed:
        await conn.execute(text("""
            DELETE FROM wiki_claim_supersessions m
            USING unnest(CAST(:pages AS uuid[]), CAST(:keys AS text[]), CAST(:replaced AS text[])) AS d(page_id, key, replaced)
            WHERE m.page_id = d.page_id AND m.claim_key = d.key AND m.replaced_key = d.replaced
        """), {"pages": [d[0] for d in doomed], "keys": [d[1] for d in doomed], "replaced": [d[2] for d in doomed]})
    sections = [row.id for row in await conn.execute(text(
        "SELECT id::text AS id FROM wiki_page_sections WHERE page_id = ANY(CAST(:pages AS uuid[]))"),
        {"pages": list(surviving)})]
    await settle_validity(conn, scope["tenant"], scope["owner"], sections, {}, None)
    return len(doomed)
