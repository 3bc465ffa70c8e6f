"""A provider's embeddings behind WIKI_EMBEDDINGS: the real clients (httpx for Voyage, boto3 for
Bedrock) against a local fake speaking each wire format, reached through their base-URL settings.
Batching, retries by named failure, the settings' errors, and a change of model embedding the
claims again instead of mixing vectors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sqlalchemy import text

from activities.claim_vectors import embed_new_claims
from app.reads import ReadScope
from app.recall import embedder_for, recall
from domain.errors import EmbeddingsRejected, EmbeddingsThrottled, EmbeddingsUnavailable
from messages.compile import Scope
from planners.embedding_providers import (
    COHERE_BATCH,
    VOYAGE_BATCH,
    BedrockEmbedder,
    RetryPolicy,
    VoyageEmbedder,
)
from planners.embeddings import static_embedder
from runtime.settings import ConfigError, load_settings
from tests.recall.embeddings_fake import FakeEmbeddings, Fault
from tests.recall.wiki import OWNER, TENANT, entity, fact


@pytest.fixture
def fake():
    with FakeEmbeddings() as server:
        yield server


class Clock:
    """A retry policy's time: waits advance it instead of passing."""

    def __init__(self) -> None:
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def policy(budget: float = 60.0) -> tuple[RetryPolicy, Clock]:
    clock = Clock()
    return RetryPolicy(budget_seconds=budget, sleep=clock.sleep, clock=lambda: clock.now), clock


def voyage(fake: FakeEmbeddings, retry: RetryPolicy, dimensions: int = 512) -> VoyageEmbedder:
    return VoyageEmbedder("voyage-3.5-lite", dimensions, "test-key", f"{fake.url}/v1", retry)


