"""An in-memory inverted index of one scope's texts (claims, or memories), built from the lexemes
Postgres stored for them (`search_tsv`), so recall scores every document holding any of a
question's lexemes with BM25 in microseconds instead of unnesting thousands of rows per question.

Documents are upserted and removed by key; `matches` returns every document holding any of the
lexemes (exactly what an OR query returns), ready for `domain.recall.bm25`; `bm25` computes the
same scores straight from the postings, without building a document list first (recall's path):
each lexeme's postings are kept as arrays (document slots and frequencies, made on first use and
dropped when a document holding the lexeme changes), so a question costs a few array operations
whatever the number of documents it matches.

The postings map each lexeme to {document: frequency}: dictionaries of strings and integers only,
which the garbage collector does not track, so a large index adds nothing to its collections.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np

from domain.recall import BM25_B, BM25_K1, TermDoc

# One entry of a tsvector's text form: 'lexeme' (a quote inside doubled), then its positions.
_ENTRY = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def parse_tsvector(value: str) -> dict[str, int]:
    """Each lexeme of a tsvector's text form with its frequency (its number of positions, 1 when
    the vector was stripped of them)."""
    return {match[1].replace("''", "'"): (match[2].count(",") + 1 if match[2] else 1)
            for match in _ENTRY.finditer(value)}


class TextIndex:
    def __init__(self) -> None:
        self._docs: dict[str, dict[str, int]] = {}
        self._postings: dict[str, dict[str, int]] = {}
        # Each document's slot in the arrays (a removed document's slot is not reused).
        self._slots: dict[str, int] = {}
        self._keys: list[str] = []
        self._lengths = np.zeros(0, dtype=np.float64)
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # lexeme -> (slots, frequencies)

    def __len__(self) -> int:
        return len(self._docs)

    def lexemes(self) -> list[str]:
        """Every lexeme the index holds (what a forget's inspection of the caches reads)."""
        return list(self._postings)

    def upsert(self, key: str, tf: dict[str, int]) -> None:
        self.remove(key)
        self._docs[key] = tf
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = len(self._keys)
            self._keys.append(key)
            if slot >= len(self._lengths):
                self._lengths = np.concatenate([self._lengths, np.zeros(max(slot + 1, 1024), dtype=np.float64)])
        self._lengths[slot] = max(len(tf), 1)
        for lexeme, count in tf.items():
            self._postings.setdefault(lexeme, {})[key] = count
            self._arrays.pop(lexeme, None)

    def remove(self, key: str) -> None:
        old = self._docs.pop(key, None)
        for lexeme in old or ():
            self._arrays.pop(lexeme, None)
            keys = self._postings.get(lexeme)
            if keys is not None:
                keys.pop(key, None)
                if not keys:
                    del self._postings[lexeme]

    def keys(self) -> Iterable[str]:
        return self._docs.keys()

    def _wanted(self, lexemes: Iterable[str]) -> list[str]:
        return [lex for lex in dict.fromkeys(lexemes) if lex in self._postings]

    def matches(self, lexemes: Iterable[str]) -> list[TermDoc]:
        """Every document holding any of `lexemes`, with the frequency of each of them in it and its
        length (its number of distinct lexemes, as Postgres' `length(tsvector)`)."""
        wanted = self._wanted(lexemes)
        found: set[str] = set()
        for lexeme in wanted:
            found.update(self._postings[lexeme])
        docs = []
        for key in sorted(found):
            tf = self._docs[key]
            docs.append(TermDoc(key=key, length=max(len(tf), 1), tf={lex: tf[lex] for lex in wanted if lex in tf}))
        return docs

    def _array(self, lexeme: str) -> tuple[np.ndarray, np.ndarray]:
        arrays = self._arrays.get(lexeme)
        if arrays is None:
            postings = self._postings[lexeme]
            slots = np.fromiter((self._slots[key] for key in postings), dtype=np.int64, count=len(postings))
            counts = np.fromiter(postings.values(), dtype=np.float64, count=len(postings))
            arrays = self._arrays[lexeme] = (slots, counts)
        return arrays

    def bm25(self, lexemes: Iterable[str], total_docs: int) -> dict[str, float]:
        """`domain.recall.bm25(self.matches(lexemes), total_docs)`, the same operations in the same
        order on arrays: a lexeme's document frequency is its postings' size, the average length is
        taken over the documents holding any of the lexemes, as there."""
        wanted = self._wanted(lexemes)
        if not wanted:
            return {}
        arrays = [self._array(lexeme) for lexeme in wanted]
        matched = np.unique(np.concatenate([slots for slots, _ in arrays]))
        n = max(total_docs, len(matched))
        average = float(self._lengths[matched].sum()) / len(matched)
        norms = np.zeros(len(self._keys), dtype=np.float64)
        norms[matched] = BM25_K1 * (1.0 - BM25_B + BM25_B * self._lengths[matched] / average)
        scores = np.zeros(len(self._keys), dtype=np.float64)
        for slots, counts in arrays:
            idf = math.log(1.0 + (n - len(slots) + 0.5) / (len(slots) + 0.5))
            scores[slots] += idf * counts * (BM25_K1 + 1.0) / (counts + norms[slots])
        keys = self._keys
        return {keys[slot]: score for slot, score in zip(matched.tolist(), scores[matched].tolist(), strict=True)}
