"""The HTTP API (servers/http_api.py) served by uvicorn on a loopback port, called with httpx: bearer
tokens decide the scope, two tenants share page names, errors are JSON, inputs are bounded."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from temporalio.client import Client

from runtime.settings import Settings
from servers.http_api import create_app
from store.api_tokens import revoke_token
from tests.servers.conftest import connecting, serving
from tests.servers.wiki import OWNER, seed_tenants, token_for


@pytest.fixture
async def api(engine, client: Client, server_settings):
    """(base URL, acme token, globex token) of a running API over two seeded tenants."""
    await seed_tenants(engine)

    tokens = (await token_for(engine, "acme"), await token_for(engine, "globex"))
    async with serving(create_app(engine, connecting(client), server_settings)) as base:
        yield base, *tokens


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_every_route_answers_in_the_tokens_scope(api):
    base, acme, globex = api
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        for token, tenant in ((acme, "acme"), (globex, "globex")):
            response = await http.get("/v1/search", params={"q": "brisket"}, headers=bearer(token))
            assert response.status_code == 200, response.text
            found = response.json()
            assert found["hits"][0]["slug"] == "franklin-barbecue" and f"({tenant})" in found["hits"][0]["summary"]
            page = (await http.get("/v1/pages/entity/franklin-barbecue", headers=bearer(token))).json()
            assert f"({tenant})" in page["markdown"] and "{#overview}" in page["markdown"]
            sources = (await http.get("/v1/pages/entity/franklin-barbecue/sources", headers=bearer(token))).json()
            assert sources["total"] == 2
            assert all(m["content"].startswith(f"[{tenant}]") for m in sources["memories"])
            related = (await http.get("/v1/pages/entity/franklin-barbecue/related", params={"limit": 2},
                                      headers=bearer(token))).json()
            assert len(related["hits"]) == 2 and related["cone_size"] == 3
            since = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
            changes = (await http.get("/v1/changes", params={"since": since}, headers=bearer(token))).json()
            assert len(changes["pages"]) == 4
            by_name = (await http.get("/v1/pages", params={"name": "ATX"}, headers=bearer(token))).json()
            assert by_name["slug"] == "austin-texas" and f"({tenant})" in by_name["markdown"]


async def test_the_openapi_schema_lists_the_routes(api):
    base, _, _ = api
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        schema = (await http.get("/openapi.json")).json()
    assert {"/v1/search", "/v1/pages/{page_type}/{slug}", "/v1/pages/{page_type}/{slug}/sources",
            "/v1/pages/{page_type}/{slug}/related", "/v1/changes", "/v1/memories"} <= set(schema["paths"])


async def test_the_openapi_schema_declares_the_bearer_scheme_bounds_and_the_retain_body(api):
    base, _, _ = api
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        schema = (await http.get("/openapi.json")).json()
        docs = await http.get("/docs")
        assets = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", docs.text)
        fetched = [await http.get(asset) for asset in assets if asset.startswith("/")]
    scheme = schema["components"]["securitySchemes"]["bearer"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer" and "wiki token create" in scheme["description"]
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            assert operation["security"] == [{"bearer": []}], path
            assert operation.get("description"), path
            for parameter in operation.get("parameters", []):
                assert parameter.get("description") or parameter["in"] == "path", (path, parameter["name"])
    search = {p["name"]: p["schema"] for p in schema["paths"]["/v1/search"]["get"]["parameters"]}
    assert search["limit"]["maximum"] == 50 and search["q"]["maxLength"] == 500
    body = schema["paths"]["/v1/memories"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/RetainRequest"}
    assert schema["components"]["schemas"]["RetainRequest"]["properties"]["memories"]["maxItems"] == 100
    # The docs page renders offline: every asset it loads is served by this server.
    assert docs.status_code == 200 and "cdn" not in docs.text.lower() and "http" not in "".join(assets)
    assert len(fetched) >= 2 and all(response.status_code == 200 for response in fetched)


async def test_no_token_or_a_bad_or_revoked_one_is_401(api, engine):
    base, acme, _ = api
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        for headers in ({}, {"Authorization": "Basic abc"}, bearer("wk_" + "x" * 43), bearer("nonsense")):
            response = await http.get("/v1/search", params={"q": "brisket"}, headers=headers)
            assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
            assert "error" in response.json()
        response = await http.post("/v1/memories", json={"memories": [{"content": "x"}]})
        assert response.status_code == 401
        async with engine.begin() as conn:
            for row in await _token_ids(conn, "acme"):
                await revoke_token(conn, row)
        response = await http.get("/v1/search", params={"q": "brisket"}, headers=bearer(acme))
        assert response.status_code == 401 and response.json() == {"error": "unknown or revoked token"}


async def _token_ids(conn, tenant):
    from store.api_tokens import list_tokens

    return [row.id for row in await list_tokens(conn, tenant, OWNER)]


async def test_another_scopes_page_is_404_worded_like_a_missing_one(api, engine):
    base, acme, _ = api
    from tests.operators import helpers as db

    await db.page(engine, "globex", OWNER, "globex-only", title="Globex Only")
    async with httpx.AsyncClient(base_url=base, timeout=10, headers=bearer(acme)) as http:
        for suffix in ("", "/sources", "/related"):
            elsewhere = await http.get(f"/v1/pages/entity/globex-only{suffix}")
            nowhere = await http.get(f"/v1/pages/entity/no-such-page{suffix}")
            assert elsewhere.status_code == nowhere.status_code == 404
            assert elsewhere.json()["error"].replace("globex-only", "X") \
                == nowhere.json()["error"].replace("no-such-page", "X")
        assert (await http.get("/v1/pages", params={"name": "Globex Only"})).status_code == 404
        assert (await http.get("/v1/search", params={"q": "globex"})).json()["hits"] == []


BAD_REQUESTS = [
    ("/v1/search", {"q": "brisket", "limit": 10**12}, "limit"),
    ("/v1/search", {"q": "brisket", "limit": "many"}, "limit"),
    ("/v1/search", {"q": "  "}, "query must not be empty"),
    ("/v1/search", {}, "q"),
    ("/v1/pages/person/franklin-barbecue", {}, "page_type"),
    ("/v1/pages/entity/franklin-barbecue", {"max_chars": 10**9}, "max_chars"),
    ("/v1/pages/entity/franklin-barbecue/related", {"direction": "up"}, "direction"),
    ("/v1/pages/entity/franklin-barbecue/related", {"limit": 1000}, "limit"),
    ("/v1/pages/entity/franklin-barbecue/sources", {"limit": -1}, "limit"),
    ("/v1/changes", {"since": "last tuesday"}, "ISO-8601"),
    ("/v1/changes", {"since": "2026-01-01", "cursor": "bogus!"}, "cursor"),
]


async def test_bad_input_is_a_json_422(api):
    base, acme, _ = api
    async with httpx.AsyncClient(base_url=base, timeout=10, headers=bearer(acme)) as http:
        for path, params, fragment in BAD_REQUESTS:
            response = await http.get(path, params=params)
            assert response.status_code == 422, (path, params, response.text)
            assert fragment in response.json()["error"], (path, params, response.text)


async def test_unknown_sections_and_runs_are_404(api):
    base, acme, _ = api
    async with httpx.AsyncClient(base_url=base, timeout=10, headers=bearer(acme)) as http:
        response = await http.get("/v1/pages/entity/franklin-barbecue/sources", params={"section": "visits"})
        assert response.status_code == 404 and "no section 'visits'" in response.json()["error"]
        response = await http.get("/v1/changes", params={"since": str(uuid.uuid4())})
        assert response.status_code == 404 and "no compile run" in response.json()["error"]


async def test_retain_stores_in_the_tokens_scope_and_wakes_its_compile(api, engine, client):
    base, acme, _ = api
    memory = {"content": "Tried the new taco truck on South Congress.", "metadata": {"tags": ["tacos"]}}
    async with httpx.AsyncClient(base_url=base, timeout=20, headers=bearer(acme)) as http:
        response = await http.post("/v1/memories", json={"memories": [memory]})
        assert response.status_code == 202, response.text
        body = response.json()
        assert body["inserted"] == 1 and body["compile_workflow_id"] == f"compile:acme:{OWNER}"
        again = (await http.post("/v1/memories", json={"memories": [memory]})).json()
        assert again["unchanged"] == 1 and again["compile_workflow_id"] is None
    from tests.operators import helpers as db

    stored = await db.rows(engine, "SELECT tenant_id FROM memory_units WHERE content LIKE 'Tried the new taco%'")
    assert [row.tenant_id for row in stored] == ["acme"]
    description = await client.get_workflow_handle(f"compile:acme:{OWNER}").describe()
    assert description.workflow_type == "CompileWorkflow"


async def test_oversized_or_malformed_retains_store_nothing(api, engine):
    base, acme, _ = api
    async with httpx.AsyncClient(base_url=base, timeout=20, headers=bearer(acme)) as http:
        cases = [
            ({"memories": [{"content": "x" * 40_000}]}, 422, "32768"),
            ({"memories": [{"content": f"m{i}"} for i in range(101)]}, 422, "at most 100"),
            ({"memories": []}, 422, "empty"),
            ({"memories": [{"content": "ok", "tenant": "globex"}]}, 422, "tenant"),
            ({"memories": "not a list"}, 422, "memories"),
        ]
        for body, status, fragment in cases:
            response = await http.post("/v1/memories", json=body)
            assert response.status_code == status and fragment in response.json()["error"], response.text
        limit = Settings().http_max_body_bytes
        response = await http.post("/v1/memories", content=b"{" + b" " * limit + b"}",
                                   headers={"content-type": "application/json"})
        assert response.status_code == 413 and "error" in response.json()
        response = await http.post("/v1/memories", content=b"{not json", headers={"content-type": "application/json"})
        assert response.status_code == 422 and response.json()["error"].startswith("malformed JSON: ")
    from tests.operators import helpers as db

    assert len(await db.rows(engine, "SELECT 1 FROM memory_units WHERE tenant_id = 'acme'")) == 3  # the seeded ones


async def test_recall_and_context_answer_in_the_tokens_scope(api):
    base, acme, globex = api
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        for token, tenant in ((acme, "acme"), (globex, "globex")):
            response = await http.get("/v1/recall", params={"q": "Where was the brisket?", "max_tokens": 100},
                                      headers=bearer(token))
            assert response.status_code == 200, response.text
            found = response.json()
            # The seeded memories were never compiled: recall finds them, in this scope only.
            assert found["results"] and all(r["kind"] == "memory" for r in found["results"])
            assert all(r["text"].startswith(f"[{tenant}]") for r in found["results"])
            assert found["tokens_used"] <= 100 and len(response.text) <= 400
            context = await http.get("/v1/context", params={"max_tokens": 100}, headers=bearer(token))
            assert context.status_code == 200 and len(context.text) <= 400
        for params, sentence in (({"q": "brisket", "max_tokens": 0}, "max_tokens must be between 50 and 8000"),
                                 ({"q": "brisket", "without": "vibes"}, "unknown retriever vibes"),
                                 ({"q": ""}, "question must not be empty")):
            refused = await http.get("/v1/recall", params=params, headers=bearer(acme))
            assert refused.status_code == 422 and sentence in refused.json()["error"]


async def test_the_body_never_exceeds_the_budget(api):
    """Random questions and budgets, compact and verbose: the body as received is at most max_tokens × 4
    characters, and tokens_used is its own length over four."""
    import json
    import math
    import random

    base, acme, _ = api
    rng = random.Random(23)
    words = ["brisket", "Franklin", "Austin", "line", "hours", "Sam", "moved", "March", "Texas", "when", "who",
             "barbecue", "long", "\"quoted\"", "café", "🙂", "yesterday"]
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        for _ in range(30):
            budget = rng.choice([50, 51, rng.randint(50, 300), rng.randint(300, 2000)])
            params = {"q": " ".join(rng.sample(words, rng.randint(1, 6))), "max_tokens": budget}
            if rng.random() < 0.4:
                params["verbose"] = "true"
            route = "/v1/recall" if rng.random() < 0.8 else "/v1/context"
            response = await http.get(route, params=params, headers=bearer(acme))
            assert response.status_code == 200, response.text
            assert len(response.text) <= budget * 4, params
            assert json.loads(response.text)["tokens_used"] == math.ceil(len(response.text) / 4)
