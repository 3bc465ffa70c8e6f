"""Which page of the scope a proposed page is: candidates read by SQL, ranked by the resolution ladder.

The ladder (domain/resolution.py) decides; this module finds what it compares against. Stored
aliases are normalised, so a candidate is any active page with an alias that

- equals one of the proposal's names or their cores ("uchi" for "Uchi (Austin)"),
- starts with a core and a space ("uchi austin", stored from "Uchi (Austin)", for a proposed "Uchi";
  "biscuit the dog" for "Biscuit"),
- ends with a space and a core ("the driskill" for "Driskill", "our dog biscuit"), or
- is a trigram neighbour (pg_trgm `%`, similarity >= 0.3: "marguerite" for "Margeurite"), or
- shares a blocking key with one of the proposal's names (store/name_index.py: the name key, each
  significant word, an acronym, a phonetic code: "Emmer and Rye" for "Emmer & Rye", "MoMA" for
  "Museum of Modern Art"),

at most CANDIDATES_PER_KEY pages per key, the closest first, all proposals of a plan in one statement
(and one more for the blocking keys).

Ambiguous pairs are not decided here: the resolver looks up the judge's decision by the pair's key
(`pair_key`), recorded by the judge activity before resolution ran (workflows/compile.py). A pair
nobody judged does not merge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.aliases import normalize_alias
from domain.merge_questions import MergeDecision, MergeSide
from domain.resolution import NameSet, Rung, name_blocking_keys, search_keys
from store.name_index import pages_by_blocking_keys

CANDIDATES_PER_KEY = 5
TRIGRAM_CANDIDATE_THRESHOLD = 0.3


class Candidate(BaseModel):
    """A stored page the ladder compares a proposal with."""

    id: str
    type: str
    slug: str
    title: str
    summary: str | None = None
    aliases: list[str] = Field(default_factory=list)

    def names(self) -> NameSet:
        return NameSet(type=self.type, names=[self.title, *self.aliases], summary=self.summary)


class AskedMerge(BaseModel):
    """An ambiguous pair the resolver met: what the judge is asked (evidence is added by the judge
    activity, which reads the memories behind both sides)."""

    key: str
    rung: Rung
    detail: str = ""
    proposal: MergeSide
    proposal_refs: list[str] = Field(default_factory=list)  # memories the proposal cites
    candidate: MergeSide
    candidate_page_id: str
    candidate_refs: list[str] = Field(default_factory=list)  # a page of the same plan: the memories it cites


@dataclass
class Judgement:
    """The judge's decisions for one plan, by pair key, and the ambiguous pairs met while resolving."""

    decisions: dict[str, MergeDecision] = field(default_factory=dict)
    asked: list[AskedMerge] = field(default_factory=list)

    def decide(self, asked: AskedMerge) -> bool | None:
        """True/False as judged; None when the pair was not judged (then it does not merge)."""
        if all(a.key != asked.key for a in self.asked):
            self.asked.append(asked)
        decision = self.decisions.get(asked.key)
        return None if decision is None else decision.same


def pair_key(proposal_type: str, proposal_slug: str, candidate_page_id: str) -> str:
    return f"{proposal_type}/{proposal_slug}->{candidate_page_id}"


async def candidates_by_keys(conn: AsyncConnection, tenant: str, owner: str,
                             name_lists: list[tuple[str, ...]]) -> dict[tuple[str, ...], list[Candidate]]:
    """For each list of a proposal's names: the scope's active pages the ladder should compare it with."""
    rows: list[tuple[int, str]] = []
    for index, names in enumerate(name_lists):
        rows += [(index, key) for key in search_keys(list(names))]
    found: dict[tuple[str, ...], list[Candidate]] = {names: [] for names in name_lists}
    if not rows:
        return found
    await conn.execute(text(f"SET LOCAL pg_trgm.similarity_threshold = {TRIGRAM_CANDIDATE_THRESHOLD}"))
    result = await conn.execute(text("""
        SELECT q.idx, p.id, p.type, p.slug, p.title, p.summary,
               coalesce((SELECT array_agg(alias ORDER BY alias) FROM wiki_page_aliases WHERE page_id = p.id), '{}')
                   AS aliases
        FROM unnest(CAST(:idx AS int[]), CAST(:keys AS text[])) AS q(idx, key)
        CROSS JOIN LATERAL (
            SELECT a.page_id, max(CASE WHEN a.alias = q.key THEN 2.0 ELSE similarity(a.alias, q.key) END) AS score
            FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
            WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.status = 'active'
              AND (a.alias = q.key OR a.alias LIKE q.key || ' %' OR a.alias LIKE '% ' || q.key OR a.alias % q.key)
            GROUP BY a.page_id
            ORDER BY score DESC, a.page_id
            LIMIT :per_key
        ) hit
        JOIN wiki_pages p ON p.id = hit.page_id
        ORDER BY q.idx, hit.score DESC, p.slug
    """), {"tenant": tenant, "owner": owner, "idx": [i for i, _ in rows], "keys": [k for _, k in rows],
           "per_key": CANDIDATES_PER_KEY})
    seen: dict[int, set[str]] = {}
    for row in result:
        names = name_lists[row.idx]
        if str(row.id) in seen.setdefault(row.idx, set()):
            continue
        seen[row.idx].add(str(row.id))
        found[names].append(Candidate(id=str(row.id), type=row.type, slug=row.slug, title=row.title,
                                      summary=row.summary, aliases=list(row.aliases or [])))
    await _add_blocked(conn, tenant, owner, name_lists, found, seen)
    return found


async def _add_blocked(conn: AsyncConnection, tenant: str, owner: str, name_lists: list[tuple[str, ...]],
                       found: dict[tuple[str, ...], list[Candidate]], seen: dict[int, set[str]]) -> None:
    """The pages sharing a blocking key with a proposal that the alias lookups above did not find."""
    queries = [(index, key, normalize_alias(names[0])) for index, names in enumerate(name_lists)
               for key in name_blocking_keys(list(names))]
    missing: dict[str, list[int]] = {}
    for index, page_id in await pages_by_blocking_keys(conn, tenant, owner, queries):
        if page_id not in seen.setdefault(index, set()):
            seen[index].add(page_id)
            missing.setdefault(page_id, []).append(index)
    if not missing:
        return
    rows = await conn.execute(text("""
        SELECT p.id, p.type, p.slug, p.title, p.summary,
               coalesce((SELECT array_agg(alias ORDER BY alias) FROM wiki_page_aliases WHERE page_id = p.id), '{}')
                   AS aliases
        FROM wiki_pages p WHERE p.tenant_id = :tenant AND p.owner_id = :owner AND p.id = ANY(CAST(:ids AS uuid[]))
    """), {"tenant": tenant, "owner": owner, "ids": list(missing)})
    pages = {str(row.id): Candidate(id=str(row.id), type=row.type, slug=row.slug, title=row.title,
                                    summary=row.summary, aliases=list(row.aliases or [])) for row in rows}
    for page_id, indexes in missing.items():
        if page_id in pages:
            for index in indexes:
                found[name_lists[index]].append(pages[page_id])
