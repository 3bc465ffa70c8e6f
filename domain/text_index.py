"""The product's one BM25: an in-memory inverted index of one scope's texts (claims, or memories),
built from the lexemes Postgres stored for them (`search_tsv`), scoring every document that holds
any of a question's lexemes.

Okapi BM25 in Lucene's form (the form of the `bm25s` package, which the tests hold it to): a lexeme's
weight is log(1 + (N - df + 0.5) / (df + 0.5)), a document's term component tf / (tf + k1 (1 - b + b
dl / avgdl)), dl the document's lexeme count and avgdl the collection's mean. It is kept here rather
than scored by `bm25s` itself because recall's index changes with every retain and every compile
batch: `bm25s` builds its index whole (173 ms for 10,000 memories on this machine, measured), where
an upsert here costs microseconds and a question a tenth of a millisecond.

Documents are upserted and removed by key. Each lexeme's postings are kept as arrays (document
slots and frequencies, made on first use and dropped when a document holding the lexeme changes),
so a question costs a few array operations whatever the number of documents it matches. The
postings map each lexeme to {document: frequency}: dictionaries of strings and integers only, which
the garbage collector does not track, so a large index adds nothing to its collections.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable

import numpy as np

BM25_K1 = 1.2
BM25_B = 0.75

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
        # Each document's slot in the arrays (a removed document's slot is not reused until a rebuild).
        self._slots: dict[str, int] = {}
        self._keys: list[str] = []
        self._lengths = np.zeros(0, dtype=np.float64)
        self._total_length = 0.0
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # lexeme -> (slots, frequencies)
        self._vocabulary: list[str] | None = None  # the lexemes in order, for prefixes (made on first use)

    def __len__(self) -> int:
        return len(self._docs)

    def all_lexemes(self) -> list[str]:
        """Every lexeme the index holds (what a forget's inspection of the caches reads)."""
        return list(self._postings)

    @property
    def slots(self) -> int:
        """How many slots the score arrays have (documents ever held, removed ones included)."""
        return len(self._keys)

    def key_of(self, slot: int) -> str:
        return self._keys[slot]

    def slot_of(self, key: str) -> int | None:
        return self._slots.get(key) if key in self._docs else None

    def upsert(self, key: str, tf: dict[str, int]) -> None:
        self.remove(key)
        self._docs[key] = tf
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = len(self._keys)
            self._keys.append(key)
            if slot >= len(self._lengths):
                self._lengths = np.concatenate([self._lengths, np.zeros(max(slot + 1, 1024), dtype=np.float64)])
        length = float(max(sum(tf.values()), 1))
        self._lengths[slot] = length
        self._total_length += length
        for lexeme, count in tf.items():
            if lexeme not in self._postings:
                self._vocabulary = None
            self._postings.setdefault(lexeme, {})[key] = count
            self._arrays.pop(lexeme, None)

    def remove(self, key: str) -> None:
        old = self._docs.pop(key, None)
        if old is None:
            return
        slot = self._slots[key]
        self._total_length -= self._lengths[slot]
        self._lengths[slot] = 0.0
        for lexeme in old:
            self._arrays.pop(lexeme, None)
            keys = self._postings.get(lexeme)
            if keys is not None:
                keys.pop(key, None)
                if not keys:
                    del self._postings[lexeme]
                    self._vocabulary = None

    def lexemes(self, key: str) -> dict[str, int]:
        return self._docs.get(key, {})

    def with_prefixes(self, lexemes: Iterable[str]) -> list[str]:
        """The lexemes and every lexeme of the index that starts with one of them ("empan" finds
        "empanada"), for a search whose words may be cut short."""
        if self._vocabulary is None:
            self._vocabulary = sorted(self._postings)
        found: list[str] = []
        for lexeme in dict.fromkeys(lexemes):
            found.append(lexeme)
            start = bisect.bisect_left(self._vocabulary, lexeme)
            for candidate in self._vocabulary[start:]:
                if not candidate.startswith(lexeme):
                    break
                found.append(candidate)
        return list(dict.fromkeys(found))

    def _array(self, lexeme: str) -> tuple[np.ndarray, np.ndarray]:
        arrays = self._arrays.get(lexeme)
        if arrays is None:
            postings = self._postings[lexeme]
            slots = np.fromiter((self._slots[key] for key in postings), dtype=np.int64, count=len(postings))
            counts = np.fromiter(postings.values(), dtype=np.float64, count=len(postings))
            arrays = self._arrays[lexeme] = (slots, counts)
        return arrays

    def score_array(self, lexemes: Iterable[str]) -> np.ndarray:
        """Every slot's BM25 score for the question whose lexemes these are (0 where a document holds
        none of them, or was removed)."""
        scores = np.zeros(len(self._keys), dtype=np.float64)
        wanted = [lex for lex in dict.fromkeys(lexemes) if lex in self._postings]
        if not wanted or not self._docs:
            return scores
        n = len(self._docs)
        average = self._total_length / n
        for lexeme in wanted:
            slots, counts = self._array(lexeme)
            idf = math.log(1.0 + (n - len(slots) + 0.5) / (len(slots) + 0.5))
            norms = BM25_K1 * (1.0 - BM25_B + BM25_B * self._lengths[slots] / average)
            scores[slots] += idf * counts / (counts + norms)
        return scores

    def bm25(self, lexemes: Iterable[str]) -> dict[str, float]:
        """The BM25 score of every document holding any of `lexemes`, by key."""
        scores = self.score_array(lexemes)
        matched = np.flatnonzero(scores > 0.0)
        keys = self._keys
        return {keys[slot]: score for slot, score in zip(matched.tolist(), scores[matched].tolist(), strict=True)}
