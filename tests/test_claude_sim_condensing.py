"""The simulated section writer condenses as its prompt asks: repeated lines go before anything is folded."""

from __future__ import annotations

import random

from claude_sim.writing import written_section
from planners.prompts import SECTION_WRITER_SYSTEM
from planners.section_edits import SectionEdits, apply_edits, numbered


def _request(body: str, proposed: str, budget: int) -> str:
    return (f"Budget: {budget} characters\n\n## Existing body\n{numbered(body)}\n\n## Planner's proposed body\n"
            f"{proposed}\n\n## Source records\n(none)")


def test_lines_the_others_already_say_are_dropped_first_and_every_distinct_line_stays() -> None:
    rng = random.Random(5)
    things = ["glacier", "violin", "orchard", "lantern", "harbour", "quarry", "meadow", "falcon", "copper", "saffron"]
    distinct = [f"- 2026-01-{n + 1:02d}: Ilse visited the {thing} near the {rng.choice(things)}."
                for n, thing in enumerate(things)]
    # Each line said again three times, on later days.
    repeats = [f"- 2026-0{month}-{n + 1:02d}:{line.split(':', 1)[1]}" for month in (2, 3, 4)
               for n, line in enumerate(distinct)]
    body = "\n".join(distinct + repeats)
    budget = 2 * len("\n".join(distinct)) + 300

    edits = SectionEdits.model_validate(written_section(SECTION_WRITER_SYSTEM, _request(body, "- 2026-05-01: Ilse "
                                                                                       "slept.", budget)))
    result = apply_edits(body, edits)

    assert len(result) <= budget
    for thing in things:  # each thing is still said by some line
        assert thing in result
    assert "Earlier" not in result  # dropping the repeats was enough: nothing folded into a count
    assert "- 2026-05-01: Ilse slept." in result
