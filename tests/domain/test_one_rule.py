"""One grounding rule, one definition of each claim status, and each line format defined once.

Read from the source text with `ast` (nothing is imported): the grounding rule is defined in
domain/grounding.py only, and the gate, the writer's gate and apply each reach it with the rule of
their own (`gate_rule`, `writer_rule`, `APPLY_RULE`) that states how they differ; the checks behind
the statuses are defined once (domain/claim_checks.py) and the old duplicates are gone; and the
compiler's line formats are written in domain/line_formats.py alone, never spelled again by the
modules that write or read them. Then, behaviourally, the three rules differ exactly as the table
in domain/grounding.py says.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from domain.evidence import evidence_of
from domain.grounding import APPLY_RULE, GATE_RULE, ungrounded, writer_rule

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("domain", "messages", "store", "planners", "activities", "workflows", "runtime", "app", "cli",
           "servers", "migrations")
# The rule and the checks behind the statuses: each defined once, in its module.
ONE_DEFINITION = {
    "ungrounded": "domain/grounding.py", "counts_of": "domain/grounding.py", "supporting": "domain/grounding.py",
    "terms_of": "domain/claim_terms.py", "names_in": "domain/claim_terms.py",
    "quoted_in": "domain/claim_checks.py", "derived_holds": "domain/claim_checks.py",
    "check_line": "domain/claim_checks.py", "status_of": "domain/claims.py", "confidence": "domain/claims.py",
    "attribute_body": "domain/attribution.py",
}
# Earlier rules that said the same things their own way: none may come back.
RETIRED = ("unsupported_terms", "unsupported_openings", "is_verbatim", "is_summary", "scripted_score",
           "quoted_by", "_count_of_lines", "verdict")
# Where each of the three callers reaches the rule, and the rule it passes.
CALLERS = {
    "activities/claim_gate.py": ("check_line", "GATE_RULE"),
    "domain/writer_grounding.py": ("ungrounded", "writer_rule"),
    "domain/attribution.py": ("ungrounded", "APPLY_RULE"),
}
# Fragments of the compiler's own lines: written only by domain/line_formats.py, among the layers that
# write and read a section's lines.
LINE_LAYERS = ("domain/", "store/", "planners/", "activities/")
FORMAT_FRAGMENTS = ("Earlier: ", "Visited on ", "Visited once", "new memories.", "new memory.",
                    "By month: ", "Latest: ", "Often together with", "Most mentioned", "Address: ", "See: [",
                    "](/wiki/", " times, all on", " times, on ")


@functools.cache
def sources() -> dict[str, ast.Module]:
    out = {}
    for folder in PRODUCT:
        for path in sorted((ROOT / folder).rglob("*.py")):
            out[str(path.relative_to(ROOT))] = ast.parse(path.read_text(), str(path))
    return out


def test_the_rule_and_the_checks_are_defined_once_and_the_old_ones_are_gone() -> None:
    defined: dict[str, list[str]] = defaultdict(list)
    for name, tree in sources().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.col_offset == 0:
                defined[node.name].append(name)
    for function, module in ONE_DEFINITION.items():
        assert defined[function] == [module], f"{function} defined in {defined[function]}, not only {module}"
    assert not [(f, defined[f]) for f in RETIRED if defined[f]]


def _calls(tree: ast.Module) -> set[str]:
    return {node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            for node in ast.walk(tree) if isinstance(node, ast.Call)}


def _names(tree: ast.Module) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def test_the_gate_the_writers_gate_and_apply_go_through_the_rule_with_their_own_parameters() -> None:
    trees = sources()
    for module, (entry, rule) in CALLERS.items():
        tree = trees[module]
        assert entry in _calls(tree), f"{module} does not call {entry}"
        assert rule in _names(tree), f"{module} does not pass {rule}"
    # the gate's entry point reaches the rule itself
    assert "ungrounded" in _calls(trees["domain/claim_checks.py"])
    # nobody else grounds a line by hand: every call of the rule's pieces is in the claim modules
    allowed = {"domain/grounding.py", "domain/claim_checks.py", "domain/writer_grounding.py",
               "domain/attribution.py", "domain/forget.py"}
    stray = [m for m, tree in trees.items() if m not in allowed and {"ungrounded", "counts_of"} & _calls(tree)]
    assert not stray, stray


def test_the_compilers_line_formats_are_spelled_in_one_module() -> None:
    spelled = []
    for module, tree in sources().items():
        if module == "domain/line_formats.py" or not module.startswith(LINE_LAYERS):
            continue
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                spelled += [(module, node.lineno, f) for f in FORMAT_FRAGMENTS if f in node.value]
    assert not spelled, spelled


def test_the_three_rules_differ_exactly_as_stated() -> None:
    day = datetime(2026, 2, 1, tzinfo=UTC)
    memory = evidence_of("m1", "Dinner with Lena at the market.", {}, day)
    # a count of folded lines: only the writer's rule allows it, up to the lines shown
    fold = "- Earlier: 4 notes on dinners."
    assert ungrounded(fold, [memory], (), GATE_RULE) == ["4"] and ungrounded(fold, [memory], (), APPLY_RULE) == ["4"]
    assert ungrounded(fold, [memory], (), writer_rule(4)) == []
    assert ungrounded(fold, [memory], (), writer_rule(3)) == ["4"]
    # everything else alike: a one-word name opening a sentence ("Oriane cooked", the one name rule)
    # or a name no memory holds fails all three; the page's names count in all three
    for rule in (GATE_RULE, writer_rule(9), APPLY_RULE):
        assert ungrounded("- Oriane cooked dinner.", [memory], (), rule) == ["oriane"]
        assert ungrounded("- Dinner with Chef Bartholomew.", [memory], (), rule) == ["chef", "bartholomew"]
        assert ungrounded("- Dinner at Union Market.", [memory], ["Union Market"], rule) == []
