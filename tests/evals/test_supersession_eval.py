"""The fast subset of `make eval`'s supersession eval: generated lives of a seed `make eval` does not
use, retained newest first (the order that must not matter), compiled offline and through the SDK and
the simulator.

Asserted: no true fact retired (accumulating facts, latest values), re-asserted values current,
every retired claim retired by a newer value; through the simulator every change caught, every
attribute's current line the latest and every as-of read right; offline at least 0.8 of the changes
caught and of the attributes' current lines right.
"""

from __future__ import annotations

import pytest

from evals.fact_changes import generate
from evals.supersession_eval import measure

SEED = 4343


@pytest.mark.parametrize("mode", ["offline", "simulator"])
async def test_generated_lives_in_reverse_order(client, engine, mode: str) -> None:
    lives = generate(SEED, people=3, things=1)
    scores = await measure(client, engine, lives, mode, "reverse")

    assert scores.changes >= 8 and scores.attributes >= 8
    assert scores.accumulating_retired == 0 and scores.latest_not_current == 0, scores.examples
    assert scores.reasserted_current == scores.reasserted
    assert scores.precision == 1.0, scores.examples
    if mode == "simulator":
        assert scores.recall == 1.0 and scores.as_of_accuracy == 1.0, scores.examples
        assert scores.current_right == scores.chains, scores.examples
    else:
        assert scores.recall >= 0.8, scores.examples
        assert scores.current_right >= 0.8 * scores.chains, scores.examples
