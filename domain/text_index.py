"""An in-memory inverted index of one scope's texts (claims, or memories), built from the lexemes
Postgres stored for them (`search_tsv`), so recall scores every document holding any of a
question's lexemes with BM25 in microseconds instead of unnesting thousands of rows per question.

Documents are upserted and removed by key; `matches` returns every document holding any of the
lexemes (exactly what an OR query returns), ready for `domain.recall.bm25`; `bm25` computes the
same scores straight from the postings, without building a document list first (recall's path).

The postings map each lexeme to {document: frequency}: dictionaries of strings and integers only,
which the garbage collector does not track, so a large index adds nothing to its collections.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

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

    def __len__(self) -> int:
        return len(self._docs)

    def upsert(self, key: str, tf: dict[str, int]) -> None:
        self.remove(key)
        self._docs[key] = tf
        for lexeme, count in tf.items():
            self._postings.setdefault(lexeme, {})[key] = count

    def remove(self, key: str) -> None:
        old = self._docs.pop(key, None)
        for lexeme in old or ():
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

    def bm25(self, lexemes: Iterable[str], total_docs: int) -> dict[str, float]:
        """`domain.recall.bm25(self.matches(lexemes), total_docs)`, computed lexeme by lexeme from the
        postings: a lexeme's document frequency is its postings' size, the average length is taken
        over the documents holding any of the lexemes, as there."""
        wanted = self._wanted(lexemes)
        if not wanted:
            return {}
        lengths: dict[str, int] = {}
        for lexeme in wanted:
            for key in self._postings[lexeme]:
                if key not in lengths:
                    lengths[key] = max(len(self._docs[key]), 1)
        n = max(total_docs, len(lengths))
        average = sum(lengths.values()) / len(lengths)
        norms = {key: BM25_K1 * (1.0 - BM25_B + BM25_B * length / average) for key, length in lengths.items()}
        scores: dict[str, float] = {}
        for lexeme in wanted:
            postings = self._postings[lexeme]
            count = len(postings)
            idf = math.log(1.0 + (n - count + 0.5) / (count + 0.5))
            for key, tf in postings.items():
                scores[key] = scores.get(key, 0.0) + idf * tf * (BM25_K1 + 1.0) / (tf + norms[key])
        return scores
