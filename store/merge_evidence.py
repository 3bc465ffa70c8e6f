"""What the merge judge sees of each ambiguous pair: a few lines of text and memories behind both pages.

For a stored page: its first sections, and the memories its sections cite (newest first), each with
the place address or city its metadata carries. For the proposal: the memories it cites. And how many
memories both already cite. Every read is scoped by (tenant, owner).
"""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.merge_questions import MergeQuestion, MergeSide
from store.page_matching import AskedMerge

EVIDENCE_MEMORIES = 6
EVIDENCE_SECTIONS = 2
EVIDENCE_CHARS = 300


def _memory_line(content: str, address: str | None, city: str | None) -> str:
    place = address or city
    line = " ".join(content.split())[:EVIDENCE_CHARS]
    return f"{line} [{place}]" if place else line


def _telling_first(memories: list[tuple[str, str, str]]) -> list[str]:
    """Evidence lines, those that carry a place first (they tell two places of one name apart), then
    the newest first."""
    ordered = sorted(memories, key=lambda m: m[0], reverse=True)
    return [line for _, line, _ in sorted(ordered, key=lambda m: not m[2])]


def _places(memories: list[tuple[str, str, str]]) -> list[str]:
    return sorted({place for _, _, place in memories if place})[:EVIDENCE_MEMORIES]


class _PageEvidence:
    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = defaultdict(list)  # section text, then cited memories
        self.cited: dict[str, set[str]] = defaultdict(set)  # every memory the page cites
        self.places: dict[str, list[str]] = defaultdict(list)


async def _page_evidence(conn: AsyncConnection, tenant: str, owner: str, page_ids: list[str]) -> _PageEvidence:
    found = _PageEvidence()
    lines, cited = found.lines, found.cited
    if not page_ids:
        return found
    scope = {"tenant": tenant, "owner": owner, "ids": page_ids}
    for row in await conn.execute(text("""
        SELECT page_id, body_md FROM (
            SELECT s.page_id, s.body_md, row_number() OVER (PARTITION BY s.page_id ORDER BY s.position) AS n
            FROM wiki_page_sections s JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.id = ANY(CAST(:ids AS uuid[]))
        ) ranked WHERE n <= :sections ORDER BY page_id, n
    """), {**scope, "sections": EVIDENCE_SECTIONS}):
        lines[str(row.page_id)].append(" ".join(row.body_md.split())[:EVIDENCE_CHARS])
    for row in await conn.execute(text("""
        SELECT DISTINCT s.page_id, ss.source_ref FROM wiki_section_sources ss
        JOIN wiki_page_sections s ON s.id = ss.section_id JOIN wiki_pages p ON p.id = s.page_id
        WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.id = ANY(CAST(:ids AS uuid[]))
          AND ss.source_kind = 'memory_unit'
    """), scope):
        cited[str(row.page_id)].add(str(row.source_ref).lower())
    memories = await _memories(conn, tenant, owner, sorted({ref for refs in cited.values() for ref in refs}))
    for page_id, refs in cited.items():
        behind = [memories[ref] for ref in refs if ref in memories]
        lines[page_id] += _telling_first(behind)[:EVIDENCE_MEMORIES]
        found.places[page_id] = _places(behind)
    return found


async def _memories(conn: AsyncConnection, tenant: str, owner: str,
                    ids: list[str]) -> dict[str, tuple[str, str, str]]:
    """memory id -> (when it happened, its evidence line, the place it names or "")."""
    if not ids:
        return {}
    rows = await conn.execute(text("""
        SELECT id, content, created_at, metadata -> 'place' ->> 'address' AS address,
               metadata -> 'place' ->> 'city' AS city
        FROM memory_units WHERE tenant_id = :tenant AND owner_id = :owner AND id::text = ANY(CAST(:ids AS text[]))
    """), {"tenant": tenant, "owner": owner, "ids": ids})
    return {str(row.id): (row.created_at.isoformat(), _memory_line(row.content, row.address, row.city),
                          row.address or row.city or "") for row in rows}


async def merge_questions(conn: AsyncConnection, tenant: str, owner: str,
                          asked: list[AskedMerge]) -> list[MergeQuestion]:
    """The judge's questions: each asked pair with the evidence of both sides."""
    pages = await _page_evidence(conn, tenant, owner, sorted({a.candidate_page_id for a in asked}))
    memories = await _memories(conn, tenant, owner,
                               sorted({r for a in asked for r in (*a.proposal_refs, *a.candidate_refs)}))

    def behind(refs: list[str]) -> list[tuple[str, str, str]]:
        return [memories[ref] for ref in refs if ref in memories]

    questions = []
    for pair in asked:
        mine = behind(pair.proposal_refs)
        proposal = _with_evidence(pair.proposal, [*pair.proposal.evidence[:EVIDENCE_SECTIONS],
                                                  *_telling_first(mine)[:EVIDENCE_MEMORIES]], _places(mine))
        theirs = behind(pair.candidate_refs)
        candidate = _with_evidence(pair.candidate, [*pair.candidate.evidence[:EVIDENCE_SECTIONS],
                                                    *pages.lines.get(pair.candidate_page_id, []),
                                                    *_telling_first(theirs)[:EVIDENCE_MEMORIES]],
                                   sorted({*pages.places.get(pair.candidate_page_id, []), *_places(theirs)}))
        cited = pages.cited.get(pair.candidate_page_id, set()) | set(pair.candidate_refs)
        shared = len(set(pair.proposal_refs) & cited)
        questions.append(MergeQuestion(key=pair.key, rung=pair.rung, detail=pair.detail, proposal=proposal,
                                       candidate=candidate, shared_sources=shared))
    return questions


def _with_evidence(side: MergeSide, lines: list[str], places: list[str]) -> MergeSide:
    return side.model_copy(update={"evidence": lines[:EVIDENCE_MEMORIES + EVIDENCE_SECTIONS], "places": places})
