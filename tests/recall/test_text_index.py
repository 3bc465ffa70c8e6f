"""The product's one BM25 (`domain.text_index.TextIndex`) scores as the maintained `bm25s` package
does (Lucene's form), whatever the documents and the question, and keeps doing so as documents are
replaced and removed; and no other module of the product defines a BM25."""

import random
import re
from pathlib import Path

import bm25s
import numpy as np
import pytest

from domain.text_index import TextIndex

VOCABULARY = [f"w{i}" for i in range(60)]
ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("domain", "messages", "store", "planners", "activities", "workflows", "runtime", "app", "cli", "servers")


def _document(rng: random.Random) -> dict[str, int]:
    return {lex: rng.randint(1, 4) for lex in rng.sample(VOCABULARY, rng.randint(1, 12))}


def _oracle(docs: dict[str, dict[str, int]], question: list[str]) -> dict[str, float]:
    keys = sorted(docs)
    vocabulary = {lex: i for i, lex in enumerate(VOCABULARY)}
    corpus = [[vocabulary[lex] for lex, n in docs[k].items() for _ in range(n)] for k in keys]
    index = bm25s.BM25(method="lucene", k1=1.2, b=0.75, dtype="float64")
    index.index(bm25s.tokenization.Tokenized(ids=corpus, vocab=vocabulary), show_progress=False)
    wanted = [vocabulary[lex] for lex in dict.fromkeys(question) if lex in vocabulary
              and any(lex in d for d in docs.values())]
    scores = index.get_scores(wanted) if wanted else np.zeros(len(keys))
    return {k: float(s) for k, s in zip(keys, scores, strict=True) if s > 0}


@pytest.mark.parametrize("seed", range(12))
def test_the_index_scores_as_bm25s_does(seed):
    rng = random.Random(seed)
    index = TextIndex()
    docs: dict[str, dict[str, int]] = {}
    for i in range(rng.randint(1, 300)):
        docs[f"d{i}"] = _document(rng)
        index.upsert(f"d{i}", docs[f"d{i}"])
    for _ in range(rng.randint(0, 40)):  # replaced and removed documents leave no trace in the postings
        key = f"d{rng.randrange(300)}"
        if rng.random() < 0.5:
            docs[key] = _document(rng)
            index.upsert(key, docs[key])
        else:
            docs.pop(key, None)
            index.remove(key)
        if rng.random() < 0.3:  # a lexeme's arrays made now are dropped when one of its documents changes
            index.bm25(rng.sample(VOCABULARY, 3))
    for _ in range(20):
        question = rng.sample(VOCABULARY + ["absent"], rng.randint(1, 6)) * rng.randint(1, 2)
        expected = _oracle(docs, question) if docs else {}
        found = index.bm25(question)
        assert found.keys() == expected.keys()
        assert all(found[k] == pytest.approx(v, rel=1e-9) for k, v in expected.items())
    assert index.bm25(["absent"]) == {}


def test_a_prefix_finds_the_words_it_begins():
    index = TextIndex()
    index.upsert("a", {"empanada": 1, "carn": 1})
    index.upsert("b", {"empir": 2})
    assert index.with_prefixes(["empan"]) == ["empan", "empanada"]
    assert set(index.with_prefixes(["emp", "zzz"])) == {"emp", "empanada", "empir", "zzz"}


def test_no_other_module_defines_a_bm25_or_ranks_agents_reads_in_sql():
    """One BM25 (domain/text_index.py), one ranking of an agent's reads (recall's, which search groups
    by page). The compile's choice of candidate pages for the planner (store/scope_reads.py) ranks
    pages by their names for the compiler, not an agent's question, and keeps its own order."""
    pattern = re.compile(r"\bk1\b\s*=|BM25_K1\s*=|def\s+bm25\b|ts_rank", re.IGNORECASE)
    found = [f"{path.relative_to(ROOT)}:{number}" for layer in LAYERS for path in (ROOT / layer).rglob("*.py")
             for number, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert {place.split(":")[0] for place in found} <= {"domain/text_index.py", "store/scope_reads.py"}, found
    assert not any(place.startswith("store/scope_reads.py") and "ts_rank" not in
                   (ROOT / "store/scope_reads.py").read_text().splitlines()[int(place.split(":")[1]) - 1]
                   for place in found)
