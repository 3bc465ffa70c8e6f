"""`wiki ui`: a read token for the scope, printed once, and `wiki serve` on loopback where that token
signs a browser in."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import httpx

from runtime.devservices import free_port
from tests.compile.helpers import poll
from tests.web.conftest import OWNER, TENANT, ServedWiki


async def test_wiki_ui_prints_a_read_token_that_signs_in(served_wiki: ServedWiki, tmp_path):
    port = free_port()
    wiki = str(Path(sys.executable).with_name("wiki"))
    process = await asyncio.create_subprocess_exec(
        wiki, "ui", "--tenant", TENANT, "--owner", OWNER, "--port", str(port), "--no-open",
        env={**os.environ, "DATABASE_URL": served_wiki.database_url, "WIKI_DATA_DIR": str(tmp_path)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        token = (await asyncio.wait_for(process.stdout.readline(), 60)).decode().strip()
        assert token.startswith("wk_")
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            async def answering() -> bool:
                try:
                    return (await http.get("/healthz")).status_code == 200
                except httpx.TransportError:
                    return False

            await poll(answering, timeout=60, what="wiki ui's server")
            form = await http.get("/sign-in")
            nonce = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
            signed = await http.post("/sign-in", data={"csrf": nonce, "token": token}, headers={"Origin": base})
            assert signed.status_code == 303
            home = await http.get("/")
            assert home.status_code == 200 and f"{TENANT}/{OWNER} · read" in home.text
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 30)
