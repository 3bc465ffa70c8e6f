"""`wiki token create/list/revoke`, `wiki serve` as a real process, and the servers' bad options."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import uuid
from pathlib import Path

import httpx
from sqlalchemy import text

from runtime.devservices import free_port
from store.api_tokens import scope_of_token
from tests.compile.helpers import poll
from tests.servers.wiki import OWNER, seed_scope
from tests.test_cli import cli_env, wiki  # noqa: F401 - the CLI tests' environment fixture

WIKI = str(Path(sys.executable).with_name("wiki"))


async def test_a_token_is_shown_once_stored_as_a_hash_listed_by_prefix_and_revoked(cli_env, engine):  # noqa: F811
    created = await wiki("token", "create", "--tenant", "acme", "--owner", OWNER, "--name", "laptop")
    assert created.exit_code == 0, created.output
    token = created.stdout.strip().splitlines()[-1]
    assert token.startswith("wk_") and "shown once" in created.stdout
    async with engine.connect() as conn:
        dumped = " ".join(str(v) for row in await conn.execute(text("SELECT * FROM api_tokens")) for v in row)
        assert token not in dumped  # only the hash is kept
        found = await scope_of_token(conn, token)
    assert (found.tenant, found.owner) == ("acme", OWNER)

    as_json = json.loads((await wiki("token", "create", "--tenant", "globex", "--owner", OWNER, "--json")).stdout)
    assert as_json["token"].startswith("wk_") and as_json["tenant"] == "globex"

    listed = await wiki("token", "list", "--json")
    rows = json.loads(listed.stdout)
    assert [(r["tenant"], r["name"]) for r in rows] == [("acme", "laptop"), ("globex", "")]
    assert all(r["prefix"] in (token[:10], as_json["token"][:10]) and "token" not in r for r in rows)
    table = await wiki("token", "list", "--tenant", "acme")
    assert token[:10] in table.stdout and token not in table.stdout and "globex" not in table.stdout

    revoked = await wiki("token", "revoke", str(found.token_id))
    assert revoked.exit_code == 0 and f"revoked token {found.token_id} of acme/{OWNER}" in revoked.stdout
    async with engine.connect() as conn:
        assert await scope_of_token(conn, token) is None
    assert (await wiki("token", "revoke", str(uuid.uuid4()))).exit_code == 1
    assert (await wiki("token", "revoke", "xy")).exit_code == 2  # too short to name one token
    assert (await wiki("token", "revoke", "not-a-token")).exit_code == 1
    # What the list shows is enough to revoke: the id's start, or the token's, with its ellipsis.
    globex_id = as_json["id"]
    assert f"{globex_id[:8]}…" in (await wiki("token", "list", "--tenant", "globex")).stdout
    by_id = await wiki("token", "revoke", f"{globex_id[:8]}…")
    assert by_id.exit_code == 0 and f"revoked token {globex_id} of globex/{OWNER}" in by_id.stdout, by_id.output
    third = json.loads((await wiki("token", "create", "--tenant", "initech", "--owner", OWNER, "--json")).stdout)
    by_token = await wiki("token", "revoke", third["token"][:10] + "…")
    assert by_token.exit_code == 0 and f"revoked token {third['id']}" in by_token.stdout, by_token.output
    bad = await wiki("token", "create", "--tenant", "a b", "--owner", OWNER)
    assert bad.exit_code == 2 and bad.stderr.startswith("error: tenant must be")


async def test_server_options_are_checked(cli_env):  # noqa: F811
    for args, message in [
        (["mcp", "--http", "127.0.0.1"], "--http must be HOST:PORT"),
        (["mcp", "--http", "127.0.0.1:99999"], "--http must be HOST:PORT"),
        (["mcp", "--http", "127.0.0.1:8000", "--tenant", "acme"], "drop --tenant/--owner"),
        (["mcp", "--owner", "alice"], "--tenant and --owner are required"),
        (["mcp", "--tenant", "a/b", "--owner", "alice"], "tenant must be"),
        (["serve", "--port", "0"], "--host/--port must be HOST:PORT"),
    ]:
        result = await wiki(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("error: ") and message in result.stderr, (args, result.stderr)


async def test_wiki_serve_runs_as_a_process(engine, database_url, tmp_path):
    await seed_scope(engine, "acme")
    created = await asyncio.create_subprocess_exec(
        WIKI, "token", "create", "--tenant", "acme", "--owner", OWNER, "--json",
        env={**os.environ, "DATABASE_URL": database_url, "WIKI_DATA_DIR": str(tmp_path)},
        stdout=asyncio.subprocess.PIPE)
    token = json.loads((await asyncio.wait_for(created.communicate(), 60))[0])["token"]
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        WIKI, "serve", "--port", str(port), env={**os.environ, "DATABASE_URL": database_url,
                                                 "WIKI_DATA_DIR": str(tmp_path)},
        stderr=asyncio.subprocess.PIPE)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
            async def up() -> bool:
                if server.returncode is not None:
                    raise AssertionError((await server.stderr.read()).decode())
                try:
                    return (await http.get("/healthz")).status_code == 200
                except httpx.TransportError:
                    return False

            await poll(up, timeout=60, what="wiki serve to listen")
            hits = (await http.get("/v1/search", params={"q": "brisket"},
                                   headers={"Authorization": f"Bearer {token}"})).json()["hits"]
            assert [h["slug"] for h in hits] == ["franklin-barbecue"]
    finally:
        server.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(server.wait(), 30) == 0
    assert f"wiki API at http://127.0.0.1:{port}/v1" in (await server.stderr.read()).decode()


async def test_wiki_mcp_over_http_runs_as_a_process(engine, database_url, tmp_path):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from tests.servers.wiki import token_for

    await seed_scope(engine, "acme")
    token = await token_for(engine, "acme")
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        WIKI, "mcp", "--http", f"127.0.0.1:{port}",
        env={**os.environ, "DATABASE_URL": database_url, "WIKI_DATA_DIR": str(tmp_path)},
        stderr=asyncio.subprocess.PIPE)
    try:
        async def listening() -> bool:
            if server.returncode is not None:
                raise AssertionError((await server.stderr.read()).decode())
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                return False
            writer.close()
            return True

        await poll(listening, timeout=60, what="wiki mcp --http to listen")
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as mcp:
            result = await mcp.call_tool("search", {"query": "brisket"})
            assert not result.is_error and result.structured_content["hits"][0]["slug"] == "franklin-barbecue"
    finally:
        server.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(server.wait(), 30) == 0


async def test_a_token_has_rights_read_by_default_and_an_optional_expiry(cli_env, engine):  # noqa: F811
    plain = json.loads((await wiki("token", "create", "--tenant", "acme", "--owner", OWNER, "--json")).stdout)
    assert plain["rights"] == "read" and plain["expires_at"] is None
    writer = await wiki("token", "create", "--tenant", "acme", "--owner", OWNER, "--rights", "write",
                        "--expires", "30d")
    assert writer.exit_code == 0 and writer.stdout.startswith("write token ") and " until " in writer.stdout
    writer_expiry = writer.stdout.split(" until ")[1][:10]
    dated = json.loads((await wiki("token", "create", "--tenant", "acme", "--owner", OWNER, "--rights", "operator",
                                   "--expires", "2999-01-31", "--json")).stdout)
    assert dated["rights"] == "operator" and dated["expires_at"].startswith("2999-01-31T00:00:00")
    async with engine.connect() as conn:
        found = await scope_of_token(conn, dated["token"])
    assert found.rights == "operator" and not found.expired
    listed = json.loads((await wiki("token", "list", "--json")).stdout)
    assert [(row["rights"], (row["expires_at"] or "")[:10]) for row in listed] == [
        ("read", ""), ("write", writer_expiry), ("operator", "2999-01-31")]
    for args, message in [(["--rights", "admin"], "--rights must be one of read, write, operator"),
                          (["--expires", "2001-01-01"], "--expires 2001-01-01 is already past"),
                          (["--expires", "0d"], "--expires must be a positive duration"),
                          (["--expires", "soon"], "--expires must be a duration")]:
        bad = await wiki("token", "create", "--tenant", "acme", "--owner", OWNER, *args)
        assert bad.exit_code == 2 and bad.stderr.startswith(f"error: {message}"), (args, bad.stderr)
