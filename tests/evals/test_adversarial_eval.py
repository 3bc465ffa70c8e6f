"""The fast subset of `make eval`: a small adversarial corpus through the real pipeline.

Asserted here: what the resolution ladder delivers (no duplicate pages, every variant name on its
thing's page, no wrong merge, the must-not-merge pairs kept apart), tenant isolation, safe bodies (no
raw HTML, no link or address leading out of the wiki) and titles in their best-attested spelling. The
eval's other figures (provenance, rebuild identity, repeated lines) are reported by `make eval` in
docs/EVAL.md and asserted nowhere yet.
"""

from __future__ import annotations

from evals.corpus import generate
from evals.run import evaluate

SEED = 11
SIZE = 90  # about 120 memories per tenant: every variant class and every trap, a few seconds


async def test_a_small_adversarial_corpus_compiles_to_one_page_per_thing(client, engine):
    corpus = generate(SEED, SIZE)
    results = await evaluate(client, engine, corpus, check_identity=False)

    assert len(results) == 2
    for result in results:
        m = result.metrics
        assert m.memories >= 100
        assert m.duplicate_pairs == 0, m.duplicates
        assert m.wrong_merges == 0, m.wrong_merge_details
        assert m.must_not_merge_violations == []
        assert m.merge_recall.total >= 10 and m.merge_recall.value >= 0.95, m.variants_missed
        assert set(m.merge_recall_by_class) >= {"qualifier", "article", "appositive", "typo"}
        assert m.secret_leaks == 0
        assert m.raw_html_sections == 0 and m.outside_links == 0
        assert m.titles_not_best_attested == []
