"""The mutation check's own contract (tests/mutants.py; `make mutants` runs it, slowly, outside `make test`).

Every mutant's anchor must still be found in the code and every test it names must exist, so a
refactor that moves a rule fails here at once, with the mutant's name, instead of in the slow check
later. And an anchor that is gone, or matches more or less often than stated, is an error, never a
silently skipped mutant.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.mutants import MUTANTS, ROOT, AnchorNotFound, Edit, apply_edit, mutated_files

SOURCE = '''\
LIMIT = 3


class Steps:
    async def apply(self, request):
        """Apply."""
        if request.ok:
            return 1
        return 2


def helper():
    return LIMIT
'''


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_every_mutant_still_finds_its_anchor_and_changes_the_code(mutant):
    for path, text in mutated_files(ROOT, mutant).items():
        assert text != (ROOT / path).read_text(encoding="utf-8")


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_every_mutant_names_tests_that_exist(mutant):
    for test in mutant.tests:
        path, _, name = test.partition("::")
        assert (ROOT / path).is_file(), test
        if name:
            defined = {node.name for node in ast.parse((ROOT / path).read_text()).body
                       if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
            assert name in defined, f"{test}: no such test"


def test_mutant_names_are_unique():
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)


def test_an_edit_is_confined_to_the_named_definition():
    mutated = apply_edit(SOURCE, Edit("x.py", "helper", r"return LIMIT", "return 0"))
    assert "def helper():\n    return 0" in mutated and "LIMIT = 3" in mutated
    assert apply_edit(SOURCE, Edit("x.py", "LIMIT", r"= 3", "= 4")).startswith("LIMIT = 4\n")
    # A method, by Class.method; the statement goes before the first one (the docstring here).
    inserted = apply_edit(SOURCE, Edit("x.py", "Steps.apply", first_statement="return 0"))
    assert '        return 0\n        """Apply."""' in inserted
    ast.parse(inserted)


@pytest.mark.parametrize("edit, reason", [
    (Edit("x.py", "Missing.apply", r"x", "y"), "no definition named 'Missing'"),
    (Edit("x.py", "Steps.gone", r"x", "y"), "no definition named 'gone'"),
    (Edit("x.py", "Steps.apply", r"return \d", "return 0"), "matched 2 time(s), expected 1"),
    (Edit("x.py", "helper", r"return 1", "return 0"), "matched 0 time(s), expected 1"),
    (Edit("x.py", "LIMIT", first_statement="return"), "is not a function"),
])
def test_an_anchor_that_is_not_found_as_stated_is_an_error(edit, reason):
    with pytest.raises(AnchorNotFound, match=reason.replace("(", r"\(").replace(")", r"\)")):
        apply_edit(SOURCE, edit)


def test_the_check_covers_the_five_rules_the_suite_once_let_through():
    edited = {(edit.path, edit.name) for mutant in MUTANTS for edit in mutant.edits}
    assert {("activities/compile_steps.py", "CompileSteps._apply_batch"), ("store/compile_runs.py", "advance_cursor"),
            ("domain/promotion.py", "PROMOTION_MIN_SIGHTINGS"), ("domain/resolution.py", "SIMILAR_THRESHOLD"),
            ("domain/resolution.py", "compare"), ("workflows/compile.py", "CompileWorkflow._debounce")
            } <= edited
    assert Path(ROOT / "Makefile").read_text().count("mutants:") == 1
