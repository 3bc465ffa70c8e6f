"""Facts that change, through the real compile: a newer value replaces an older one by when the
memories happened, whatever order they were retained and compiled in."""

from __future__ import annotations

import random
import uuid

import pytest
from sqlalchemy import text

from app import reads
from app.reads import BadInput, ReadScope
from domain.memory import MemoryIn
from store.memories import store_memories
from tests.compile.helpers import compile_scope, running_worker, test_settings

TENANT = "t-facts"
ALICE = {"entities": [{"name": "Alice Moreau", "type": "entity", "kind": "person"}]}


def memory(content: str, at: str) -> MemoryIn:
    return MemoryIn(id=uuid.uuid5(uuid.NAMESPACE_URL, f"facts/{content}/{at}"), content=content, metadata=ALICE,
                    occurred_at=at)


AUSTIN = memory("Alice Moreau lives in Austin.", "2026-01-10T09:00:00Z")
DENVER = memory("Alice Moreau moved to Denver.", "2026-06-03T18:00:00Z")
CLIMBING = [memory("Alice Moreau goes climbing on Saturdays.", "2026-01-04T10:00:00Z"),
            memory("Alice Moreau recommended a climbing gym.", "2026-01-06T10:00:00Z")]


async def _markdown(engine, owner: str, **options) -> str:
    return (await reads.get_page(engine, ReadScope.of(TENANT, owner), "Alice Moreau", **options)).markdown


@pytest.mark.parametrize("order", ["austin first", "denver first"])
async def test_the_newer_fact_is_current_and_the_older_one_history_in_either_order(engine, client, order) -> None:
    owner = f"o-{order.split()[0]}"
    first, second = (AUSTIN, DENVER) if order == "austin first" else (DENVER, AUSTIN)
    settings = test_settings()
    async with running_worker(client, engine, settings):
        await store_memories(engine, TENANT, owner, [*CLIMBING, first])
        await compile_scope(client, settings, TENANT, owner)
        await store_memories(engine, TENANT, owner, [second])
        await compile_scope(client, settings, TENANT, owner)

    current = await _markdown(engine, owner)
    assert "Denver" in current and "Austin" not in current, current
    history = await _markdown(engine, owner, history=True)
    assert "Alice Moreau lives in Austin. _(until 2026-06-03)_" in history, history
    february = await _markdown(engine, owner, as_of="2026-02-15")
    assert "Austin" in february and "Denver" not in february, february
    assert "Saturdays" in february  # a fact that never changed holds from its memory on
    page = await reads.get_page(engine, ReadScope.of(TENANT, owner), "Alice Moreau", history=True)
    states = {c.text.split(": ", 1)[-1]: (c.validity, c.valid_to) for s in page.sections for c in s.claims
              if "Austin" in c.text or "Denver" in c.text}
    assert states["Alice Moreau lives in Austin."][0] == "superseded"
    assert states["Alice Moreau moved to Denver."] == ("current", None)
    async with engine.connect() as conn:
        marks = (await conn.execute(text("SELECT count(*) FROM wiki_claim_supersessions"))).scalar_one()
    assert marks >= 1
    with pytest.raises(BadInput, match="as_of"):
        await _markdown(engine, owner, as_of="last tuesday")


async def test_rival_values_of_one_moment_are_disputed_and_the_lint_names_them(engine, client) -> None:
    owner = "o-disputed"
    rng = random.Random(26)
    cities = rng.sample(["Lisbon", "Porto", "Kyoto", "Oslo"], 2)
    settings = test_settings()
    async with running_worker(client, engine, settings):
        await store_memories(engine, TENANT, owner, [*CLIMBING, *(memory(f"Alice Moreau lives in {city}.",
                                                                        "2026-03-01T09:00:00Z") for city in cities)])
        await compile_scope(client, settings, TENANT, owner)
    from store.claim_validity import disputed_claims

    async with engine.connect() as conn:
        disputed = await disputed_claims(conn, tenant=TENANT, owner=owner)
    assert sorted(row["text"].split(": ", 1)[-1] for row in disputed) == sorted(
        f"Alice Moreau lives in {city}." for city in cities)
    assert "_(disputed)_" in await _markdown(engine, owner)
