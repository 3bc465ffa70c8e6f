"""WIKI_EMBEDDINGS=openai-compatible: recall's vectors from an OpenAI-compatible server's /v1/embeddings,
through the `openai` SDK, against the fake of a local server (openai_sim/), reached by its base URL."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from activities.claim_vectors import embed_new_claims
from app.reads import ReadScope
from app.recall import embedder_for, recall
from domain.errors import EmbeddingsRejected, EmbeddingsThrottled
from messages.compile import Scope
from planners.embedding_providers import SERVER_BATCH, RetryPolicy, ServerEmbedder
from runtime.settings import ConfigError, load_settings
from tests.recall.wiki import OWNER, TENANT, entity, fact


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def policy(budget: float = 60.0) -> RetryPolicy:
    clock = Clock()
    return RetryPolicy(budget_seconds=budget, sleep=clock.sleep, clock=lambda: clock.now)


def server_embedder(openai_sim, model: str = "nomic-embed-text", dimensions: int = 768,
                    retry: RetryPolicy | None = None) -> ServerEmbedder:
    return ServerEmbedder(model, dimensions, openai_sim.base_url, None, retry or policy())


async def test_texts_are_embedded_in_batches_as_floats_into_unit_vectors(openai_sim) -> None:
    texts = [f"memory number {n} about chess" for n in range(SERVER_BATCH + 5)]
    vectors = await asyncio.to_thread(server_embedder(openai_sim).embed, texts)
    calls = openai_sim.of_kind("embeddings")
    assert vectors.shape == (len(texts), 768)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert [len(c.body["input"]) for c in calls] == [SERVER_BATCH, 5]
    assert all(c.body["encoding_format"] == "float" and "dimensions" not in c.body for c in calls)


async def test_a_busy_server_is_waited_out_after_its_retry_after(openai_sim) -> None:
    openai_sim.fail_next("overloaded", "embeddings", retry_after=3)
    retry = policy()
    vectors = await asyncio.to_thread(server_embedder(openai_sim, retry=retry).embed, ["one text"])
    assert vectors.shape == (1, 768) and retry.waits == [3.0]


async def test_a_server_that_stays_busy_gives_up_with_the_named_failure(openai_sim) -> None:
    openai_sim.fail_always("rate_limit", "embeddings", retry_after=2)
    with pytest.raises(EmbeddingsThrottled):
        await asyncio.to_thread(server_embedder(openai_sim, retry=policy(budget=5)).embed, ["one text"])


@pytest.mark.parametrize(("model", "dimensions", "named"), [("nomic-embed-text", 1024, "WIKI_EMBEDDINGS_DIMENSIONS=768"),
                                                            ("no-such-model", 768, "WIKI_EMBEDDINGS_MODEL")])
async def test_a_wrong_size_or_model_is_rejected_naming_the_setting(openai_sim, model, dimensions, named) -> None:
    with pytest.raises(EmbeddingsRejected, match=named):
        await asyncio.to_thread(server_embedder(openai_sim, model, dimensions).embed, ["one text"])


@pytest.mark.parametrize(("env", "variable"), [
    ({"WIKI_EMBEDDINGS": "openai-compatible", "WIKI_EMBEDDINGS_DIMENSIONS": "768",
      "WIKI_OPENAI_SERVER": "ollama"}, "WIKI_EMBEDDINGS_MODEL"),
    ({"WIKI_EMBEDDINGS": "openai-compatible", "WIKI_EMBEDDINGS_MODEL": "nomic-embed-text",
      "WIKI_OPENAI_SERVER": "ollama"}, "WIKI_EMBEDDINGS_DIMENSIONS"),
    ({"WIKI_EMBEDDINGS": "openai-compatible", "WIKI_EMBEDDINGS_MODEL": "nomic-embed-text",
      "WIKI_EMBEDDINGS_DIMENSIONS": "768"}, "WIKI_EMBEDDINGS_BASE_URL"),
    ({"WIKI_EMBEDDINGS": "openai-compatible", "WIKI_EMBEDDINGS_MODEL": "nomic-embed-text",
      "WIKI_EMBEDDINGS_DIMENSIONS": "768", "WIKI_EMBEDDINGS_BASE_URL": "localhost:11434"}, "WIKI_EMBEDDINGS_BASE_URL"),
])
def test_bad_server_embedding_settings_name_the_variable(monkeypatch, env, variable) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=variable):
        load_settings()


def test_the_embeddings_server_defaults_to_the_model_servers_address(monkeypatch) -> None:
    for name, value in {"WIKI_EMBEDDINGS": "openai-compatible", "WIKI_EMBEDDINGS_MODEL": "nomic-embed-text",
                        "WIKI_EMBEDDINGS_DIMENSIONS": "768", "WIKI_OPENAI_SERVER": "ollama"}.items():
        monkeypatch.setenv(name, value)
    assert load_settings().embeddings_base_url == "http://127.0.0.1:11434/v1"
    monkeypatch.setenv("WIKI_OPENAI_BASE_URL", "http://gpu-box:8000/v1/")
    assert load_settings().embeddings_base_url == "http://gpu-box:8000/v1"


async def test_recall_scores_the_servers_vectors(engine, openai_sim, monkeypatch) -> None:
    page = await entity(engine, "Jonas Berg")
    for line in ("Adopted a puppy called Rex.", "Bought a red bicycle.", "Plays chess on Sundays."):
        await fact(engine, page, line)
    for name, value in {"WIKI_EMBEDDINGS": "openai-compatible", "WIKI_EMBEDDINGS_MODEL": "nomic-embed-text",
                        "WIKI_EMBEDDINGS_DIMENSIONS": "768", "WIKI_OPENAI_BASE_URL": openai_sim.base_url}.items():
        monkeypatch.setenv(name, value)
    provider = embedder_for(load_settings())
    assert provider is not None
    assert await embed_new_claims(engine, Scope(tenant=TENANT, owner=OWNER), provider) == 3
    found = await recall(engine, ReadScope.of(TENANT, OWNER), "Who plays chess on Sundays?", embedder=provider)
    semantic = [r for r in found.results if "semantic" in r.signals]
    assert semantic and semantic[0].text == "Plays chess on Sundays."
    assert openai_sim.calls[-1].body["input"] == ["Who plays chess on Sundays?"]
