"""What an agent reads of the MCP server before and after a call, in process with the SDK's own client:
tool descriptions without source indentation, every argument described with its limits, a server
version, argument errors in one sentence (as the CLI and HTTP say them), results not repeated as
indented text."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from app.reads import ReadScope
from servers.mcp_server import build_server
from tests.servers.wiki import OWNER, seed_scope


@pytest.fixture
async def server(engine, server_settings):
    await seed_scope(engine, "surface")

    async def no_temporal():
        raise AssertionError("these calls never reach Temporal")

    return build_server(engine, lambda: ReadScope.of("surface", OWNER), no_temporal, server_settings)


async def test_tools_are_described_field_by_field_with_their_limits(server):
    async with Client(server) as mcp:
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
    for tool in tools.values():
        assert tool.description and "\n" not in tool.description and "  " not in tool.description, tool.name
        for name, field in tool.input_schema["properties"].items():
            assert field.get("description"), f"{tool.name}.{name} is not described"
            if "maximum" in field:
                assert f"{field['minimum']}-{field['maximum']}" in field["description"], (tool.name, name)
    related = tools["related"].input_schema["properties"]
    assert "out (pages this one links to)" in related["direction"]["description"]
    assert "1-6" in related["max_hops"]["description"]
    memories = tools["retain"].input_schema["properties"]["memories"]["description"]
    for fragment in ("32 KiB", "metadata.entities", "metadata.place", "metadata.journal", "reads the names"):
        assert fragment in memories


async def test_the_server_says_its_version(server):
    async with Client(server) as mcp:
        assert mcp.server_info.name == "wiki" and mcp.server_info.version not in ("", None)


@pytest.mark.parametrize(("tool", "arguments", "sentence"), [
    ("search", {"query": "x", "limit": 51}, "limit must be between 1 and 50 (got 51)"),
    ("search", {"query": "x", "limit": "many"}, "limit must be a whole number (got 'many')"),
    ("search", {}, "query is required"),
    ("search", {"query": ""}, "query must not be empty"),
    ("related", {"page": "x", "direction": "up"}, "direction must be 'out', 'in' or 'both' (got 'up')"),
    ("related", {"page": "x", "max_hops": 0}, "max_hops must be between 1 and 6 (got 0)"),
    ("retain", {"memories": []}, "memories must have at least 1 item(s)"),
    ("retain", {"memories": [{"content": ""}]}, "memories[0]: content must not be empty"),
    ("get_page", {"name": "nothing-here"}, "no page named 'nothing-here' in this wiki"),
])
async def test_argument_errors_are_one_sentence_without_links(server, tool, arguments, sentence):
    async with Client(server) as mcp:
        result = await mcp.call_tool(tool, arguments)
    assert result.is_error
    text = " ".join(block.text for block in result.content)
    assert text.startswith(sentence), text
    assert "\n" not in text and "http" not in text and "validation error" not in text and "Error executing" not in text


async def test_a_result_is_not_repeated_as_indented_text(server):
    async with Client(server) as mcp:
        result = await mcp.call_tool("search", {"query": "brisket"})
    assert not result.is_error and result.structured_content["hits"]
    [block] = result.content
    assert json.loads(block.text) == result.structured_content
    assert "\n" not in block.text
