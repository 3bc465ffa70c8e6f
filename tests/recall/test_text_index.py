"""The in-memory index scores exactly as `domain.recall.bm25` over an OR query's documents, whatever
the documents and the question, and keeps doing so as documents are replaced and removed."""

import random

import pytest

from domain.recall import bm25
from domain.text_index import TextIndex

VOCABULARY = [f"w{i}" for i in range(60)]


def _document(rng: random.Random) -> dict[str, int]:
    return {lex: rng.randint(1, 4) for lex in rng.sample(VOCABULARY, rng.randint(1, 12))}


@pytest.mark.parametrize("seed", range(12))
def test_index_bm25_equals_bm25_over_the_or_matches(seed):
    rng = random.Random(seed)
    index = TextIndex()
    for i in range(rng.randint(1, 300)):
        index.upsert(f"d{i}", _document(rng))
    for _ in range(rng.randint(0, 40)):  # replaced and removed documents leave no trace in the postings
        key = f"d{rng.randrange(len(index) or 1)}"
        if rng.random() < 0.5:
            index.upsert(key, _document(rng))
        else:
            index.remove(key)
        if rng.random() < 0.3:  # a lexeme's arrays made now are dropped when one of its documents changes
            index.bm25(rng.sample(VOCABULARY, 3), len(index))
    for _ in range(20):
        question = rng.sample(VOCABULARY + ["absent"], rng.randint(1, 6)) * rng.randint(1, 2)
        total = len(index) + rng.randint(0, 50)
        expected = bm25(index.matches(question), total)
        assert index.bm25(question, total) == expected
    assert index.bm25(["absent"], 10) == {}
