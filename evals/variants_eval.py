"""Compile the variant generator's corpus (evals/variants.py) and score name resolution per family.

Pages are the scope's active entity pages; a page "cites" a memory when one of its own sections
(not a hub's list of members) cites it. For each family:

- surfaces merged: of the written forms of a thing that are not its canonical spelling, the share
  whose memories are all cited by the thing's main page (the page citing most of its memories);
- candidate recall: the share of those surfaces that were merged or put to the judge (a decision on
  record in `wiki_merge_decisions` about a proposal carrying the surface and a page of the thing);
- pairwise precision and recall over pairs of memories: "cited on the same page" against "about the
  same thing" (a pair counts for a family when one of its things has that family);
- traps violated: must-not-merge pairs whose memories one page cites together.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations

from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from app.worker import build_worker
from domain.aliases import normalize_alias
from domain.memory import MemoryIn
from evals.metrics import share
from evals.run import eval_settings
from evals.snapshot import Snapshot, read_snapshot
from evals.variants import VariantCorpus, generate
from runtime.temporal_client import signal_compile
from store.memories import store_memories


class FamilyScore(BaseModel):
    things: int = 0
    surfaces: int = 0
    merged: int = 0
    candidates: int = 0  # merged or put to the judge
    true_pairs: int = 0
    found_pairs: int = 0  # true pairs cited on one page
    predicted_pairs: int = 0  # pairs cited on one page
    correct_pairs: int = 0

    @property
    def surfaces_merged(self) -> float | None:
        return share(self.merged, self.surfaces, None)

    @property
    def candidate_recall(self) -> float | None:
        return share(self.candidates, self.surfaces, None)

    @property
    def precision(self) -> float | None:
        return share(self.correct_pairs, self.predicted_pairs, None)

    @property
    def recall(self) -> float | None:
        return share(self.found_pairs, self.true_pairs, None)


class VariantScore(BaseModel):
    seed: int
    memories: int
    things: int
    pages: int
    duplicate_pages: int  # pages beyond one per thing
    duplicates: list[list[str]] = Field(default_factory=list)
    uncited_memories: int
    families: dict[str, FamilyScore]
    overall: FamilyScore
    traps: dict[str, bool]  # trap family -> violated
    trap_details: list[str] = Field(default_factory=list)
    missed: list[str] = Field(default_factory=list)  # surfaces neither merged nor judged
    judged_apart: list[str] = Field(default_factory=list)  # surfaces the judge kept apart


def _pages_citing(snapshot: Snapshot) -> dict[str, set[str]]:
    """memory id -> the active entity pages whose own sections cite it."""
    citing: dict[str, set[str]] = defaultdict(set)
    for page in snapshot.active():
        if page.type != "entity":
            continue
        for section in page.sections:
            if section.aggregation and section.aggregation.get("linked_page_ids"):
                continue
            for ref in section.sources:
                citing[ref].add(page.id)
    return citing


def score_variants(corpus: VariantCorpus, snapshot: Snapshot, decisions: list[tuple[list[str], str, str]]) -> VariantScore:
    """`decisions`: (proposal names, candidate page id, decided by) of every decision on record."""
    citing = _pages_citing(snapshot)
    titles = {page.id: page.title for page in snapshot.active()}
    memories_of: dict[str, list[str]] = defaultdict(list)
    for memory_id, key in corpus.about.items():
        memories_of[key].append(memory_id)
    families: dict[str, FamilyScore] = defaultdict(FamilyScore)
    overall = FamilyScore()
    missed, judged_apart, duplicates = [], [], []
    duplicate_pages = 0
    for key, thing in corpus.things.items():
        scores = [families[f] for f in thing.families] + [overall]
        pages = Counter(page for m in memories_of[key] for page in citing.get(m, ()))
        main = pages.most_common(1)[0][0] if pages else None
        if len(pages) > 1:
            duplicate_pages += len(pages) - 1
            duplicates.append(sorted(titles[p] for p in pages))
        for score in scores:
            score.things += 1
        canonical = normalize_alias(thing.canonical)
        for surface in thing.surfaces[1:]:
            if normalize_alias(surface) == canonical:
                continue
            written = [m for m in memories_of[key] if corpus.written[m] == surface]
            merged = main is not None and all(main in citing.get(m, ()) for m in written)
            judged = any(normalize_alias(surface) in {normalize_alias(n) for n in names} and page in pages
                         for names, page, _ in decisions)
            for score in scores:
                score.surfaces += 1
                score.merged += merged
                score.candidates += merged or judged
            if not merged:
                (judged_apart if judged else missed).append(f"{surface!r} ({', '.join(thing.families)})")
    things_of = {m: corpus.things[k] for m, k in corpus.about.items()}
    for a, b in combinations(sorted(corpus.about), 2):
        same = corpus.about[a] == corpus.about[b]
        together = bool(citing.get(a, set()) & citing.get(b, set()))
        if not (same or together):
            continue
        involved = {f for f in (*things_of[a].families, *things_of[b].families)}
        for score in [*(families[f] for f in involved), overall]:
            score.true_pairs += same
            score.found_pairs += same and together
            score.predicted_pairs += together
            score.correct_pairs += same and together
    traps, details = {}, []
    for trap in corpus.traps:
        left, right = set(memories_of[trap.left]), set(memories_of[trap.right])
        shared = {p for m in left for p in citing.get(m, ())} & {p for m in right for p in citing.get(m, ())}
        traps[trap.family] = traps.get(trap.family, False) or bool(shared)
        details += [f"{trap.family}: {titles[p]!r} holds {trap.left} and {trap.right}" for p in sorted(shared)]
    return VariantScore(seed=corpus.seed, memories=len(corpus.memories), things=len(corpus.things),
                        pages=sum(1 for p in snapshot.active() if p.type == "entity"),
                        duplicate_pages=duplicate_pages, duplicates=duplicates,
                        uncited_memories=sum(1 for m in corpus.about if not citing.get(m)),
                        families=dict(sorted(families.items())), overall=overall, traps=traps, trap_details=details,
                        missed=missed, judged_apart=judged_apart)


async def read_decisions(engine: AsyncEngine, tenant: str, owner: str) -> list[tuple[list[str], str, str]]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("""
            SELECT proposal_names, candidate_page_id, decided_by FROM wiki_merge_decisions
            WHERE tenant_id = :t AND owner_id = :o
        """), {"t": tenant, "o": owner})
        return [(list(row.proposal_names), str(row.candidate_page_id), row.decided_by) for row in rows]


async def evaluate_variants(client: Client, engine: AsyncEngine, seed: int, per_family: int = 3) -> VariantScore:
    corpus = generate(seed, per_family)
    settings = eval_settings()
    async with build_worker(client, engine, settings):
        await store_memories(engine, corpus.tenant, corpus.owner, [MemoryIn.model_validate(m) for m in corpus.memories])
        handle = await signal_compile(client, corpus.tenant, corpus.owner, trigger="admin", settings=settings)
        await handle.result()
    snapshot = await read_snapshot(engine, corpus.tenant, corpus.owner)
    return score_variants(corpus, snapshot, await read_decisions(engine, corpus.tenant, corpus.owner))
