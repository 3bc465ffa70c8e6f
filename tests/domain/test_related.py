"""Related-page ranking (domain/related.py): seed 004's examples pinned, and cycles handled."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from domain.related import (
    ALPHA,
    Candidate,
    ScoreWeights,
    cone,
    direction_relations,
    hop_distances,
    influence_by_direction,
    random_walk_influence,
    rank_related,
    recency,
    successors_of,
    token_jaccard,
    tokens,
)

NOW = datetime(2026, 11, 23, tzinfo=UTC)


def candidates(cone_map, texts=None, ages=None) -> list[Candidate]:
    texts, ages = texts or {}, ages or {}
    return [Candidate(id=node, hops=hops, direction=way, text=texts.get(node, ""),
                      changed_at=NOW - timedelta(days=ages.get(node, 0))) for node, (hops, way) in cone_map.items()]


def seed_dag_influence(origin, successors, alpha=ALPHA):
    """Seed 004's one-pass computation over a topological order (exact on a DAG), as a reference."""
    nodes = set(successors) | {t for ts in successors.values() for t in ts} | {origin}
    preds = {n: [u for u, ts in successors.items() if n in ts] for n in nodes}
    order, seen = [], set()

    def visit(n):
        if n in seen:
            return
        seen.add(n)
        for p in preds[n]:
            visit(p)
        order.append(n)

    for n in sorted(nodes):
        visit(n)
    values = {}
    for v in order:
        values[v] = 1.0 if v == origin else sum(alpha * values[u] / len(successors[u]) for u in preds[v])
    return {n: x for n, x in values.items() if x > 0}


def test_a_three_way_merge_node_outranks_the_direct_predecessors_under_influence():
    # Seed 004's fan-out fixture: planner -> analyst-a/b/c -> reviewer; the reviewer asks for ancestors.
    edges = [("planner", a) for a in ("analyst-a", "analyst-b", "analyst-c")]
    edges += [(a, "reviewer") for a in ("analyst-a", "analyst-b", "analyst-c")]
    relations = direction_relations(successors_of(edges), "in")
    influence = influence_by_direction("reviewer", relations)
    assert influence["planner"] == pytest.approx(ALPHA ** 2)  # α² · 3 / 3
    assert influence["analyst-a"] == pytest.approx(ALPHA / 3)
    ranked = rank_related("reviewer", relations, candidates(cone("reviewer", relations)), "", NOW, limit=10)
    assert [r.id for r in ranked] == ["planner", "analyst-a", "analyst-b", "analyst-c"]
    # Hop decay would have put the analysts (1 hop) before the planner (2 hops).
    assert [r.hops for r in ranked] == [2, 1, 1, 1]


def test_a_bidirectional_query_never_alternates_directions():
    # A -> B <- C: from A, B is downstream; C is neither downstream nor upstream of A.
    relations = direction_relations(successors_of([("A", "B"), ("C", "B")]), "both")
    assert cone("A", relations) == {"B": (1, "out")}
    assert "C" not in influence_by_direction("A", relations)
    ranked = rank_related("A", relations, candidates(cone("A", relations)), "", NOW, limit=10)
    assert [r.id for r in ranked] == ["B"]
    # Collapsing both directions into one relation (the discarded design) would reach C.
    collapsed = successors_of([("A", "B"), ("C", "B"), ("B", "A"), ("B", "C")])
    assert "C" in hop_distances("A", collapsed)


def test_the_limit_applies_after_a_full_sort_not_to_a_best_first_walk():
    # origin -> a -> b, origin -> c with score(b) > score(c) > score(a): limit 1 must return b.
    relations = direction_relations(successors_of([("o", "a"), ("a", "b"), ("o", "c")]), "out")
    texts = {"b": "brisket barbecue austin", "c": "brisket", "a": "unrelated"}
    weights = ScoreWeights(influence=0.1, text=1.0, recency=0.0)
    ranked = rank_related("o", relations, candidates(cone("o", relations), texts), "brisket barbecue austin",
                          NOW, limit=3, weights=weights)
    assert [r.id for r in ranked] == ["b", "c", "a"]
    assert [r.id for r in rank_related("o", relations, candidates(cone("o", relations), texts),
                                       "brisket barbecue austin", NOW, limit=1, weights=weights)] == ["b"]


