"""Generated bad input against every route of the HTTP API: whatever arrives (control characters,
NUL, lone surrogates, bytes that are not UTF-8, numbers out of range, dates at the ends of time,
JSON of any shape), the answer is never a 500 and every refusal is one sentence of JSON."""

from __future__ import annotations

import json
from urllib.parse import quote_from_bytes

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from temporalio.client import Client

from runtime.settings import Settings
from servers.http_api import create_app
from tests.servers.conftest import connecting
from tests.servers.wiki import seed_scope, token_for

EDGE_VALUES = [
    "", " ", "\x00", "a\x00b", "\x1b[2J", "\u202e", "12345", "-1", "0", "1e999", "NaN", "99999999999999999999",
    "0001-01-01T00:00:00Z", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59-05:00",
    "2026-02-30", "entity/", "/", "..", "%00", "x" * 600,
]

text_values = st.one_of(st.sampled_from(EDGE_VALUES), st.text(st.characters(exclude_categories=()), max_size=40))
# Query and path values are sent as raw bytes, percent-encoded: UTF-8 of any text, lone surrogates
# included (encoded with surrogatepass), or bytes that are no UTF-8 at all.
raw_values = st.one_of(text_values.map(lambda value: value.encode("utf-8", "surrogatepass")),
                       st.binary(max_size=24))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text_values,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text_values, children, max_size=4),
    max_leaves=12)
memory_like = st.dictionaries(st.sampled_from(["content", "id", "metadata", "occurred_at", "tenant"]), json_values,
                              max_size=4)
bodies = st.one_of(
    st.binary(max_size=64),
    json_values.map(lambda value: json.dumps(value).encode()),
    st.lists(memory_like, max_size=3).map(lambda memories: json.dumps({"memories": memories}).encode()),
    st.lists(memory_like, max_size=3).map(lambda memories: json.dumps({"memories": memories}).encode()[:-3]),
)

ROUTES = [
    ("/v1/search", ["q", "limit"]),
    ("/v1/pages", ["name", "offset", "max_chars"]),
    ("/v1/pages/{type}/{slug}", ["offset", "max_chars"]),
    ("/v1/pages/{type}/{slug}/sources", ["section", "limit"]),
    ("/v1/pages/{type}/{slug}/related", ["limit", "direction", "max_hops", "query"]),
    ("/v1/changes", ["since", "limit", "cursor"]),
]


@st.composite
def requests(draw) -> tuple[str, str, bytes | None]:
    if draw(st.integers(0, 4)) == 0:
        return "POST", "/v1/memories", draw(bodies)
    template, names = draw(st.sampled_from(ROUTES))
    path = template.format(type=draw(st.sampled_from(["entity", "topic", "decision", "nope"])),
                           slug=quote_from_bytes(draw(raw_values) or b"x", safe=""))
    chosen = draw(st.lists(st.sampled_from(names), unique=True))
    query = "&".join(f"{name}={quote_from_bytes(draw(raw_values), safe='')}" for name in chosen)
    return "GET", f"{path}?{query}" if query else path, None


@pytest.fixture
async def api_client(engine, client: Client, server_settings):
    """An in-process client of the API over one seeded tenant, with a write token."""
    await seed_scope(engine, "acme")
    token = await token_for(engine, "acme", rights="write")

    generous = Settings(WIKI_TASK_QUEUE=server_settings.task_queue, WIKI_HTTP_RATE_PER_SECOND=10_000,
                        WIKI_HTTP_RATE_BURST=10_000)
    transport = httpx.ASGITransport(app=create_app(engine, connecting(client), generous))
    async with httpx.AsyncClient(transport=transport, base_url="http://api", timeout=30,
                                 headers={"Authorization": f"Bearer {token}"}) as http:
        yield http


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=requests())
async def test_no_generated_request_gets_a_500(api_client, call):
    method, path, body = call
    response = await api_client.request(method, path, content=body)
    assert response.status_code < 500, (method, path, body, response.status_code, response.text)
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error and "\n" not in error, (path, error)
