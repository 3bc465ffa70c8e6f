"""Forgetting over the HTTP API: the preview, the forget queued for the scope's compile, and the
refusals (another scope's id is absent, a read token cannot forget, a malformed id is bad input)."""

from __future__ import annotations

import httpx
import pytest
from temporalio.client import Client

from servers.http_api import create_app
from tests.operators import helpers as db
from tests.servers.conftest import connecting, serving
from tests.servers.wiki import seed_tenants, token_for


@pytest.fixture
async def api(engine, client: Client, server_settings):
    """(base URL, acme's memories, acme writer, acme reader, globex writer)."""
    acme = (await seed_tenants(engine))["acme"]

    tokens = (await token_for(engine, "acme"), await token_for(engine, "acme", rights="read"),
              await token_for(engine, "globex"))
    async with serving(create_app(engine, connecting(client), server_settings)) as base:
        yield base, acme.memories, *tokens


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def queued(engine) -> list:
    return await db.rows(engine, "SELECT tenant_id, kind, memory_ids::text[] AS ids FROM wiki_forget_requests")


async def test_preview_lists_the_blast_radius_and_changes_nothing(api, engine):
    base, memories, _, reader, _ = api
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        response = await http.get(f"/v1/memories/{memories[1]}/forget-preview", headers=bearer(reader))
        assert response.status_code == 200, response.text
        radius = response.json()
        # Memory 1 alone backs the notes section; the overview cites memories 0 and 1: re-derived.
        assert radius["memory_ids"] == [memories[1]]
        assert [s["name"].split(" · ")[0] for s in radius["sections_removed"]] == ["entity/franklin-barbecue"]
        assert radius["pages_removed"] == [] and radius["claims_removed"] == 1
        assert [s["name"].split(" · ")[0] for s in radius["sections_rederived"]] == ["entity/franklin-barbecue"]
        many = await http.post("/v1/memories/forget", json={"memory_ids": memories, "dry_run": True},
                               headers=bearer(reader))
        assert many.status_code == 202, many.text
        assert {p["name"].split(" (")[0] for p in many.json()["pages_removed"]} == {"entity/franklin-barbecue",
                                                                                   "entity/austin-texas"}
    assert await queued(engine) == []


async def test_another_scopes_token_gets_404_a_reader_403_and_bad_ids_422(api, engine):
    base, memories, _, reader, globex = api
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        for path in (f"/v1/memories/{memories[2]}", f"/v1/memories/{memories[2]}/forget-preview"):
            method = http.delete if not path.endswith("preview") else http.get
            response = await method(path, headers=bearer(globex))
            assert response.status_code == 404, response.text
            assert response.json() == {"error": f"no memory {memories[2]} in globex/alice"}
        assert (await http.delete(f"/v1/memories/{memories[2]}", headers=bearer(reader))).status_code == 403
        bad = await http.delete("/v1/memories/not-a-uuid", headers=bearer(globex))
        assert bad.status_code == 422 and bad.json() == {"error": "not a memory id: 'not-a-uuid'"}
        empty = await http.post("/v1/memories/forget", json={"memory_ids": []}, headers=bearer(globex))
        assert empty.status_code == 422
    assert await queued(engine) == []


async def test_a_writer_queues_the_forget_for_the_scopes_compile(api, engine, client):
    base, memories, writer, _, _ = api
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        response = await http.delete(f"/v1/memories/{memories[2]}", headers=bearer(writer))
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["memory_ids"] == [memories[2]] and body["compile_workflow_id"] == "compile:acme:alice"
    assert [(r.tenant_id, r.kind, r.ids) for r in await queued(engine)] == [("acme", "forget", [memories[2]])]
    described = await client.get_workflow_handle("compile:acme:alice").describe()
    assert described.status is not None
