"""How `make test` splits the suite between pytest-xdist workers (`-n 2`).

Each worker is a pytest session of its own, with its own session services (Postgres, Temporal, the
simulator) and base temp directory. A session fixture that is expensive to build (a compiled corpus)
would be built by every worker that runs one of its tests, so the tests sharing one are sent to one
worker as a unit; every other test is its own unit, handed to whichever worker is free.

xdist's own `--dist loadgroup` reads `xdist_group` marks by renaming node ids, which pytest 9 no
longer allows, and the controller that schedules never sees fixtures: so the units are named here by
node id, and tests/test_parallel.py checks that every test using such a fixture is in its unit.
"""

from __future__ import annotations

import pytest

# A session fixture that compiles a corpus, and the node ids (or id prefixes) of the tests using it.
SHARED_SESSION_FIXTURES: dict[str, tuple[str, ...]] = {
    "compiled_sample": (
        "tests/golden/test_sample_golden.py::",
        "tests/compile/test_overlap.py::test_the_sample_compiled_with_overlap_is_the_golden_wiki",
        "tests/compile/test_leaf_pass.py::test_the_700_memory_sample_compiles_into_a_consistent_wiki",
        "tests/compile/test_aggregation.py::test_the_700_memory_sample_grows_city_hubs_whose_rollups_list_their_children",
    ),
    "served_wiki": ("tests/web/",),
}
# The fixtures each unit is built around (a test asking for any of them belongs to the unit).
UNIT_FIXTURES = {"compiled_sample": ("compiled_sample", "compiled_sample_engine"), "served_wiki": ("served_wiki",)}
# Started first, as the longest: started last, it would leave the other worker idle at the end.
LONGEST_FIRST = ("tests/test_walkthrough.py::test_a_newcomer_follows_the_readme",)


def unit_of(nodeid: str) -> str:
    """The scheduling unit of a test: its shared fixture's name, or the test itself."""
    for unit, prefixes in SHARED_SESSION_FIXTURES.items():
        if nodeid.startswith(prefixes):
            return unit
    return nodeid


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.nodeid not in LONGEST_FIRST)  # stable: the rest keep their order


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        """xdist's scope scheduling with `unit_of` as the scope."""

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return SharedFixtureScheduling(config, log)
