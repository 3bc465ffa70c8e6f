"""The MCP server with the `mcp` SDK's own client: over stdio (`wiki mcp` as a subprocess, as an MCP
client launches it) and over streamable HTTP (uvicorn on a loopback port, a bearer token per scope)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from temporalio.client import Client as TemporalClient

from servers.mcp_server import TokenScopes, build_server, http_app, scope_from_token
from tests.operators import helpers as db
from tests.servers.conftest import connecting, serving
from tests.servers.wiki import OWNER, seed_tenants, token_for

TOOLS = {"recall", "context", "search", "get_page", "get_sources", "related", "changes_since", "retain",
         "retain_conversation", "forget"}
WIKI = str(Path(sys.executable).with_name("wiki"))


def data(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error
    return " ".join(block.text for block in result.content)


async def test_stdio_server_serves_its_scope_to_the_sdk_client(engine, database_url, tmp_path):
    await seed_tenants(engine)
    await db.page(engine, "globex", OWNER, "globex-only", title="Globex Only")
    env = {**os.environ, "DATABASE_URL": database_url, "TEMPORAL_ADDRESS": "127.0.0.1:9",
           "WIKI_DATA_DIR": str(tmp_path / "data")}
    params = StdioServerParameters(command=WIKI, args=["mcp", "--tenant", "acme", "--owner", OWNER], env=env)
    async with Client(params, read_timeout_seconds=30) as mcp:
        tools = (await mcp.list_tools()).tools
        assert {tool.name for tool in tools} == TOOLS
        assert all(tool.description and len(tool.description) < 200 for tool in tools)  # short: tools cost context
        assert all("tenant" not in json.dumps(tool.input_schema) for tool in tools)  # the scope is no argument

        hits = data(await mcp.call_tool("search", {"query": "brisket", "limit": 5}))["hits"]
        assert hits[0]["slug"] == "franklin-barbecue" and "(acme)" in hits[0]["summary"]
        assert set(hits[0]) >= {"type", "slug", "title", "summary", "score"}

        page = data(await mcp.call_tool("get_page", {"name": "Franklin's"}))
        assert page["matched_by"] == "alias" and "## Overview {#overview}" in page["markdown"]
        assert "(acme)" in page["markdown"] and "globex" not in page["markdown"]
        part = data(await mcp.call_tool("get_page", {"name": "franklin-barbecue", "max_chars": 200}))
        rest = data(await mcp.call_tool("get_page", {"name": "franklin-barbecue", "offset": part["next_offset"],
                                                     "max_chars": 200}))
        assert part["next_offset"] and (part["markdown"] + rest["markdown"]).startswith(page["markdown"][:300])

        sources = data(await mcp.call_tool("get_sources", {"page": "entity/franklin-barbecue", "section": "notes"}))
        assert [m["content"] for m in sources["memories"]] == ["[acme] The line at Franklin was two hours long."]

        related = data(await mcp.call_tool("related", {"page": "franklin-barbecue", "limit": 2}))
        assert len(related["hits"]) == 2 and related["cone_size"] == 3

        changes = data(await mcp.call_tool("changes_since", {"since": "2000-01-01T00:00:00Z"}))
        assert len(changes["pages"]) == 4

        assert "no page named 'Globex Only'" in error_text(await mcp.call_tool("get_page", {"name": "Globex Only"}))
        assert "limit" in error_text(await mcp.call_tool("search", {"query": "x", "limit": 10**9}))
        assert "query must not be empty" in error_text(await mcp.call_tool("search", {"query": ""}))
        assert "cannot reach Temporal" in error_text(await mcp.call_tool("retain", {"memories": [{"content": "x"}]}))
    assert len(await db.rows(engine, "SELECT 1 FROM memory_units WHERE content = 'x'")) == 0  # nothing stored


async def test_stdio_refuses_a_missing_scope(database_url, tmp_path):
    import asyncio

    env = {**os.environ, "DATABASE_URL": database_url, "WIKI_DATA_DIR": str(tmp_path / "data")}
    process = await asyncio.create_subprocess_exec(WIKI, "mcp", "--tenant", "acme", env=env,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 2 and stdout == b""
    assert stderr.decode().startswith("error: --tenant and --owner are required over stdio")


@pytest.fixture
async def mcp_http(engine, client: TemporalClient, server_settings):
    await seed_tenants(engine)

    server = build_server(engine, scope_from_token, connecting(client), server_settings, token_verifier=TokenScopes(engine))
    async with serving(http_app(server, "127.0.0.1", engine, server_settings)) as base:
        yield f"{base}/mcp"


def over_http(url: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=30)),
                  read_timeout_seconds=30)


async def test_http_server_takes_the_scope_from_the_bearer_token(mcp_http, engine):
    acme, globex = await token_for(engine, "acme"), await token_for(engine, "globex")
    for token, tenant in ((acme, "acme"), (globex, "globex")):
        async with over_http(mcp_http, token) as mcp:
            assert {tool.name for tool in (await mcp.list_tools()).tools} == TOOLS
            page = data(await mcp.call_tool("get_page", {"name": "entity/franklin-barbecue"}))
            assert f"({tenant})" in page["markdown"]
            sources = data(await mcp.call_tool("get_sources", {"page": "franklin-barbecue"}))
            assert all(m["content"].startswith(f"[{tenant}]") for m in sources["memories"])
            summary = data(await mcp.call_tool("retain", {"memories": [{"content": f"{tenant} likes tacos"}]}))
            assert summary["inserted"] == 1 and summary["compile_workflow_id"] == f"compile:{tenant}:{OWNER}"
    rows = await db.rows(engine, "SELECT tenant_id, content FROM memory_units WHERE content LIKE '% likes tacos' "
                                 "ORDER BY tenant_id")
    assert [(r.tenant_id, r.content) for r in rows] == [("acme", "acme likes tacos"), ("globex", "globex likes tacos")]


async def test_http_server_refuses_requests_without_a_live_token(mcp_http):
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "test", "version": "0"}}}
    async with httpx2.AsyncClient(timeout=10) as http:
        for headers in ({}, {"Authorization": "Bearer wk_" + "A" * 43}, {"Authorization": "Bearer junk"}):
            response = await http.post(mcp_http, json=initialize,
                                       headers={**headers, "Accept": "application/json, text/event-stream"})
            assert response.status_code == 401, response.text
    # The SDK's own client fails to connect at all without a token (its error wrapped by anyio task groups).
    with pytest.raises(ExceptionGroup) as failed:
        async with over_http(mcp_http, None) as mcp:
            await mcp.list_tools()
    assert failed.group_contains(MCPError, match="error response", depth=None)


async def test_over_http_a_read_token_reads_but_cannot_retain(mcp_http, engine):
    reader = await token_for(engine, "acme", rights="read")
    async with over_http(mcp_http, reader) as mcp:
        assert "(acme)" in data(await mcp.call_tool("get_page", {"name": "entity/franklin-barbecue"}))["markdown"]
        refused = await mcp.call_tool("retain", {"memories": [{"content": "a reader writes"}]})
    assert refused.is_error and refused.content[0].text.endswith(
        "this read token cannot retain; create one with `wiki token create --rights write`")
    assert await db.rows(engine, "SELECT 1 FROM memory_units WHERE content = 'a reader writes'") == []


async def test_over_http_forget_previews_for_any_token_and_forgets_only_for_a_writer(mcp_http, engine):
    moved = (await db.rows(engine, "SELECT id::text AS id FROM memory_units WHERE tenant_id = 'acme' "
                                   "AND content LIKE '%Moved to Austin%'"))[0].id
    globex_token = await token_for(engine, "globex")
    reader = await token_for(engine, "acme", rights="read")
    async with over_http(mcp_http, reader) as mcp:
        radius = data(await mcp.call_tool("forget", {"memory_ids": [moved], "dry_run": True}))
        assert [p["name"].split(" (")[0] for p in radius["blast_radius"]["pages_removed"]] == ["entity/austin-texas"]
        refused = await mcp.call_tool("forget", {"memory_ids": [moved]})
    assert refused.is_error and "this read token cannot forget" in refused.content[0].text
    async with over_http(mcp_http, globex_token) as mcp:
        # Another scope's memory is exactly an absent one.
        assert "no memory" in error_text(await mcp.call_tool("forget", {"memory_ids": [moved],
                                                                        "dry_run": True}))
    assert await db.rows(engine, "SELECT 1 FROM wiki_forget_requests") == []


async def test_the_recall_result_never_exceeds_the_budget(mcp_http, engine):
    """Random questions and budgets: recall's and context's result is one text, the body an HTTP client
    gets, at most max_tokens × 4 characters, with nothing else beside it (no structured copy)."""
    import math
    import random

    rng = random.Random(29)
    words = ["brisket", "Franklin", "Austin", "line", "hours", "Sam", "moved", "March", "when", "who", "café", "🙂"]
    async with over_http(mcp_http, await token_for(engine, "acme")) as mcp:
        for _ in range(15):
            budget = rng.choice([50, rng.randint(50, 300), rng.randint(300, 2000)])
            verbose = rng.random() < 0.4
            if rng.random() < 0.8:
                result = await mcp.call_tool("recall", {"question": " ".join(rng.sample(words, rng.randint(1, 5))),
                                                        "max_tokens": budget, "verbose": verbose})
            else:
                result = await mcp.call_tool("context", {"max_tokens": budget, "verbose": verbose})
            assert not result.is_error and result.structured_content is None and len(result.content) == 1
            body = result.content[0].text
            assert len(body) <= budget * 4 and json.loads(body)["tokens_used"] == math.ceil(len(body) / 4)
