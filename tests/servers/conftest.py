"""Fixtures of the server tests: settings for a private task queue, and a uvicorn server on a free
loopback port running in the test's own event loop."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import uvicorn

from runtime.devservices import free_port
from runtime.settings import Settings
from tests.compile.helpers import poll


@pytest.fixture
def server_settings() -> Settings:
    return Settings(WIKI_TASK_QUEUE=f"tq-{uuid.uuid4()}", WIKI_LLM="scripted", WIKI_DEBOUNCE_SECONDS=0)


def connecting(client):
    """The `connect` a server takes: it hands out the test's own Temporal client."""
    async def connect():
        return client

    return connect


@asynccontextmanager
async def serving(app, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """`app` served by uvicorn at http://host:port until the block ends."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve())

    async def started() -> bool:
        if task.done():
            task.result()  # a server that failed to start raises here
        return server.started

    try:
        await poll(started, timeout=20, what="uvicorn to start")
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, timeout=20)
