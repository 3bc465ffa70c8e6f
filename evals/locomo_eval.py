"""Recall on real conversations: the LoCoMo development conversations (evals/locomo_data.py), asked
over HTTP as an agent would, against BM25 and a BM25 + embedding hybrid over the same raw memories.

Reads ../shared/data/locomo-dev/ (or LOCOMO_DIR): the data is CC BY-NC and never copied into the
repository; without it this eval says so and writes nothing.

Each conversation goes into a scope of its own in each of two shapes (its observations as plain
memories; its dialogue turns, "Speaker: text", one memory each), compiled offline (the scripted
planner, memories and claims embedded by the compile). Every question of categories 1-4 is asked
with GET /v1/recall?q=…&max_tokens=N (N = 500, 1,000, 2,000), honouring 429 and Retry-After, and
the body is scored as received:

- found (evidence recall): an answer of the body cites one of the question's evidence memories (a
  memory's `id`, a claim's `memories`, a condensed claim's `memory`);
- answer in text: at least half the content words of the benchmark's answer are words of the body's
  texts and dates;
- body: its length in characters.

The baselines rank the same raw memories and send them in the same compact shape, packed into the
same budget by the same rule (domain/recall_body.py): BM25 (`bm25s`, Lucene's form, Snowball stems,
Lucene's stop words) and a hybrid of it with the static embedding (reciprocal-rank fusion, k = 60).
In the observations shape some questions name turns no observation stands for: they are counted
apart ("answerable" holds only those with an evidence memory).

Recall's free parameters (domain/recall.py `Tuning`) are not fitted here: each fold keeps one
conversation out, picks the grid point that finds the most evidence at 500 tokens on the other two
(both shapes), and reports it on the conversation kept out, beside the figure of the shipped
parameters. The shipped ones were picked the same way on all three with the generated eval's
development seed.

    python -m evals.locomo_eval [--out FILE] [--no-tuning]
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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import Any

import bm25s
import httpx
import numpy as np
import Stemmer
import uvicorn
from sqlalchemy.ext.asyncio import AsyncEngine

from app.reads import ReadScope
from app.recall import recall_variants
from app.tokens import issue_token
from app.worker import build_worker
from domain.memory import MemoryIn
from domain.recall import DEFAULT_TUNING, RANKINGS, RETRIEVERS, Tuning
from domain.recall_body import Candidate, pack_json
from domain.recall_dates import day_text
from evals import locomo_data
from evals.locomo_data import CATEGORIES, SHAPES, Conversation, LocomoMissing, Question, Shape
from evals.run import private_services, publish
from planners.embeddings import static_embedder
from runtime.devservices import free_port
from runtime.settings import Settings
from runtime.temporal_client import signal_compile
from servers.http_api import create_app
from store.memories import store_memories

BUDGETS = (500, 1000, 2000)
TUNING_BUDGET = 500
GRID = [Tuning(claims=c, semantic=s, neighbours=n)
        for n, c, s in product((0.0, 0.5, 1.0), (0.25, 0.5, 1.0), (0.0, 0.5, 1.0))]
SYSTEMS = ("recall", "BM25", "hybrid")
_WORD = re.compile(r"[^\W_]+")
STOPWORDS = frozenset(bm25s.stopwords.STOPWORDS_EN)
log = logging.getLogger("evals.locomo")


def content_words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOPWORDS}


def answer_in(answer: str, texts: str) -> bool:
    """At least half the answer's content words are words of `texts`."""
    wanted = content_words(answer)
    return bool(wanted) and 2 * len(wanted & content_words(texts)) >= len(wanted)


def body_reach(body: str) -> tuple[set[str], str]:
    """The memory ids a body's answers cite, and its words (texts and dates)."""
    results = json.loads(body)["results"]
    ids: set[str] = set()
    words: list[str] = []
    for item in results:
        ids.update([item["id"]] if item.get("id") else [])
        ids.update(item.get("memories") or [])
        words += [item.get("text", ""), item.get("date", "")]
        if item.get("memory"):
            ids.add(item["memory"]["id"])
            words += [item["memory"]["text"], item["memory"]["date"]]
    return ids, "\n".join(words)


@dataclass
class Scored:
    found: bool
    answered: bool
    chars: int


