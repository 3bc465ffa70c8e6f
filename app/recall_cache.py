"""Recall's per-process indexes of a scope, kept under the scope's revision: the lexemes of its claims
and of its memories (`domain.text_index.TextIndex`, with the memories' times for their neighbours)
and the embeddings of both.

The rule every cache of the product keeps (store/scope_revisions.py): a kept value is served only
under the revision it was read at, the revision being read first, on the same connection. A recall
reads the scope's revision with the question's lexemes (one statement); an unchanged revision serves
everything kept as is, with no other read. A revision that moved brings each part up to date: the
rows changed since the newest change it has seen (less OVERLAP_SECONDS, for a writer whose
transaction began before that change and committed after it) are read and upserted, and one
statement of index-only counts tells whether a row went away, in which case that part is read whole
again. So a recall right after a retain, a compile batch or a forget sees it, and a scope is read
whole once per process, not per question. At most SCOPES_KEPT scopes are kept (least recently used
out first).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.process_caches import register
from domain.text_index import TextIndex, parse_tsvector
from planners.embeddings import Embedder
from store import recall_reads
from store.recall_reads import TextKind

SCOPES_KEPT = 32
QUESTIONS_KEPT = 256
OVERLAP_SECONDS = 60
# Memories said this close together (in the scope's time order) are each other's neighbours: the
# turns of one conversation, a question and its reply.
NEIGHBOUR_SECONDS = 600.0


@dataclass
class Texts:
    revision: int
    newest: datetime | None = None
    index: TextIndex = field(default_factory=TextIndex)
    happened: dict[str, datetime] = field(default_factory=dict)
    # By slot of the index: when each memory happened (seconds), and its neighbours' slots (-1: none).
    times: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    before: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    after: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def read(self, rows: list[recall_reads.TextRow]) -> None:
        for row in rows:
            self.index.upsert(row.id, parse_tsvector(row.lexemes))
            if row.happened is not None:
                self.happened[row.id] = row.happened
            if self.newest is None or row.changed > self.newest:
                self.newest = row.changed

    def link(self) -> None:
        """The neighbours of every memory: the memories just before and after it in time, when said
        within NEIGHBOUR_SECONDS of it."""
        slots = self.index.slots
        times = np.full(slots, np.inf)
        for key, when in self.happened.items():
            slot = self.index.slot_of(key)
            if slot is not None and when is not None:
                times[slot] = when.timestamp()
        held = np.flatnonzero(np.isfinite(times))
        order = held[np.argsort(times[held], kind="stable")]
        self.times = times
        self.before = np.full(slots, -1, dtype=np.int64)
        self.after = np.full(slots, -1, dtype=np.int64)
        if len(order) > 1:
            close = np.diff(times[order]) <= NEIGHBOUR_SECONDS
            self.after[order[:-1][close]] = order[1:][close]
            self.before[order[1:][close]] = order[:-1][close]


@dataclass
class Vectors:
    revision: int
    newest: datetime | None = None
    rows: dict[str, bytes] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))

    def read(self, rows: list[tuple[str, bytes, datetime]]) -> None:
        for key, vector, made in rows:
            self.rows[key] = vector
            if self.newest is None or made > self.newest:
                self.newest = made

    def stack(self) -> None:
        self.ids = sorted(self.rows)
        self.matrix = (np.frombuffer(b"".join(self.rows[i] for i in self.ids), dtype=np.float32)
                       .reshape(len(self.ids), -1) if self.ids else np.zeros((0, 0), dtype=np.float32))


@dataclass
class ScopeIndexes:
    claims: Texts
    memories: Texts
    claim_vectors: Vectors | None
    memory_vectors: Vectors | None


_TEXTS: OrderedDict[tuple[str, ...], Texts] = OrderedDict()  # (database, tenant, owner, kind)
_VECTORS: OrderedDict[tuple[str, ...], Vectors] = OrderedDict()  # (database, tenant, owner, kind, model/size)


def _database(conn: AsyncConnection) -> str:
    """Which database the scope lives in (a process may read several: the tests, the bench)."""
    return conn.engine.url.render_as_string(hide_password=True)


def _keep(cache: OrderedDict, key: tuple, value) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > SCOPES_KEPT * 2:
        cache.popitem(last=False)


def _since(newest: datetime | None) -> datetime | None:
    return newest - timedelta(seconds=OVERLAP_SECONDS) if newest is not None else None


async def indexes(conn: AsyncConnection, tenant: str, owner: str, revision: int,
                  model: Embedder | None) -> ScopeIndexes:
    """The scope's indexes as of `revision` (read before, on `conn`); the embeddings only with a model."""
    database = _database(conn)
    text_keys: dict[str, tuple[str, ...]] = {kind: (database, tenant, owner, kind) for kind in ("claims", "memories")}
    vector_keys: dict[str, tuple[str, ...]] = {kind: (database, tenant, owner, kind, f"{model.model}/{model.dimensions}")
                   for kind in ("claims", "memories")} if model is not None else {}
    kept_texts = {kind: _TEXTS.get(key) for kind, key in text_keys.items()}
    kept_vectors = {kind: _VECTORS.get(key) for kind, key in vector_keys.items()}
    behind = [part for part in [*kept_texts.values(), *kept_vectors.values()]
              if part is None or part.revision != revision]
    counts: dict[str, int] = {}
    if behind:
        counts = await recall_reads.row_counts(conn, tenant, owner, model.model if model else "",
                                               model.dimensions if model else 0)
    texts: dict[str, Texts] = {}
    for kind, key in text_keys.items():
        part = kept_texts[kind]
        if part is None or part.revision != revision:
            part = await _refreshed_texts(conn, tenant, owner, kind, part, revision, counts[kind])  # type: ignore[arg-type]
        _keep(_TEXTS, key, part)
        texts[kind] = part
    vectors: dict[str, Vectors] = {}
    for kind, key in vector_keys.items():
        found = kept_vectors[kind]
        if found is None or found.revision != revision:
            assert model is not None
            found = await _refreshed_vectors(conn, tenant, owner, kind, model, found,  # type: ignore[arg-type]
                                             revision, counts["claim_vectors" if kind == "claims" else "memory_vectors"])
        _keep(_VECTORS, key, found)
        vectors[kind] = found
    return ScopeIndexes(claims=texts["claims"], memories=texts["memories"], claim_vectors=vectors.get("claims"),
                        memory_vectors=vectors.get("memories"))


