"""The operator's corrections over HTTP: an operator token only, the token's scope only, bad input a
422 with one sentence."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import text
from temporalio.client import Client

from servers.corrections_api import ROUTES
from servers.http_api import create_app
from tests.servers.conftest import connecting, serving
from tests.servers.wiki import OWNER, seed_tenants, token_for

BODIES = {
    "/v1/corrections/aliases": {"page": "Sam", "alias": "Samwise"},
    "/v1/corrections/aliases/remove": {"page": "entity/austin-texas", "alias": "ATX"},
    "/v1/corrections/mentions/ignore": {"name": "Zorblax"},
    "/v1/corrections/sections/keep": {"page": "topic/austin-bbq", "section": "highlights"},
    "/v1/corrections/links/rollback": {"deterministic": True},
}


@pytest.fixture
async def api(engine, client: Client, server_settings):
    await seed_tenants(engine)

    tokens = {rights: await token_for(engine, "acme", rights=rights) for rights in ("read", "write", "operator")}
    tokens["globex"] = await token_for(engine, "globex", rights="operator")
    async with serving(create_app(engine, connecting(client), server_settings)) as base:
        yield base, tokens


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _aliases(engine, tenant: str, slug: str) -> set[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("""SELECT a.alias FROM wiki_page_aliases a JOIN wiki_pages p ON p.id = a.page_id
                                          WHERE p.tenant_id = :t AND p.owner_id = :o AND p.slug = :s"""),
                                  {"t": tenant, "o": OWNER, "s": slug})
        return {row.alias for row in rows}


async def test_an_agents_read_or_write_token_may_not_correct(api):
    base, tokens = api
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        for rights in ("read", "write"):
            for method, path in ROUTES:
                response = await http.request(method, path, json=BODIES.get(path), headers=bearer(tokens[rights]))
                assert response.status_code == 403, (rights, path, response.text)
                assert "operator" in response.json()["error"]


async def test_an_operator_token_corrects_its_own_scope_only(api, engine):
    base, tokens = api
    async with httpx.AsyncClient(base_url=base, timeout=10, headers=bearer(tokens["operator"])) as http:
        for path, body in BODIES.items():
            response = await http.post(path, json=body)
            assert response.status_code == 200, (path, response.text)
            assert response.json()["done"]
        assert (await http.post("/v1/corrections/links/rollback", json=BODIES["/v1/corrections/links/rollback"])
                ).json()["changed"] == 0  # the seeded co-mention links are already gone
        assert (await http.post("/v1/corrections/scope/pause")).status_code == 200
        shown = (await http.get("/v1/corrections")).json()
        assert shown["paused"] and shown["deterministic_links_off"]
        assert shown["aliases_added"] == ["entity/sam: samwise"] and shown["aliases_removed"] == [
            "entity/austin-texas: atx"]
        assert shown["ignored_names"] == ["Zorblax"] and shown["blocked_sections"] == ["topic/austin-bbq#highlights"]
        resumed = await http.post("/v1/corrections/scope/resume")
        assert resumed.status_code == 200 and not (await http.get("/v1/corrections")).json()["paused"]
    assert "samwise" in await _aliases(engine, "acme", "sam") and "atx" not in await _aliases(engine, "acme",
                                                                                              "austin-texas")
    assert "samwise" not in await _aliases(engine, "globex", "sam") and "atx" in await _aliases(engine, "globex",
                                                                                                  "austin-texas")
    async with httpx.AsyncClient(base_url=base, timeout=10, headers=bearer(tokens["globex"])) as http:
        shown = (await http.get("/v1/corrections")).json()
        assert not shown["paused"] and shown["aliases_added"] == [] and shown["ignored_names"] == []


@pytest.mark.parametrize(("path", "body", "status", "says"), [
    ("/v1/corrections/aliases", {"page": "Sam", "alias": "   "}, 422, "alias"),
    ("/v1/corrections/aliases", {"page": "Sam", "alias": "!!!"}, 422, "letter or digit"),
    ("/v1/corrections/aliases", {"page": "Sam"}, 422, "alias"),
    ("/v1/corrections/aliases", {"page": "Sam", "alias": "x" * 500}, 422, "alias"),
    ("/v1/corrections/aliases", {"page": "entity/globex-only", "alias": "G"}, 404, "no page"),
    ("/v1/corrections/aliases/remove", {"page": "Nobody At All", "alias": "N"}, 404, "no page"),
    ("/v1/corrections/sections/keep", {"page": "Sam"}, 422, "section"),
    ("/v1/corrections/mentions/ignore", {"name": "\u0000"}, 422, "name"),
    ("/v1/corrections/links/rollback", {"deterministic": False}, 422, "deterministic"),
    ("/v1/corrections/links/rollback", {}, 422, "deterministic"),
])
async def test_bad_corrections_are_refused_with_one_sentence_and_change_nothing(api, engine, path, body, status, says):
    base, tokens = api
    from tests.operators import helpers as db

    await db.page(engine, "globex", OWNER, "globex-only", title="Globex Only")
    async with httpx.AsyncClient(base_url=base, timeout=10, headers=bearer(tokens["operator"])) as http:
        response = await http.post(path, json=body)
        assert response.status_code == status, response.text
        assert says in response.json()["error"]
        shown = (await http.get("/v1/corrections")).json()
    assert shown["aliases_added"] == shown["aliases_removed"] == shown["ignored_names"] == []
    assert not shown["deterministic_links_off"]
