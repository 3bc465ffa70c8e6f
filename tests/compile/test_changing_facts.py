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


CAROLINE = {"entities": [{"name": "Caroline Reyes", "type": "entity", "kind": "person"}]}


def said(content: str, at: str) -> MemoryIn:
    return MemoryIn(id=uuid.uuid5(uuid.NAMESPACE_URL, f"facts/caroline/{content}/{at}"), content=content,
                    metadata=CAROLINE, occurred_at=at)


async def _claims(engine, owner: str) -> dict[str, str]:
    page = await reads.get_page(engine, ReadScope.of(TENANT, owner), "Caroline Reyes", history=True)
    return {c.text.split(": ", 1)[-1]: c.validity for s in page.sections for c in s.claims}


@pytest.mark.parametrize("order", ["in order", "newest first"])
async def test_a_value_that_comes_back_is_current_again_and_as_of_agrees_at_every_date(engine, client, order) -> None:
    owner = f"o-back-{order.split()[0]}"
    values = [said("Caroline Reyes lives in Denver.", "2020-03-01T10:00:00Z"),
              said("Caroline Reyes moved to Boston.", "2023-03-01T10:00:00Z"),
              said("Caroline Reyes moved back to Denver.", "2025-03-01T10:00:00Z")]
    settings = test_settings()
    async with running_worker(client, engine, settings):
        for memory in values if order == "in order" else list(reversed(values)):
            await store_memories(engine, TENANT, owner, [memory])
            await compile_scope(client, settings, TENANT, owner)
    claims = {line: v for line, v in (await _claims(engine, owner)).items() if "Denver" in line or "Boston" in line}
    assert claims == {"Caroline Reyes lives in Denver.": "superseded", "Caroline Reyes moved to Boston.": "superseded",
                      "Caroline Reyes moved back to Denver.": "current"}, claims
    for day, holding in [("2019-06-01", None), ("2021-06-01", "lives in Denver"), ("2023-03-01", "Boston"),
                         ("2024-12-31", "Boston"), ("2025-03-02", "back to Denver"), ("2027-01-01", "back to Denver")]:
        shown = await reads.get_page(engine, ReadScope.of(TENANT, owner), "Caroline Reyes", as_of=day)
        lines = [c.text for s in shown.sections for c in s.claims if "Denver" in c.text or "Boston" in c.text]
        assert (lines == []) if holding is None else (len(lines) == 1 and holding in lines[0]), (day, lines)


async def test_the_same_line_said_again_on_a_page_that_exists_holds_again(engine, client) -> None:
    """The value comes back in the very words it was first said, on a page made earlier: each saying
    is its own dated line, so the mark made when the value was replaced still names a line."""
    owner = "o-same-words"
    rounds = [[said("Caroline Reyes runs the book swap.", "2019-06-01T10:00:00Z"),
               said("Caroline Reyes bakes bread on Sundays.", "2019-07-01T10:00:00Z"),
               said("Caroline Reyes lives in Denver.", "2020-03-01T10:00:00Z")],
              [said("She lives in Boston now.", "2023-03-01T10:00:00Z")],
              [said("Caroline Reyes lives in Denver.", "2025-03-01T10:00:00Z")]]
    settings = test_settings()
    async with running_worker(client, engine, settings):
        for memories in rounds:
            await store_memories(engine, TENANT, owner, memories)
            await compile_scope(client, settings, TENANT, owner)
    for day, holding in [("2021-06-01", "Denver"), ("2024-06-01", "Boston"), ("2026-01-01", "Denver")]:
        shown = await reads.get_page(engine, ReadScope.of(TENANT, owner), "Caroline Reyes", as_of=day)
        lines = [c.text for s in shown.sections for c in s.claims if "Denver" in c.text or "Boston" in c.text]
        assert len(lines) == 1 and holding in lines[0], (day, lines)
    current = await reads.get_page(engine, ReadScope.of(TENANT, owner), "Caroline Reyes")
    lines = [c.text for s in current.sections for c in s.claims if "Denver" in c.text or "Boston" in c.text]
    assert lines == ["- 2025-03-01: Caroline Reyes lives in Denver."], lines


PROBES = {
    # two accumulating facts of one verb each: both stay current, the lint names the pairs
    "shared verbs": ([("joined a pottery class", "2024-01-05"), ("became a volunteer", "2024-01-06")],
                     [("joined a support group", "2025-02-05"), ("became a mentor", "2025-02-06")],
                     {"joined a pottery class": "current", "joined a support group": "current",
                      "became a volunteer": "current", "became a mentor": "current"}),
    # an ending retires the value it names
    "endings": ([("lives in Denver", "2024-01-07"), ("works at Acme", "2024-01-08")],
                [("no longer lives in Denver", "2025-02-07"), ("quit her job at Acme", "2025-02-08")],
                {"lives in Denver": "superseded", "no longer lives in Denver": "current",
                 "works at Acme": "superseded", "quit her job at Acme": "current"}),
}