def test_influence_equals_the_seed_one_pass_result_on_random_dags():
    rng = random.Random(4)
    for _ in range(30):
        size = rng.randint(3, 25)
        edges = [(f"n{i:02d}", f"n{j:02d}") for i in range(size) for j in range(i + 1, size) if rng.random() < 0.2]
        successors = successors_of(edges)
        origin = "n00"
        reference = seed_dag_influence(origin, successors)
        computed = random_walk_influence(origin, successors)
        assert set(computed) == set(reference)
        for node, value in reference.items():
            assert computed[node] == pytest.approx(value, abs=1e-5)


def test_influence_on_a_cycle_is_the_fixed_point():
    # A <-> B: x(A) = 1 + α x(B), x(B) = α x(A)  =>  x(A) = 1 / (1 - α²).
    influence = random_walk_influence("A", successors_of([("A", "B"), ("B", "A")]))
    assert influence["A"] == pytest.approx(1 / (1 - ALPHA ** 2), abs=1e-5)
    assert influence["B"] == pytest.approx(ALPHA / (1 - ALPHA ** 2), abs=1e-5)


def test_influence_on_random_cyclic_graphs_matches_power_iteration():
    rng = random.Random(15)
    for _ in range(20):
        size = rng.randint(3, 20)
        nodes = [f"p{i}" for i in range(size)]
        successors = successors_of((a, b) for a in nodes for b in nodes if a != b and rng.random() < 0.25)
        computed = random_walk_influence("p0", successors)
        x = {n: 0.0 for n in nodes}
        for _ in range(400):  # x = e + α Pᵀ x, iterated to convergence (α^400 is negligible)
            nxt = {n: (1.0 if n == "p0" else 0.0) for n in nodes}
            for u, targets in successors.items():
                for t in targets:
                    nxt[t] += ALPHA * x[u] / len(targets)
            x = nxt
        for node in nodes:
            assert computed.get(node, 0.0) == pytest.approx(x[node], abs=1e-4)


def test_a_dense_cycle_stays_within_the_work_budget():
    nodes = [f"q{i}" for i in range(120)]
    successors = successors_of((a, b) for a in nodes for b in nodes if a != b)
    influence = random_walk_influence("q0", successors, max_work=50_000)
    assert set(influence) == set(nodes)
    assert all(value > 0 for value in influence.values())


def test_cone_hops_per_direction_and_the_hop_bound():
    relations = direction_relations(successors_of([("A", "B"), ("B", "C"), ("C", "D"), ("E", "A")]), "both")
    assert cone("A", relations) == {"B": (1, "out"), "C": (2, "out"), "D": (3, "out"), "E": (1, "in")}
    assert cone("A", relations, max_hops=2) == {"B": (1, "out"), "C": (2, "out"), "E": (1, "in")}
    mutual = direction_relations(successors_of([("A", "B"), ("B", "A")]), "both")
    assert cone("A", mutual) == {"B": (1, "both")}
    with pytest.raises(ValueError, match="direction"):
        direction_relations({}, "sideways")


def test_text_and_recency_lift_a_page_among_equal_influence():
    relations = direction_relations(successors_of([("o", "x"), ("o", "y"), ("o", "z")]), "out")
    found = cone("o", relations)
    by_text = rank_related("o", relations, candidates(found, {"y": "Austin BBQ"}), "austin", NOW, limit=3)
    assert by_text[0].id == "y" and by_text[0].text_relevance > 0
    by_age = rank_related("o", relations, candidates(found, ages={"x": 400, "y": 200, "z": 1}), "", NOW, limit=3)
    assert [r.id for r in by_age] == ["z", "y", "x"]
    # Equal scores fall back to hops, then id, so the order never depends on input order.
    tied = rank_related("o", relations, list(reversed(candidates(found))), "", NOW, limit=3)
    assert [r.id for r in tied] == ["x", "y", "z"]


def test_text_tokens_fold_case_and_accents():
    assert tokens("Café São-Paulo!") == {"cafe", "sao", "paulo"}
    assert token_jaccard(tokens("cafe"), tokens("Café Olé")) == pytest.approx(0.5)
    assert token_jaccard(frozenset(), tokens("x y")) == 0.0
    assert recency(None, NOW) == 0.0
    assert recency(NOW - timedelta(days=30), NOW) == pytest.approx(0.5)
