"""Facts that change, through the real compile: a newer value replaces an older one by when the
memories happened, whatever order they were retained and compiled in."""

from __future__ import annotations

import json
import random
import uuid

import httpx
import pytest
from mcp import Client
from sqlalchemy import text

from app import reads
from app.operations import rebuild_scope
from app.reads import BadInput, ReadScope
from domain.memory import MemoryIn
from servers.http_api import create_app
from servers.mcp_server import build_server
from store.memories import store_memories
from tests.compile.helpers import compile_scope, running_worker, test_settings
from tests.compile.test_model_path import model_worker
from tests.servers.conftest import serving
from tests.servers.wiki import token_for

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
        if order == "denver first":
            # a rebuild compiles all four memories in one batch: the page's own lines are marked
            _, handle = await rebuild_scope(client, engine, settings, TENANT, owner)
            await handle.result()

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
    if order == "austin first":
        await _over_http_and_mcp(engine, client, owner, settings)


async def _over_http_and_mcp(engine, client, owner: str, settings) -> None:
    """The same reads as an agent makes them: HTTP with a read token, MCP's get_page."""
    token = await token_for(engine, TENANT, owner=owner, rights="read")

    async def connect():
        return client

    async with serving(create_app(engine, connect, settings)) as base, httpx.AsyncClient(
            base_url=base, timeout=10, headers={"Authorization": f"Bearer {token}"}) as http:
        path = "/v1/pages/entity/alice-moreau"
        february = (await http.get(path, params={"as_of": "2026-02-15"})).json()["markdown"]
        assert "Austin" in february and "Denver" not in february
        history = (await http.get("/v1/pages", params={"name": "Alice Moreau", "history": "true"})).json()
        assert "_(until 2026-06-03)_" in history["markdown"]
        bad = await http.get(path, params={"as_of": "yesterday"})
        assert bad.status_code == 422 and "as_of" in bad.json()["error"]

    async def no_temporal():
        raise AssertionError("reads never reach Temporal")

    server = build_server(engine, lambda: ReadScope.of(TENANT, owner), no_temporal, settings)
    async with Client(server) as mcp:
        now = (await mcp.call_tool("get_page", {"name": "Alice Moreau"})).structured_content["markdown"]
        then = (await mcp.call_tool("get_page", {"name": "Alice Moreau", "as_of": "2026-02-15"})
                ).structured_content["markdown"]
    assert "Denver" in now and "Austin" not in now
    assert "Austin" in then and "Denver" not in then


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


async def test_through_the_sdk_and_the_simulator_the_plan_marks_the_replaced_fact(engine, client, sim) -> None:
    """The Claude path: the prompt shows the page's fact as f1, the simulator's brain answers with a
    "supersede" pair in the compact contract, and the older fact compiled last still stays history."""
    owner = "o-sim"
    async with model_worker(client, engine, "anthropic") as settings:
        await store_memories(engine, TENANT, owner, [*CLIMBING, DENVER])
        await compile_scope(client, settings, TENANT, owner)
        await store_memories(engine, TENANT, owner, [AUSTIN])
        await compile_scope(client, settings, TENANT, owner)
    prompts = [json.dumps(call.body, ensure_ascii=False) for call in sim.of_kind("planner")]
    assert any("· fact f1" in prompt and "Alice Moreau moved to Denver." in prompt for prompt in prompts)
    current = await _markdown(engine, owner)
    assert "Denver" in current and "Austin" not in current, current
    assert "_(until 2026-06-03)_" in await _markdown(engine, owner, history=True)