@pytest.mark.parametrize("probe", sorted(PROBES))
async def test_the_issues_probes_through_the_compile(engine, client, probe: str) -> None:
    owner = f"o-probe-{probe.split()[0]}"
    first, later, expected = PROBES[probe]
    settings = test_settings()
    async with running_worker(client, engine, settings):
        for batch in (first, later):
            await store_memories(engine, TENANT, owner, [said(f"Caroline Reyes {what}.", f"{day}T10:00:00Z")
                                                         for what, day in batch])
            await compile_scope(client, settings, TENANT, owner)
    claims = await _claims(engine, owner)
    for what, validity in expected.items():
        found = [v for line, v in claims.items() if line.endswith(f"Caroline Reyes {what}.")]
        assert found == [validity], (what, "; ".join(f"{k}={v}" for k, v in claims.items()))
    if probe == "shared verbs":
        from store.claim_validity import unsure_pairs

        async with engine.connect() as conn:
            pairs = await unsure_pairs(conn, tenant=TENANT, owner=owner)
        named = {frozenset({pair["line"].split(": ", 1)[-1], pair["other"].split(": ", 1)[-1]}) for pair in pairs}
        assert frozenset({"Caroline Reyes joined a support group.", "Caroline Reyes joined a pottery class."}) in named
        assert frozenset({"Caroline Reyes became a mentor.", "Caroline Reyes became a volunteer."}) in named


async def test_apply_refuses_and_counts_a_mark_to_a_newer_claim_or_another_page(engine, client) -> None:
    from domain.claim_text import claim_key
    from domain.resolved_plan import ProposedClaim
    from store.claim_validity import settle_validity

    owner = "o-refused"
    bruno = {"entities": [{"name": "Bruno Costa", "type": "entity", "kind": "person"}]}
    settings = test_settings()
    async with running_worker(client, engine, settings):
        await store_memories(engine, TENANT, owner, [
            said("Caroline Reyes lives in Denver.", "2020-03-01T10:00:00Z"),
            said("Caroline Reyes moved to Boston.", "2023-03-01T10:00:00Z"),
            MemoryIn(id=uuid.uuid4(), content="Bruno Costa works at Acme.", metadata=bruno,
                     occurred_at="2021-01-01T10:00:00Z"),
            MemoryIn(id=uuid.uuid4(), content="Bruno Costa likes tea.", metadata=bruno,
                     occurred_at="2021-02-01T10:00:00Z")])
        await compile_scope(client, settings, TENANT, owner)
    async with engine.connect() as conn:
        rows = (await conn.execute(text("""
            SELECT p.title, c.section_id::text AS section, c.text, c.text_key FROM wiki_section_claims c
            JOIN wiki_page_sections s ON s.id = c.section_id JOIN wiki_pages p ON p.id = s.page_id
            WHERE p.tenant_id = :t AND p.owner_id = :o"""), {"t": TENANT, "o": owner})).all()
    key = {next(word for word in ("Denver", "Boston", "Acme") if word in row.text): row.text_key
           for row in rows if any(word in row.text for word in ("Denver", "Boston", "Acme"))}
    assert key["Denver"] == claim_key(next(r.text for r in rows if "Denver" in r.text))
    sections = sorted({row.section for row in rows if row.title == "Caroline Reyes"})
    async with engine.begin() as conn:
        # the older line said to replace the newer one, and a line of another page: both refused
        counts = await settle_validity(conn, TENANT, owner, sections, {
            key["Denver"]: ProposedClaim(supersedes=[key["Boston"], key["Acme"]])}, None)
        assert (counts.marked, counts.refused) == (0, 2)
        # the mark the compile already kept is kept once
        again = await settle_validity(conn, TENANT, owner, sections, {
            key["Boston"]: ProposedClaim(supersedes=[key["Denver"]], reasons={key["Denver"]: "moved"})}, None)
        assert (again.marked, again.refused) == (0, 0)
    validity = {line: v for line, v in (await _claims(engine, owner)).items() if "Denver" in line or "Boston" in line}
    assert validity == {"Caroline Reyes lives in Denver.": "superseded", "Caroline Reyes moved to Boston.": "current"}
    async with engine.connect() as conn:
        metrics = (await conn.execute(text(
            "SELECT metrics FROM wiki_compile_jobs WHERE tenant_id = :t AND owner_id = :o"),
            {"t": TENANT, "o": owner})).scalars().all()
    assert sum(m.get("supersessions_marked", 0) for m in metrics) == 1