@pytest.fixture
def bedrock_env(fake, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", fake.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    for name in ("AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")


@pytest.mark.parametrize("count", [1, VOYAGE_BATCH, 2 * VOYAGE_BATCH + 3])
def test_voyage_embeds_in_batches_documents_and_questions_apart(fake, count):
    texts = [f"claim number {i} about the harbour" for i in range(count)]
    vectors = voyage(fake, policy()[0]).embed(texts)
    assert vectors.shape == (count, 512) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert [len(r.body["input"]) for r in fake.requests] == [
        min(VOYAGE_BATCH, count - start) for start in range(0, count, VOYAGE_BATCH)]
    assert {(r.path, r.headers["authorization"], r.body["model"], r.body["input_type"], r.body["output_dimension"])
            for r in fake.requests} == {("/v1/embeddings", "Bearer test-key", "voyage-3.5-lite", "document", 512)}
    # Rows come back in the order of the texts, whatever order the reply lists them in.
    assert np.allclose(vectors[-1], voyage(fake, policy()[0]).embed([texts[-1]])[0])
    voyage(fake, policy()[0]).embed(["where is the harbour?"], "query")
    assert fake.requests[-1].body["input_type"] == "query"


def test_voyage_waits_out_throttling_and_outages_then_answers(fake):
    retry, clock = policy()
    fake.fail_next(Fault(429, {"Retry-After": "7"}), Fault(503), Fault(429, {"Retry-After": "2"}))
    vectors = voyage(fake, retry).embed(["Bought a red bicycle."])
    assert vectors.shape == (1, 512) and len(fake.requests) == 4
    # The outage waits the backoff, which has doubled once since the first failure (with jitter).
    assert retry.waits[0] == 7 and retry.waits[2] == 2 and 0 < retry.waits[1] <= 2 * retry.first_backoff_seconds
    assert clock.now == sum(retry.waits)


@pytest.mark.parametrize(("fault", "failure"), [
    (Fault(429, {"Retry-After": "5"}), EmbeddingsThrottled),
    (Fault(502), EmbeddingsUnavailable),
])
def test_voyage_gives_up_with_the_named_failure_once_the_budget_is_spent(fake, fault, failure):
    retry, clock = policy(budget=30)
    fake.fail_next(*itertools.repeat(fault, 50))
    with pytest.raises(failure, match="still failing after 30 s"):
        voyage(fake, retry).embed(["anything"])
    assert clock.now <= 30 and len(fake.requests) == len(retry.waits) + 1 >= 2


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_voyage_rejection_fails_at_once(fake, status):
    retry, _ = policy()
    fake.fail_next(Fault(status))
    with pytest.raises(EmbeddingsRejected, match=f"rejected the request \\({status}\\): scripted"):
        voyage(fake, retry).embed(["anything"])
    assert len(fake.requests) == 1 and retry.waits == []


def test_voyage_unreachable_is_unavailable(fake):
    retry, _ = policy(budget=1)
    closed = VoyageEmbedder("voyage-3.5-lite", 512, "k", "http://127.0.0.1:9/v1", retry)  # discard port
    with pytest.raises(EmbeddingsUnavailable):
        closed.embed(["anything"])


def test_bedrock_titan_one_text_a_call_retrying_throttling(fake, bedrock_env):
    retry, _ = policy()
    fake.fail_next(Fault(429, error_type="ThrottlingException"), Fault(500, error_type="InternalServerException"))
    titan = BedrockEmbedder("amazon.titan-embed-text-v2:0", 256, "us-east-1", retry)
    vectors = titan.embed(["Bought a red bicycle.", "Plays chess on Sundays."])
    assert vectors.shape == (2, 256) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert [r.path for r in fake.requests] == ["/model/amazon.titan-embed-text-v2%3A0/invoke"] * 4
    assert fake.requests[-1].body == {"inputText": "Plays chess on Sundays.", "dimensions": 256, "normalize": True}
    assert fake.requests[-1].headers["authorization"].startswith("AWS4-HMAC-SHA256")  # signed by boto3
    assert len(retry.waits) == 2


def test_bedrock_cohere_batches_and_rejects_at_once(fake, bedrock_env):
    retry, _ = policy()
    cohere = BedrockEmbedder("cohere.embed-english-v3", 1024, "us-east-1", retry)
    assert cohere.embed([f"line {i}" for i in range(COHERE_BATCH + 1)], "document").shape == (COHERE_BATCH + 1, 1024)
    assert [len(r.body["texts"]) for r in fake.requests] == [COHERE_BATCH, 1]
    cohere.embed(["a question"], "query")
    assert fake.requests[-1].body["input_type"] == "search_query"
    fake.fail_next(Fault(403, error_type="AccessDeniedException"))
    with pytest.raises(EmbeddingsRejected, match="AccessDeniedException"):
        cohere.embed(["anything"])
    assert retry.waits == []


@pytest.mark.parametrize(("env", "variable"), [
    ({"WIKI_EMBEDDINGS": "voyage"}, "VOYAGE_API_KEY"),
    ({"WIKI_EMBEDDINGS": "voyage", "VOYAGE_API_KEY": " "}, "VOYAGE_API_KEY"),
    ({"WIKI_EMBEDDINGS": "voyage", "VOYAGE_API_KEY": "k", "VOYAGE_BASE_URL": "api.voyageai.com"}, "VOYAGE_BASE_URL"),
    ({"WIKI_EMBEDDINGS": "voyage", "VOYAGE_API_KEY": "k", "WIKI_EMBEDDINGS_MODEL": "text-embedding-3"},
     "WIKI_EMBEDDINGS_MODEL"),
    ({"WIKI_EMBEDDINGS": "voyage", "VOYAGE_API_KEY": "k", "WIKI_EMBEDDINGS_DIMENSIONS": "300"},
     "WIKI_EMBEDDINGS_DIMENSIONS"),
    ({"WIKI_EMBEDDINGS": "bedrock", "AWS_REGION": "us-east-1", "WIKI_EMBEDDINGS_MODEL": "cohere.embed-english-v3",
      "WIKI_EMBEDDINGS_DIMENSIONS": "256"}, "WIKI_EMBEDDINGS_DIMENSIONS"),
    ({"WIKI_EMBEDDINGS": "bedrock"}, "AWS_REGION"),
    ({"WIKI_EMBEDDINGS": "static", "WIKI_EMBEDDINGS_DIMENSIONS": "1024"}, "WIKI_EMBEDDINGS_DIMENSIONS"),
    ({"WIKI_EMBEDDINGS": "openai"}, "WIKI_EMBEDDINGS"),
    ({"WIKI_EMBEDDINGS": "voyage", "VOYAGE_API_KEY": "k", "WIKI_EMBEDDINGS_RETRY_SECONDS": "0"},
     "WIKI_EMBEDDINGS_RETRY_SECONDS"),
])
def test_bad_embedding_settings_name_the_variable(monkeypatch, env, variable):
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "VOYAGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=variable):
        load_settings()


def test_settings_fill_in_the_provider_defaults(monkeypatch):
    monkeypatch.setenv("WIKI_EMBEDDINGS", "bedrock")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    settings = load_settings()
    assert (settings.embeddings_model, settings.embeddings_dimensions) == ("amazon.titan-embed-text-v2:0", 1024)


async def test_a_change_of_model_embeds_again_and_recall_scores_only_its_own_vectors(engine, fake, monkeypatch):
    page = await entity(engine, "Jonas Berg")
    lines = ["Adopted a puppy called Rex.", "Bought a red bicycle.", "Plays chess on Sundays."]
    for line in lines:
        await fact(engine, page, line)
    scope = Scope(tenant=TENANT, owner=OWNER)
    assert await embed_new_claims(engine, scope, static_embedder) == 3
    monkeypatch.setenv("WIKI_EMBEDDINGS", "voyage")
    monkeypatch.setenv("VOYAGE_API_KEY", "test-key")
    monkeypatch.setenv("VOYAGE_BASE_URL", f"{fake.url}/v1")
    monkeypatch.setenv("WIKI_EMBEDDINGS_DIMENSIONS", "256")  # the static model's size, another model
    provider = embedder_for(load_settings())
    assert provider is not None and provider() is provider()  # made once
    assert await embed_new_claims(engine, scope, provider) == 3  # every claim again: another model
    assert await embed_new_claims(engine, scope, provider) == 0
    async with engine.connect() as conn:
        rows = (await conn.execute(text("SELECT model, dimensions, length(vector) AS n FROM wiki_claim_vectors "
                                        "WHERE tenant_id = :t"), {"t": TENANT})).all()
    assert {tuple(r) for r in rows} == {("voyage-3.5-lite", 256, 1024)}
    question = "Which chess games on Sundays?"
    found = await recall(engine, ReadScope.of(TENANT, OWNER), question, embedder=provider)
    semantic = [r for r in found.results if "semantic" in r.signals]
    assert semantic and semantic[0].text == "Plays chess on Sundays."
    assert fake.requests[-1].body["input_type"] == "query" and fake.requests[-1].body["input"] == [question]
    # The static model's vectors were replaced, not kept beside: it finds none of its own to score.
    static = await recall(engine, ReadScope.of(TENANT, OWNER), question, embedder=static_embedder)
    assert all("semantic" not in r.signals for r in static.results)


async def test_a_provider_that_keeps_failing_never_fails_the_compile(engine, fake):
    page = await entity(engine, "Jonas Berg")
    await fact(engine, page, "Bought a red bicycle.")
    retry, _ = policy(budget=5)
    fake.fail_next(*itertools.repeat(Fault(503), 100))
    assert await embed_new_claims(engine, Scope(tenant=TENANT, owner=OWNER), lambda: voyage(fake, retry)) == 0
    assert len(fake.requests) >= 2 and sum(retry.waits) <= 5  # retried within its budget, then left
    fake.faults.clear()
    assert await embed_new_claims(engine, Scope(tenant=TENANT, owner=OWNER), lambda: voyage(fake, retry)) == 1


async def test_recall_answers_without_meaning_when_the_provider_fails_for_the_question(engine, fake):
    page = await entity(engine, "Jonas Berg")
    await fact(engine, page, "Plays chess on Sundays.")
    retry, _ = policy()
    provider = voyage(fake, retry)
    assert await embed_new_claims(engine, Scope(tenant=TENANT, owner=OWNER), lambda: provider) == 1
    fake.fail_next(*itertools.repeat(Fault(503), 100))
    found = await recall(engine, ReadScope.of(TENANT, OWNER), "Who plays chess at the weekend?",
                         embedder=lambda: provider)
    assert [r.text for r in found.results] == ["Plays chess on Sundays."]
    assert "semantic" not in found.results[0].signals and "lexical" in found.results[0].signals
    assert 0 < sum(retry.waits) <= 2.0  # a question's short budget, not the compile's minute
