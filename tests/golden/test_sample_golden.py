"""Golden test: compiling the 700-memory sample writes exactly the wiki in sample700_wiki.json.gz.

The fixture was made by `python -m tests.golden.make_fixture` before a refactor meant to change no
behaviour; regenerate it only for a deliberate change of the compiled wiki, and say so in the commit.
"""

from __future__ import annotations

import gzip
import json

# Project imports: the only lines to rewrite when the project's modules move.
from tests.golden.dump import dump_scope, encode, first_difference
from tests.golden.make_fixture import FIXTURE, OWNER, TENANT


async def test_sample700_compiles_to_the_golden_wiki(compiled_sample_engine) -> None:
    """On the session's compile of the sample (`compiled_sample` in tests/compiled_sample.py, which runs
    `compile_sample` on the test services)."""
    engine = compiled_sample_engine
    expected = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    # Through the fixture's own encoding, so both sides are plain JSON values (lists, not tuples).
    actual = json.loads(encode(await dump_scope(engine, TENANT, OWNER)))
    difference = first_difference(expected, actual)
    assert difference is None, f"the compiled wiki differs from {FIXTURE.name}: {difference}"
