"""An in-memory inverted index of one scope's texts (claims, or memories), built from the lexemes
Postgres stored for them (`search_tsv`), so recall scores every document holding any of a
question's lexemes with BM25 in microseconds instead of unnesting thousands of rows per question.

Documents are upserted and removed by key; `matches` returns every document holding any of the
lexemes (exactly what an OR query returns), ready for `domain.recall.bm25`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from domain.recall import TermDoc

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
        self._postings: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._docs)

    def upsert(self, key: str, tf: dict[str, int]) -> None:
        self.remove(key)
        self._docs[key] = tf
        for lexeme in tf:
            self._postings.setdefault(lexeme, set()).add(key)

    def remove(self, key: str) -> None:
        old = self._docs.pop(key, None)
        for lexeme in old or ():
            keys = self._postings.get(lexeme)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._postings[lexeme]

    def keys(self) -> Iterable[str]:
        return self._docs.keys()

    def matches(self, lexemes: Iterable[str]) -> list[TermDoc]:
        """Every document holding any of `lexemes`, with the frequency of each of them in it and its
        length (its number of distinct lexemes, as Postgres' `length(tsvector)`)."""
        wanted = [lex for lex in dict.fromkeys(lexemes) if lex in self._postings]
        found: set[str] = set()
        for lexeme in wanted:
            found |= self._postings[lexeme]
        docs = []
        for key in sorted(found):
            tf = self._docs[key]
            docs.append(TermDoc(key=key, length=max(len(tf), 1), tf={lex: tf[lex] for lex in wanted if lex in tf}))
        return docs
