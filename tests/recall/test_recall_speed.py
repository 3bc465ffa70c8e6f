"""What keeps recall fast on a large scope and must not drift: each of its statements is planned for
its own arguments (never a plan cached for any array), only within its own transaction; a ranking's
head is the full sort's head."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import text

from domain.recall import ranked
from store.recall_reads import recall_state
from tests.recall.wiki import OWNER, TENANT, entity, fact


async def test_recall_plans_its_statements_for_their_arguments_in_its_transaction_only(engine):
    page = await entity(engine, "Jonas Berg")
    await fact(engine, page, "Bought a red bicycle.")
    async with engine.connect() as conn:
        state = await recall_state(conn, TENANT, OWNER, "Which bicycle did Jonas buy?")
        assert state.revision > 0 and "bicycl" in state.lexemes
        assert (await conn.execute(text("SHOW plan_cache_mode"))).scalar_one() == "force_custom_plan"
        await conn.rollback()
        assert (await conn.execute(text("SHOW plan_cache_mode"))).scalar_one() == "auto"


@pytest.mark.parametrize("seed", range(6))
def test_a_rankings_head_is_the_full_sorts_head(seed):
    rng = random.Random(seed)
    scores = {f"k{i}": float(rng.randint(0, 5)) for i in range(rng.randint(0, 400))}  # many ties
    for limit in (0, 1, 7, 200, 1_000):
        assert ranked(scores, limit) == ranked(scores)[:limit]
