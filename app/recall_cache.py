"""Recall's per-process indexes of a scope: the lexemes of its claims and of its memories
(`domain.text_index.TextIndex`) and its claim embeddings, kept between calls and brought up to date
at every call.

Each call first reads the scope's version of each (how many rows, the newest change: one indexed
aggregate). Unchanged: the index is used as is. Grown or changed: only the rows changed since the
newest change the index has seen are read and upserted; if the index then does not hold exactly
as many rows as the scope (a row was deleted), it is rebuilt from every row. So a recall right
after a retain or a compile sees it, and a scope is read whole once per process, not per question.
At most SCOPES_KEPT scopes are kept (least recently used out first).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.process_caches import register
from domain.text_index import TextIndex, parse_tsvector
from planners.embeddings import Embedder
from store import recall_reads
from store.recall_reads import TextKind, TextVersion

SCOPES_KEPT = 32
QUESTIONS_KEPT = 256


@dataclass
class _Texts:
    version: TextVersion
    index: TextIndex = field(default_factory=TextIndex)
    happened: dict[str, datetime] = field(default_factory=dict)


@dataclass
class _Vectors:
    version: TextVersion
    rows: dict[str, bytes] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))


_TEXTS: OrderedDict[tuple[str, str, str, str], _Texts] = OrderedDict()
_VECTORS: OrderedDict[tuple[str, str, str, str], _Vectors] = OrderedDict()  # (database, tenant, owner, model/size)


def _database(conn: AsyncConnection) -> str:
    """Which database the scope lives in (a process may read several: the tests, the bench)."""
    return conn.engine.url.render_as_string(hide_password=True)


def _keep(cache: OrderedDict, key: tuple, value) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > SCOPES_KEPT:
        cache.popitem(last=False)


async def texts(conn: AsyncConnection, tenant: str, owner: str, kind: TextKind,
                version: TextVersion | None = None) -> _Texts:
    """The scope's `kind` texts as an index, current as of `version` (read now when not given)."""
    key = (_database(conn), tenant, owner, kind)
    version = version or await recall_reads.text_version(conn, tenant, owner, kind)
    cached = _TEXTS.get(key)
    if cached is not None and cached.version == version:
        _TEXTS.move_to_end(key)
        return cached
    if cached is not None and cached.version.newest is not None:
        for row in await recall_reads.text_rows(conn, tenant, owner, kind, cached.version.newest):
            cached.index.upsert(row.id, parse_tsvector(row.lexemes))
            if row.happened is not None:
                cached.happened[row.id] = row.happened
        if len(cached.index) == version.count:
            cached.version = version
            _keep(_TEXTS, key, cached)
            return cached
    fresh = _Texts(version=version)
    for row in await recall_reads.text_rows(conn, tenant, owner, kind):
        fresh.index.upsert(row.id, parse_tsvector(row.lexemes))
        if row.happened is not None:
            fresh.happened[row.id] = row.happened
    _keep(_TEXTS, key, fresh)
    return fresh


async def vectors(conn: AsyncConnection, tenant: str, owner: str, model: str, dimensions: int,
                  version: TextVersion | None = None) -> _Vectors:
    """The scope's claim embeddings by `model` at `dimensions`, as one matrix (rows in the order of `ids`)."""
    key = (_database(conn), tenant, owner, f"{model}/{dimensions}")
    version = version or await recall_reads.vector_version(conn, tenant, owner, model, dimensions)
    cached = _VECTORS.get(key)
    if cached is not None and cached.version == version:
        _VECTORS.move_to_end(key)
        return cached
    since = cached.version.newest if cached is not None else None
    current = cached if cached is not None and since is not None else _Vectors(version=version)
    current.rows.update(await recall_reads.vector_rows(conn, tenant, owner, model, dimensions, since))
    if len(current.rows) != version.count:  # an embedding was deleted with its claim: read them all again
        current = _Vectors(version=version, rows=dict(await recall_reads.vector_rows(conn, tenant, owner, model,
                                                                                   dimensions)))
    current.version = version
    current.ids = sorted(current.rows)
    current.matrix = (np.frombuffer(b"".join(current.rows[i] for i in current.ids), dtype=np.float32)
                      .reshape(len(current.ids), -1) if current.ids else np.zeros((0, 0), dtype=np.float32))
    _keep(_VECTORS, key, current)
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
            yield " ".join(kept.index.lexemes())
        for _, _, question in list(_QUESTIONS):
            yield question


register(_RecallCaches(), module_level=True)