async def _refreshed_texts(conn: AsyncConnection, tenant: str, owner: str, kind: TextKind, kept: Texts | None,
                           revision: int, count: int) -> Texts:
    if kept is not None and kept.newest is not None:
        kept.read(await recall_reads.text_rows(conn, tenant, owner, kind, _since(kept.newest)))
        if len(kept.index) == count:
            kept.revision = revision
            if kind == "memories":
                kept.link()
            return kept
    fresh = Texts(revision=revision)
    fresh.read(await recall_reads.text_rows(conn, tenant, owner, kind))
    if kind == "memories":
        fresh.link()
    return fresh


async def _refreshed_vectors(conn: AsyncConnection, tenant: str, owner: str, kind: TextKind, model: Embedder,
                             kept: Vectors | None, revision: int, count: int) -> Vectors:
    current = kept if kept is not None and kept.newest is not None else Vectors(revision=revision)
    current.read(await recall_reads.vector_rows(conn, tenant, owner, kind, model.model, model.dimensions,
                                                _since(current.newest)))
    if len(current.rows) != count:  # an embedding went away with its row: read them all again
        current = Vectors(revision=revision)
        current.read(await recall_reads.vector_rows(conn, tenant, owner, kind, model.model, model.dimensions))
    current.revision = revision
    current.stack()
    return current


_QUESTIONS: OrderedDict[tuple[str, int, str], np.ndarray] = OrderedDict()


async def question_vector(model: Embedder, question: str) -> np.ndarray:
    """The question's embedding by `model`: a provider's is asked off the event loop, and the last
    QUESTIONS_KEPT questions' are kept (an agent often asks the same question again)."""
    key = (model.model, model.dimensions, question)
    kept = _QUESTIONS.get(key)
    if kept is not None:
        _QUESTIONS.move_to_end(key)
        return kept
    if model.remote:
        vector = (await asyncio.to_thread(model.embed, [question], "query"))[0]
    else:
        vector = model.embed([question], "query")[0]
    _QUESTIONS[key] = vector
    while len(_QUESTIONS) > QUESTIONS_KEPT:
        _QUESTIONS.popitem(last=False)
    return vector


class _RecallCaches:
    """Recall's indexes as a forget sees them (domain/process_caches.py): they hold memory lexemes."""

    name = "recall indexes"

    def evict_scope(self, tenant: str, owner: str) -> None:
        for cache in (_TEXTS, _VECTORS):
            for key in [k for k in list(cache) if k[1] == tenant and k[2] == owner]:
                cache.pop(key, None)
        _QUESTIONS.clear()  # not kept by scope, and a question may name what was forgotten

    def clear(self) -> None:
        for cache in (_TEXTS, _VECTORS, _QUESTIONS):
            cache.clear()

    def texts(self) -> Iterator[str]:
        for kept in list(_TEXTS.values()):
            yield " ".join(kept.index.all_lexemes())
        for _, _, question in list(_QUESTIONS):
            yield question


register(_RecallCaches(), module_level=True)
