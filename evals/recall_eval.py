"""The retrieval eval (seed 004's A/B harness): the same generated questions put to `recall`, to
page search, and to BM25 over the raw memories, each answer packed into the same budget.

Per retriever and budget (500, 1,000 and 2,000 tokens at four characters a token):
- evidence recall: the share of questions whose every evidence memory the answer reaches (a memory
  returned, or cited by a returned claim's listed sources);
- answer recall: the share whose every expected answer is in the returned text (or the dates shown);
- MRR: the mean reciprocal rank of the first returned item that reaches the evidence (2,000 tokens);
- p50 / p95 latency of one call.
`recall` is also run with each of its retrievers switched off (the ablation), at 500 tokens.

    python -m evals.recall_eval [--seeds 11,7919] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import bm25s
import Stemmer
from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.claim_vectors import embed_new_claims, embed_new_memories
from app.reads import ReadScope
from app.recall import recall
from app.search import search
from app.worker import build_worker
from domain.memory import MemoryIn
from domain.recall import RETRIEVERS
from domain.recall_body import Candidate, pack_json
from domain.recall_dates import day_text, span_text
from evals.recall_corpus import EvalQuestion, RecallCorpus, generate
from evals.run import private_services, publish
from messages.compile import Scope
from planners.embeddings import static_embedder
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from store.claims import page_claims
from store.memories import store_memories

BUDGETS = (500, 1000, 2000)
SEEDS = (11, 7919)
log = logging.getLogger("evals.recall")
_WORD = re.compile(r"[^\W_]+")


class Returned(BaseModel):
    """One answer, as the budget left it: items in order, each with the memories it reaches and its text."""

    reached: list[list[str]]
    text: str


class Scores(BaseModel):
    evidence_recall: dict[int, float]
    answer_recall: dict[int, float]
    mrr: float
    p50_ms: float
    p95_ms: float
    by_kind: dict[str, float]  # evidence recall at 500 tokens per question kind


def _tokens(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _score(questions: list[EvalQuestion], answers: dict[int, list[Returned]], took: list[float]) -> Scores:
    def reaches(question: EvalQuestion, returned: Returned) -> bool:
        seen = {m for item in returned.reached for m in item}
        return set(question.evidence) <= seen

    def holds(question: EvalQuestion, returned: Returned) -> bool:
        lowered = returned.text.lower()
        return all(answer.lower() in lowered for answer in question.answers)

    def reciprocal(question: EvalQuestion, returned: Returned) -> float:
        seen: set[str] = set()
        for rank, item in enumerate(returned.reached, 1):
            seen |= set(item)
            if set(question.evidence) <= seen:
                return 1.0 / rank
        return 0.0

    n = len(questions)
    kinds = sorted({q.kind for q in questions})
    small = answers[BUDGETS[0]]
    return Scores(
        evidence_recall={b: round(sum(reaches(q, r) for q, r in zip(questions, answers[b], strict=True)) / n, 3)
                         for b in answers},
        answer_recall={b: round(sum(holds(q, r) for q, r in zip(questions, answers[b], strict=True)) / n, 3)
                       for b in answers},
        mrr=round(statistics.fmean(reciprocal(q, r) for q, r in zip(questions, answers[max(answers)], strict=True)), 3),
        p50_ms=round(statistics.median(took), 1),
        p95_ms=round(sorted(took)[int(0.95 * (len(took) - 1))], 1),
        by_kind={k: round(statistics.fmean(reaches(q, r) for q, r in zip(questions, small, strict=True)
                                           if q.kind == k), 3) for k in kinds})


async def _recall_answers(engine: AsyncEngine, scope: ReadScope, questions: list[EvalQuestion],
                          budgets: tuple[int, ...], without: list[str]) -> tuple[dict[int, list[Returned]], list[float]]:
    answers: dict[int, list[Returned]] = {b: [] for b in budgets}
    took: list[float] = []
    for question in questions:
        for budget in budgets:
            started = time.perf_counter()
            result = await recall(engine, scope, question.question, budget, without=without, embedder=static_embedder)
            if budget == budgets[0]:
                took.append((time.perf_counter() - started) * 1000)
            reached, texts = [], []
            for item in result.results:
                if item.kind == "claim":
                    reached.append([*(item.memories or []), *([item.memory.id] if item.memory else [])])
                    texts += [item.text, item.date or "", *([item.memory.text, item.memory.date] if item.memory else [])]
                else:
                    reached.append([item.id or ""])
                    texts += [item.text, item.date or ""]
            answers[budget].append(Returned(reached=reached, text="\n".join(texts)))
    return answers, took


def _packed(items: list[tuple[list[str], dict]], max_tokens: int) -> Returned:
    """Items (memories reached, the answer's compact JSON) best first, packed by recall's own rule: the
    whole body within the budget."""
    body = pack_json({"max_tokens": max_tokens}, [Candidate(item=item, text=item["text"]) for _, item in items],
                     max_tokens)
    chosen = [items[i] for i in body.chosen]
    return Returned(reached=[memories for memories, _ in chosen],
                    text="\n".join(f"{item['text']}\n{item.get('date', '')}" for _, item in chosen))


def _bm25_answers(corpus: RecallCorpus, questions: list[EvalQuestion]) -> tuple[dict[int, list[Returned]], list[float]]:
    stemmer = Stemmer.Stemmer("english")

    def tokens(texts: list[str]):
        return bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False, return_ids=False)

    index = bm25s.BM25(method="lucene")
    index.index(bm25s.tokenize([m.content for m in corpus.memories], stopwords="en", stemmer=stemmer,
                               show_progress=False), show_progress=False)
    answers: dict[int, list[Returned]] = {b: [] for b in BUDGETS}
    took: list[float] = []
    for question in questions:
        started = time.perf_counter()
        asked = index.get_tokens_ids(tokens([question.question])[0])
        scores = index.get_scores(asked) if asked else [0.0] * len(corpus.memories)
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:200]
        took.append((time.perf_counter() - started) * 1000)
        items = [([m.id], {"kind": "memory", "id": m.id, "date": day_text(m.occurred_at), "text": m.content})
                 for m in (corpus.memories[i] for i in order if scores[i] > 0)]
        for budget in BUDGETS:
            answers[budget].append(_packed(items, budget))
    return answers, took


async def _search_answers(engine: AsyncEngine, scope: ReadScope,
                          questions: list[EvalQuestion]) -> tuple[dict[int, list[Returned]], list[float]]:
    """Page search as an agent would use it: the hits' claims, page by page in order, into the budget."""
    answers: dict[int, list[Returned]] = {b: [] for b in BUDGETS}
    took: list[float] = []
    for question in questions:
        started = time.perf_counter()
        hits = (await search(engine, scope, question.question, 10)).hits
        took.append((time.perf_counter() - started) * 1000)
        items: list[tuple[list[str], dict]] = []
        async with engine.connect() as conn:
            for hit in hits:
                page_id = await _page_id(conn, scope, hit.type, hit.slug)
                for claims in (await page_claims(conn, scope.tenant, scope.owner, page_id)).values():
                    items += [(c.sources, {"kind": "claim", "text": c.text, "page": f"{hit.type}/{hit.slug}",
                                           "date": span_text(c.first_seen, c.last_seen), "memories": c.sources[:3]})
                              for c in claims]
        for budget in BUDGETS:
            answers[budget].append(_packed(items, budget))
    return answers, took


async def _page_id(conn, scope: ReadScope, page_type: str, slug: str):
    from store.wiki_reads import find_page

    view = await find_page(conn, scope.tenant, scope.owner, page_type, slug)
    assert view is not None
    return view.id


async def _compile(client, engine: AsyncEngine, corpus: RecallCorpus, tenant: str, owner: str) -> float:
    settings = Settings(WIKI_LLM="scripted", WIKI_DEBOUNCE_SECONDS=0, WIKI_TASK_QUEUE=f"recall-{uuid.uuid4()}")
    await store_memories(engine, tenant, owner, [MemoryIn(id=m.id, content=m.content, occurred_at=m.occurred_at)
                                                 for m in corpus.memories])
    started = time.monotonic()
    async with build_worker(client, engine, settings):
        handle = await signal_compile(client, tenant, owner, trigger="admin", settings=settings)
        await handle.result()
    return time.monotonic() - started


async def run_seed(client, engine: AsyncEngine, seed: int) -> dict:
    corpus = generate(seed)
    scope = ReadScope.of("recall-eval", f"seed-{seed}")
    compile_seconds = await _compile(client, engine, corpus, scope.tenant, scope.owner)
    questions = corpus.questions
    static_embedder()  # loaded once, outside the timings
    embed_seconds, memory_embed_seconds = await _embed_from_scratch(engine, scope)
    report: dict[str, dict] = {}
    answers, took = await _recall_answers(engine, scope, questions, BUDGETS, [])
    report["recall"] = _score(questions, answers, took).model_dump()
    answers, took = await _search_answers(engine, scope, questions)
    report["page search"] = _score(questions, answers, took).model_dump()
    answers, took = _bm25_answers(corpus, questions)
    report["BM25 over raw memories"] = _score(questions, answers, took).model_dump()
    ablations = {}
    for retriever in RETRIEVERS:
        answers, took = await _recall_answers(engine, scope, questions, (BUDGETS[0],), [retriever])
        scores = _score(questions, {**{b: answers[BUDGETS[0]] for b in BUDGETS}}, took)
        ablations[retriever] = {"evidence_recall": scores.evidence_recall[BUDGETS[0]],
                                "answer_recall": scores.answer_recall[BUDGETS[0]]}
    log.info("seed %d: %d memories, %d questions, compiled in %.1f s", seed, len(corpus.memories), len(questions),
             compile_seconds)
    return {"seed": seed, "memories": len(corpus.memories), "questions": len(questions),
            "compile_seconds": round(compile_seconds, 1), "embed_seconds": round(embed_seconds, 2),
            "memory_embed_seconds": round(memory_embed_seconds, 3),
            "retrievers": report, "without": ablations}


async def _embed_from_scratch(engine: AsyncEngine, scope: ReadScope) -> tuple[float, float]:
    """What embedding every claim, and every memory, of the compiled scope costs: the vectors the compile
    made are dropped and made again (the compile made them batch by batch, interleaved with its other
    work). Seconds for the claims, then for the memories."""
    async with engine.begin() as conn:
        for table in ("wiki_claim_vectors", "wiki_memory_vectors"):
            await conn.execute(text(f"DELETE FROM {table} WHERE tenant_id = :t AND owner_id = :o"),
                               {"t": scope.tenant, "o": scope.owner})
    where = Scope(tenant=scope.tenant, owner=scope.owner)
    started = time.perf_counter()
    await embed_new_memories(engine, where, static_embedder)
    memories = time.perf_counter() - started
    started = time.perf_counter()
    await embed_new_claims(engine, where, static_embedder)  # the memories have theirs: claims alone
    return time.perf_counter() - started, memories


async def run(seeds: tuple[int, ...] = SEEDS) -> dict:
    async with private_services("wiki-recall-eval-") as (client, engine):
        started = os.getloadavg()
        runs = [await run_seed(client, engine, s) for s in seeds]
        return {"budgets_tokens": list(BUDGETS), "runs": runs,
                "load_average": {"start": [round(v, 2) for v in started],
                                 "end": [round(v, 2) for v in os.getloadavg()]}}


def markdown(results: dict) -> str:
    """The eval's tables, for docs/RECALL_EVAL.md."""
    lines = ["# Recall eval", "",
             "Generated by `make eval` (`python -m evals.recall_eval`); do not edit by hand. On real conversations: "
             "[RECALL_LOCOMO.md](RECALL_LOCOMO.md). Questions are generated "
             "(seeded) from plain-sentence memories about generated people (`evals/recall_corpus.py`; the held-out "
             "seed's paraphrases are its own); every answer is packed by recall's rule into the same budget, the "
             "whole compact body at four characters a token. Evidence recall: every evidence "
             "memory returned or cited by a returned claim; answer recall: every expected answer in the returned "
             "text or dates. Latencies are one call in-process on a machine shared with the compile's services"
             + (f" (load average {results['load_average']['start'][0]} at the start, "
                f"{results['load_average']['end'][0]} at the end, on {os.cpu_count()} CPUs)"
                if "load_average" in results else "") + ".", ""]
    fmt: Callable[[float], str] = lambda v: f"{v:.2f}"  # noqa: E731
    for run_ in results["runs"]:
        lines += [f"## Seed {run_['seed']}: {run_['memories']} memories, {run_['questions']} questions", "",
                  f"Compiled offline (scripted planner) in {run_['compile_seconds']} s; embedding every claim from "
                  f"scratch takes {run_['embed_seconds']} s of it "
                  f"({100 * run_['embed_seconds'] / max(run_['compile_seconds'], 0.1):.1f} %), every memory "
                  f"{run_.get('memory_embed_seconds', 0)} s "
                  f"({100 * run_.get('memory_embed_seconds', 0) / max(run_['compile_seconds'], 0.1):.1f} %).", "",
                  "| retriever | evidence @500 | @1000 | @2000 | answer @500 | @1000 | @2000 | MRR | p50 ms | p95 ms |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for name, s in run_["retrievers"].items():
            ev, an = s["evidence_recall"], s["answer_recall"]
            lines.append(f"| {name} | " + " | ".join(fmt(ev[str(b)] if str(b) in ev else ev[b]) for b in BUDGETS) + " | "
                         + " | ".join(fmt(an[str(b)] if str(b) in an else an[b]) for b in BUDGETS)
                         + f" | {fmt(s['mrr'])} | {s['p50_ms']} | {s['p95_ms']} |")
        kinds = run_["retrievers"]["recall"]["by_kind"]
        lines += ["", "Evidence recall at 500 tokens by question kind: " + ", ".join(
            f"{k} {fmt(v)} (BM25 {fmt(run_['retrievers']['BM25 over raw memories']['by_kind'][k])})"
            for k, v in kinds.items()) + ".", "",
            "| recall without | evidence @500 | answer @500 |", "|---|---|---|"]
        lines += [f"| {name} | {fmt(v['evidence_recall'])} | {fmt(v['answer_recall'])} |"
                  for name, v in run_["without"].items()]
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.recall_eval")
    parser.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    parser.add_argument("--out", type=Path, help="write the results here only (no docs)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    results = asyncio.run(run(tuple(int(s) for s in args.seeds.split(","))))
    root = Path(__file__).resolve().parents[1]
    # The page reads the results as they are stored (JSON's lists and string keys).
    shown = publish(json.loads(json.dumps(results)), args.out, root / "evals" / "recall_results.json",
                    root / "docs" / "RECALL_EVAL.md", markdown)
    if shown is not None:
        print(shown)


if __name__ == "__main__":
    main()
