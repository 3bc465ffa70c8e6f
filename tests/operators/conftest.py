"""Fixtures of the operator tests."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from runtime.settings import Settings, get_settings


@pytest.fixture
def settings(database_url: str, client: Client, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    """The CLI's environment, as the worker sees it too: the test database, the session's Temporal, a
    private task queue, the scripted planner and batches of ten."""
    env = {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "WIKI_TASK_QUEUE": f"tq-{uuid.uuid4()}",
        "WIKI_LLM": "scripted",
        "WIKI_DEBOUNCE_SECONDS": "0",
        "WIKI_RECORD_PAGE_SIZE": "10",
        "WIKI_DATA_DIR": str(tmp_path / "data"),
        "COLUMNS": "200",  # Rich tables unwrapped, so lines can be matched
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TEMPORAL_NAMESPACE", raising=False)
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()
