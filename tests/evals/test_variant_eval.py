"""The fast subset of `make eval`'s variant generator: names invented for a seed `make eval` does not
use, one thing per variation family, composed at random, through the real pipeline.

Asserted: every written variant lands on its thing's page (no duplicate page, every surface merged),
every trap stays apart (one letter, swapped initials, one name in two cities, neighbouring ordinals),
and no page mixes two things.
"""

from __future__ import annotations

from evals.variants_eval import evaluate_variants

SEED = 4242


async def test_generated_variants_land_on_one_page_per_thing(client, engine):
    scored = await evaluate_variants(client, engine, SEED, per_family=1)

    assert scored.things >= 20 and scored.memories >= 100
    assert scored.duplicate_pages == 0, scored.duplicates
    # Not asserted: every memory cited. A thing whose sightings all stay open mentions (promotion needs
    # three sightings within 30 days) has no page yet; docs/EVAL.md reports those memories.
    assert scored.overall.candidate_recall == 1.0 and scored.overall.surfaces_merged == 1.0, scored.missed
    assert len(scored.traps) == 4 and not any(scored.traps.values()), scored.trap_details
    assert scored.overall.precision == 1.0
    for family, score in scored.families.items():
        assert score.precision == 1.0, family