def score(body: str, evidence: set[str], answer: str) -> Scored:
    ids, words = body_reach(body)
    return Scored(found=bool(ids & evidence), answered=answer_in(answer, words), chars=len(body))


class Baselines:
    """BM25 and the BM25 + embedding hybrid over one scope's raw memories."""

    def __init__(self, memories: list[locomo_data.Memory]) -> None:
        self.memories = memories
        self.stemmer = Stemmer.Stemmer("english")
        self.index = bm25s.BM25(method="lucene")
        self.index.index(self._tokens([m.content for m in memories]), show_progress=False)
        self.vectors = static_embedder().embed([m.content for m in memories])

    def _tokens(self, texts: list[str], ids: bool = True) -> Any:
        return bm25s.tokenize(texts, stopwords=list(STOPWORDS), stemmer=self.stemmer, show_progress=False,
                              return_ids=ids)

    def rankings(self, question: str) -> dict[str, list[int]]:
        asked = self.index.get_tokens_ids(self._tokens([question], ids=False)[0])
        scores = self.index.get_scores(asked) if asked else np.zeros(len(self.memories))
        lexical = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]
        similar = self.vectors @ static_embedder().embed([question], "query")[0]
        semantic = [int(i) for i in np.argsort(-similar, kind="stable")]
        fused: dict[int, float] = {}
        for ranking in (lexical, semantic):
            for rank, index in enumerate(ranking, 1):
                fused[index] = fused.get(index, 0.0) + 1.0 / (60 + rank)
        return {"BM25": lexical, "hybrid": sorted(fused, key=lambda i: -fused[i])}

    def body(self, order: list[int], max_tokens: int) -> str:
        candidates = [Candidate(item={"kind": "memory", "id": m.id, "date": day_text(m.occurred_at), "text": m.content},
                                text=m.content) for m in (self.memories[i] for i in order[:200])]
        return pack_json({"max_tokens": max_tokens}, candidates, max_tokens).text


async def _compile(client, engine: AsyncEngine, memories: list[locomo_data.Memory], scope: ReadScope) -> float:
    settings = Settings(WIKI_LLM="scripted", WIKI_DEBOUNCE_SECONDS=0, WIKI_TASK_QUEUE=f"locomo-{uuid.uuid4()}")
    await store_memories(engine, scope.tenant, scope.owner, [MemoryIn(id=m.id, content=m.content,
                                                                      occurred_at=m.occurred_at) for m in memories])
    started = time.monotonic()
    async with build_worker(client, engine, settings):
        handle = await signal_compile(client, scope.tenant, scope.owner, trigger="admin", settings=settings)
        await handle.result()
    return time.monotonic() - started


async def _ask(http: httpx.AsyncClient, token: str, question: str, max_tokens: int) -> tuple[str, float]:
    """The body as received, and the request's time (429: wait as Retry-After says, then ask again)."""
    for _ in range(100):
        started = time.perf_counter()
        response = await http.get("/v1/recall", params={"q": question, "max_tokens": max_tokens},
                                  headers={"Authorization": f"Bearer {token}"})
        took = (time.perf_counter() - started) * 1000
        if response.status_code == 429 or response.status_code == 503:
            await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
            continue
        response.raise_for_status()
        return response.text, took
    raise RuntimeError("the server kept refusing")


@dataclass
class Case:
    conversation: str
    shape: Shape
    question: Question
    evidence: set[str]
    scores: dict[str, dict[int, Scored]] = field(default_factory=dict)  # system -> budget -> score
    grid: list[Scored] = field(default_factory=list)  # recall at TUNING_BUDGET under each GRID point
    without: dict[str, Scored] = field(default_factory=dict)


def _rate(cases: list[Case], pick) -> float | None:
    values = [pick(c) for c in cases]
    return round(statistics.fmean(values), 3) if values else None


