"""The scheduling units of `make test` (tests/parallel.py) hold every test of their shared fixture."""

from __future__ import annotations

import pytest

from tests.parallel import UNIT_FIXTURES, unit_of


def test_every_test_using_a_shared_session_fixture_is_in_that_fixtures_unit(request: pytest.FixtureRequest):
    outside = [(item.nodeid, unit) for item in request.session.items for unit, fixtures in UNIT_FIXTURES.items()
               if set(fixtures) & set(getattr(item, "fixturenames", ())) and unit_of(item.nodeid) != unit]
    assert not outside, f"add these tests to SHARED_SESSION_FIXTURES in tests/parallel.py: {outside}"


def test_a_test_outside_every_unit_is_a_unit_of_its_own():
    assert unit_of("tests/test_cli.py::test_x") == "tests/test_cli.py::test_x"
    assert unit_of("tests/web/test_browser.py::test_y") == "served_wiki"
    assert unit_of("tests/golden/test_sample_golden.py::test_sample700_compiles_to_the_golden_wiki") == "compiled_sample"
