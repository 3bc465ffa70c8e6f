"""Conversations in through the agents' boundaries (`wiki retain --conversation` is in
tests/operators/test_cli_conversation.py): `POST /v1/conversations` and the MCP tool `retain_conversation` store each message as a turn (speaker, role, conversation, position),
all or nothing, idempotent per conversation and turn; the scope's user keeps one name."""

from __future__ import annotations

import httpx
import pytest
from mcp import Client as McpClient
from temporalio.client import Client

from app.reads import ReadScope
from servers.http_api import create_app
from servers.mcp_server import build_server
from store.memories import turns_around
from tests.operators import helpers as db
from tests.servers.conftest import serving
from tests.servers.wiki import OWNER, token_for

CONVERSATION = {"id": "chat-1", "user": "Priya", "messages": [
    {"speaker": "user", "text": "We moved. Our new flat is on Elm Road.", "time": "2026-10-03T19:30:00Z"},
    {"speaker": "assistant", "text": "Congratulations! How is the neighbourhood?"},
    {"speaker": "user", "text": "Quiet. I adopted a second cat too.", "time": "2026-10-03T19:32:00Z"},
    {"speaker": "Sam", "text": "Hey Priya! Say hi to Miso for me."},
]}


async def _turns(engine, tenant: str) -> list:
    return await db.rows(engine, "SELECT content, speaker, speaker_role, conversation_id, position FROM memory_units "
                                 "WHERE tenant_id = :t ORDER BY position", t=tenant)


async def test_the_http_route_stores_turns_all_or_nothing_and_once(engine, client: Client, server_settings):
    async def connect() -> Client:
        return client

    write = await token_for(engine, "talk-http", rights="write")
    read = await token_for(engine, "talk-http", rights="read")
    async with serving(create_app(engine, connect, server_settings)) as base, \
            httpx.AsyncClient(base_url=base, timeout=20, headers={"Authorization": f"Bearer {write}"}) as http:
        response = await http.post("/v1/conversations", json=CONVERSATION)
        assert response.status_code == 202, response.text
        body = response.json()
        assert (body["inserted"], body["turns"], body["user"], body["conversation"]) == (4, 4, "Priya", "chat-1")
        again = (await http.post("/v1/conversations", json=CONVERSATION)).json()
        assert (again["inserted"], again["unchanged"], again["compile_workflow_id"]) == (0, 4, None)
        appended = {"id": "chat-1", "messages": [{"speaker": "user", "text": "Miso is fine.", "position": 4}]}
        assert (await http.post("/v1/conversations", json=appended)).json()["inserted"] == 1  # the user's name is kept
        for bad, fragment in [
            ({**CONVERSATION, "user": "Mel"}, "this wiki's user is named 'Priya'"),
            ({"id": "chat-2", "messages": [{"speaker": "Ana", "text": "x" * 40_000}]}, "32768"),
            ({"id": "chat-2", "messages": [{"speaker": "Ana", "text": "hi"}] * 1001}, "at most 1000 messages"),
            ({"id": "chat-2", "messages": [{"speaker": "Ana", "text": "hi", "extra": {"a": {"b": 1}}}]}, "nests"),
            ({"id": "chat-2", "messages": [{"speaker": "Ana", "text": "ok"}, {"speaker": "<script>", "text": "x"}]},
             "messages[1].speaker"),
        ]:
            refused = await http.post("/v1/conversations", json=bad)
            assert refused.status_code == 422 and fragment in refused.json()["error"], refused.text
        malformed = await http.post("/v1/conversations", content=b"{not json",
                                    headers={"content-type": "application/json"})
        assert malformed.status_code == 422 and malformed.json()["error"].startswith("malformed JSON")
        reader = await http.post("/v1/conversations", json=CONVERSATION, headers={"Authorization": f"Bearer {read}"})
        assert reader.status_code == 403
    rows = await _turns(engine, "talk-http")
    assert [(r.speaker, r.speaker_role, r.conversation_id, r.position) for r in rows] == [
        ("Priya", "user", "chat-1", 0), ("Assistant", "assistant", "chat-1", 1), ("Priya", "user", "chat-1", 2),
        ("Sam", None, "chat-1", 3), ("Priya", "user", "chat-1", 4)]
    assert rows[0].content == "Priya: We moved. Our new flat is on Elm Road."
    ids = [r.id for r in await db.rows(engine, "SELECT id FROM memory_units WHERE tenant_id = 'talk-http' "
                                               "AND position = 2")]
    async with engine.connect() as conn:
        around = await turns_around(conn, "talk-http", OWNER, ids, 1, 1)
    assert [t.position for t in next(iter(around.values()))] == [1, 2, 3]


@pytest.fixture
def mcp_server(engine, client: Client, server_settings):
    async def connect() -> Client:
        return client

    return build_server(engine, lambda: ReadScope.of("talk-mcp", OWNER), connect, server_settings)


async def test_the_mcp_tool_stores_a_conversation_and_refuses_a_bad_one(engine, mcp_server):
    async with McpClient(mcp_server) as mcp:
        result = await mcp.call_tool("retain_conversation", {"id": "chat-1", "user": "Priya",
                                                             "messages": CONVERSATION["messages"]})
        assert not result.is_error and result.structured_content["inserted"] == 4
        refused = await mcp.call_tool("retain_conversation", {"id": "chat 1", "messages": [{"speaker": "Ana",
                                                                                            "text": "hi"}]})
        assert refused.is_error and "id must be 1-128" in " ".join(block.text for block in refused.content)
    assert len(await _turns(engine, "talk-mcp")) == 4