@asynccontextmanager
async def _serving(app) -> AsyncIterator[str]:
    """`app` served by uvicorn on a free loopback port until the block ends."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(400):
            if server.started or task.done():
                break
            await asyncio.sleep(0.05)
        if task.done():
            task.result()
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, timeout=20)


async def evaluate(client, engine: AsyncEngine, conversations: list[Conversation], tune: bool = True) -> dict:
    settings = Settings(WIKI_LLM="scripted", WIKI_DEBOUNCE_SECONDS=0)
    static_embedder()
    cases: list[Case] = []
    compiles: dict[str, float] = {}
    latencies: list[float] = []
    scopes: dict[tuple[str, str], tuple[ReadScope, str]] = {}
    for conversation, shape in product(conversations, SHAPES):
        scope = ReadScope.of("locomo", f"{conversation.sample_id}-{shape}")
        seconds = await _compile(client, engine, conversation.memories[shape], scope)
        compiles[f"{conversation.sample_id}/{shape}"] = round(seconds, 1)
        async with engine.begin() as conn:
            token = (await issue_token(conn, scope.tenant, scope.owner, name="locomo-eval")).token
        scopes[(conversation.sample_id, shape)] = (scope, token)
        log.info("%s/%s: %d memories compiled in %.1f s", conversation.sample_id, shape,
                 len(conversation.memories[shape]), seconds)
    async def connect_temporal():
        return client

    async with _serving(create_app(engine, connect_temporal, settings)) as url, \
            httpx.AsyncClient(base_url=url, timeout=60) as http:
        for conversation, shape in product(conversations, SHAPES):
            scope, token = scopes[(conversation.sample_id, shape)]
            baselines = Baselines(conversation.memories[shape])
            log.info("asking %s/%s over HTTP", conversation.sample_id, shape)
            for question in conversation.questions:
                case = Case(conversation=conversation.sample_id, shape=shape, question=question,
                            evidence=conversation.evidence_memories(shape, question))
                orders = baselines.rankings(question.question)
                for budget in BUDGETS:
                    body, took = await _ask(http, token, question.question, budget)
                    if budget == TUNING_BUDGET:
                        latencies.append(took)
                    case.scores.setdefault("recall", {})[budget] = score(body, case.evidence, question.answer)
                    for system, order in orders.items():
                        case.scores.setdefault(system, {})[budget] = score(baselines.body(order, budget),
                                                                           case.evidence, question.answer)
                cases.append(case)
    if tune:
        # The grid and the ablation (each retriever's rankings left out of the fusion) in one call per
        # question: the retrievers run once per neighbour share.
        ablation = [replace(DEFAULT_TUNING, off=frozenset(RANKINGS[r])) for r in RETRIEVERS]
        for number, case in enumerate(cases):
            scope, _ = scopes[(case.conversation, case.shape)]
            variants = await recall_variants(engine, scope, case.question.question, TUNING_BUDGET,
                                             [*GRID, *ablation], embedder=static_embedder)
            scored = [score(v.body, case.evidence, case.question.answer) for v in variants]
            case.grid = scored[:len(GRID)]
            case.without = dict(zip(RETRIEVERS, scored[len(GRID):], strict=True))
            if number % 100 == 0:
                log.info("tuning: %d of %d questions", number, len(cases))
    return _report(conversations, cases, compiles, latencies, tune)


def _answerable(cases: list[Case]) -> list[Case]:
    return [c for c in cases if c.evidence]


def _figures(cases: list[Case], system: str, budget: int) -> dict[str, Any]:
    answerable = _answerable(cases)
    return {"found": _rate(answerable, lambda c: c.scores[system][budget].found),
            "answered": _rate(answerable, lambda c: c.scores[system][budget].answered),
            "answered_all": _rate(cases, lambda c: c.scores[system][budget].answered),
            "mean_chars": round(statistics.fmean(c.scores[system][budget].chars for c in cases), 1),
            "max_chars": max(c.scores[system][budget].chars for c in cases)}


def _grid_value(cases: list[Case], index: int) -> tuple[float, float]:
    answerable = _answerable(cases)
    return (statistics.fmean(c.grid[index].found for c in answerable),
            statistics.fmean(c.grid[index].answered for c in answerable))


def _report(conversations: list[Conversation], cases: list[Case], compiles: dict[str, float],
            latencies: list[float], tune: bool) -> dict:
    shapes: dict[str, Any] = {}
    for shape in SHAPES:
        mine = [c for c in cases if c.shape == shape]
        shapes[shape] = {
            "questions": len(mine), "answerable": len(_answerable(mine)),
            "systems": {system: {str(b): _figures(mine, system, b) for b in BUDGETS} for system in SYSTEMS},
            "per_conversation": {conv.sample_id: {system: _figures([c for c in mine if c.conversation == conv.sample_id],
                                                                   system, TUNING_BUDGET) for system in SYSTEMS}
                                 for conv in conversations},
            "per_category": {CATEGORIES[k]: {system: _figures([c for c in mine if c.question.category == k], system,
                                                              TUNING_BUDGET) for system in SYSTEMS}
                             for k in sorted({c.question.category for c in mine})}}
        if tune and mine[0].without:
            shapes[shape]["without"] = {r: {"found": _rate(_answerable(mine), lambda c, r=r: c.without[r].found),
                                            "answered": _rate(_answerable(mine), lambda c, r=r: c.without[r].answered)}
                                        for r in RETRIEVERS}
    report: dict[str, Any] = {"budgets_tokens": list(BUDGETS), "shapes": shapes, "compile_seconds": compiles,
                              "latency_ms": {"p50": round(statistics.median(latencies), 1),
                                             "p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 1)},
                              "load_average": [round(v, 2) for v in os.getloadavg()],
                              "shipped_tuning": _tuning_dict(DEFAULT_TUNING)}
    if tune:
        report["folds"] = _folds(conversations, cases)
    return report


def _tuning_dict(tuning: Tuning) -> dict[str, float]:
    return {"claims": tuning.claims, "semantic": tuning.semantic, "neighbours": tuning.neighbours}


def _folds(conversations: list[Conversation], cases: list[Case]) -> dict[str, Any]:
    """Leave one conversation out: the grid point best on the other two (evidence found at 500 tokens,
    then answers in text), scored on the one kept out; and the best on all three (in sample)."""
    folds: dict[str, Any] = {}
    shipped = GRID.index(DEFAULT_TUNING) if DEFAULT_TUNING in GRID else None
    for kept_out in conversations:
        train = [c for c in cases if c.conversation != kept_out.sample_id]
        test = [c for c in cases if c.conversation == kept_out.sample_id]
        best = max(range(len(GRID)), key=lambda i: _grid_value(train, i))
        folds[kept_out.sample_id] = {
            "chosen": _tuning_dict(GRID[best]),
            "held_out": {shape: _grid_point([c for c in test if c.shape == shape], best) for shape in SHAPES},
            "shipped": {shape: _grid_point([c for c in test if c.shape == shape], shipped) for shape in SHAPES}
            if shipped is not None else None}
    best_all = max(range(len(GRID)), key=lambda i: _grid_value(cases, i))
    folds["all"] = {"chosen": _tuning_dict(GRID[best_all]),
                    "in_sample": {shape: _grid_point([c for c in cases if c.shape == shape], best_all)
                                  for shape in SHAPES},
                    "grid": [{**_tuning_dict(t), "found": round(_grid_value(cases, i)[0], 3),
                              "answered": round(_grid_value(cases, i)[1], 3)} for i, t in enumerate(GRID)]}
    return folds


def _grid_point(cases: list[Case], index: int | None) -> dict[str, float] | None:
    if index is None or not _answerable(cases):
        return None
    found, answered = _grid_value(cases, index)
    return {"found": round(found, 3), "answered": round(answered, 3)}


async def run(tune: bool = True) -> dict | None:
    try:
        conversations = locomo_data.load()
    except LocomoMissing as missing:
        log.warning("LoCoMo eval skipped: %s", missing)
        return None
    async with private_services("wiki-locomo-eval-") as (client, engine):
        return await evaluate(client, engine, conversations, tune)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.locomo_eval")
    parser.add_argument("--out", type=Path, help="write the results here only (no docs)")
    parser.add_argument("--no-tuning", action="store_true", help="skip the grid and the ablation")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    results = asyncio.run(run(not args.no_tuning))
    if results is None:
        print("LoCoMo data not found: set LOCOMO_DIR, or put it in ../shared/data/locomo-dev/; nothing written")
        return
    from evals.locomo_report import markdown

    root = Path(__file__).resolve().parents[1]
    shown = publish(results, args.out, root / "evals" / "locomo_results.json", root / "docs" / "RECALL_LOCOMO.md",
                    markdown, indent=1)
    if shown is not None:
        print(shown)


if __name__ == "__main__":
    main()
