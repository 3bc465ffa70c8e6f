"""A provider's embeddings for recall's semantic retriever, chosen by WIKI_EMBEDDINGS (runtime/settings.py):

- `voyage`: Voyage AI's embeddings endpoint (`POST {VOYAGE_BASE_URL}/embeddings`), up to
  VOYAGE_BATCH texts a call, the claims as `document`, a question as `query`;
- `bedrock`: Amazon Bedrock's `InvokeModel` through boto3's `bedrock-runtime` client: Titan Text
  Embeddings V2 (one text a call, the size asked with `dimensions`) or Cohere Embed (up to
  COHERE_BATCH texts a call). boto3 finds its endpoint (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, else the
  region's), its credentials and its Bedrock API key the way the AWS tools do.
- `openai-compatible`: an OpenAI-compatible server's `POST /v1/embeddings` (Ollama, vLLM, LM Studio,
  llama.cpp's server: the model server's own, by default) through the `openai` SDK, up to
  SERVER_BATCH texts a call, floats asked for (the SDK's default, base64, is not served everywhere);
  no `dimensions` is sent (most local models have one size, and some servers refuse the field), the
  length of what comes back is checked against WIKI_EMBEDDINGS_DIMENSIONS instead.

Voyage is called over httpx (already here through the anthropic SDK) rather than its own package:
one endpoint, and the status and Retry-After of each reply must reach the retry policy below as a
named failure, where the package retries on its own.

Every call goes through `RetryPolicy.run`: a throttled reply (`EmbeddingsThrottled`) is retried
after the provider's Retry-After, an unavailable one (`EmbeddingsUnavailable`: 5xx, a connection
error, a timeout) after an exponential backoff, both until WIKI_EMBEDDINGS_RETRY_SECONDS are spent;
a rejected one (`EmbeddingsRejected`: key, permission, model, request) at once. The calls are
blocking: the compile's activity and recall run them in a thread (`Embedder.remote`).

Each vector is normalised to unit length here, whatever the provider returned, as recall's cosine
scoring expects; its model and size are stored with it (migration 0012_recall_speed).
"""

from __future__ import annotations

import functools
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol, TypeVar

import httpx
import numpy as np
import openai
from pydantic import SecretStr

from domain.errors import EmbeddingsRejected, EmbeddingsThrottled, EmbeddingsUnavailable
from planners.embeddings import Embedder, Purpose

VOYAGE_BATCH = 128  # texts a call (the endpoint takes up to 1,000; claims are short)
# A question is embedded while an agent waits: a short deadline and little retrying, after which
# recall answers without the semantic retriever.
QUERY_TIMEOUT_SECONDS = 5.0
QUERY_RETRY_SECONDS = 2.0
COHERE_BATCH = 96  # Cohere Embed's own limit per call
REQUEST_TIMEOUT_SECONDS = 60.0
T = TypeVar("T")


@dataclass
class RetryPolicy:
    """Retries a provider call that failed with a retryable named failure, within `budget_seconds`."""

    budget_seconds: float = 60.0
    first_backoff_seconds: float = 0.5
    max_backoff_seconds: float = 20.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    waits: list[float] = field(default_factory=list)  # every wait taken (what an operator or a test reads)

    def for_questions(self) -> RetryPolicy:
        """The same policy with the short budget a question allows."""
        return RetryPolicy(budget_seconds=min(self.budget_seconds, QUERY_RETRY_SECONDS),
                           first_backoff_seconds=self.first_backoff_seconds, max_backoff_seconds=self.max_backoff_seconds,
                           sleep=self.sleep, clock=self.clock, waits=self.waits)

    def run(self, call: Callable[[], T]) -> T:
        deadline = self.clock() + self.budget_seconds
        backoff = self.first_backoff_seconds
        while True:
            try:
                return call()
            except (EmbeddingsThrottled, EmbeddingsUnavailable) as failure:
                wait = (failure.retry_after.total_seconds() if failure.retry_after is not None
                        else backoff * (0.5 + random.random() / 2))
                backoff = min(backoff * 2, self.max_backoff_seconds)
                if self.clock() + wait > deadline:
                    raise type(failure)(f"{failure.message} (still failing after {self.budget_seconds:g} s of retries)",
                                        retry_after=failure.retry_after) from failure
                self.waits.append(wait)
                self.sleep(wait)


def _unit_rows(rows: Sequence[Sequence[float]], dimensions: int, provider: str) -> np.ndarray:
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] != dimensions:
        raise EmbeddingsRejected(f"{provider} returned vectors of shape {matrix.shape}, not {dimensions} long")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def _retry_after(value: str | None) -> timedelta | None:
    try:
        return timedelta(seconds=max(float(value), 0.0)) if value is not None else None
    except ValueError:
        return None


class VoyageEmbedder:
    remote = True

    def __init__(self, model: str, dimensions: int, api_key: str, base_url: str, retry: RetryPolicy,
                 client: httpx.Client | None = None) -> None:
        self.model, self.dimensions, self._retry = model, dimensions, retry
        self._client = client or httpx.Client(base_url=base_url.rstrip("/"), timeout=REQUEST_TIMEOUT_SECONDS,
                                              headers={"Authorization": f"Bearer {api_key}"})

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        rows: list[list[float]] = []
        retry = self._retry.for_questions() if purpose == "query" else self._retry
        for start in range(0, len(texts), VOYAGE_BATCH):
            batch = list(texts[start:start + VOYAGE_BATCH])
            rows += retry.run(functools.partial(self._call, batch, purpose))
        return _unit_rows(rows, self.dimensions, "Voyage") if rows else np.zeros((0, self.dimensions), np.float32)

    def _call(self, batch: list[str], purpose: Purpose) -> list[list[float]]:
        body = {"input": batch, "model": self.model, "input_type": purpose, "output_dimension": self.dimensions}
        try:
            reply = self._client.post("/embeddings", json=body,
                                      timeout=QUERY_TIMEOUT_SECONDS if purpose == "query" else REQUEST_TIMEOUT_SECONDS)
        except httpx.TimeoutException as error:
            raise EmbeddingsUnavailable(f"Voyage embeddings timed out: {error}") from error
        except httpx.TransportError as error:
            raise EmbeddingsUnavailable(f"Voyage embeddings unreachable: {error}") from error
        if reply.status_code == 429:
            raise EmbeddingsThrottled("Voyage embeddings throttled (429)",
                                      retry_after=_retry_after(reply.headers.get("retry-after")), benign=True)
        if reply.status_code >= 500:
            raise EmbeddingsUnavailable(f"Voyage embeddings unavailable ({reply.status_code})",
                                        retry_after=_retry_after(reply.headers.get("retry-after")))
        if reply.status_code != 200:
            raise EmbeddingsRejected(f"Voyage embeddings rejected the request ({reply.status_code}): "
                                     f"{_detail(reply.text)}")
        try:
            data = sorted(reply.json()["data"], key=lambda item: item["index"])
            return [item["embedding"] for item in data]
        except (ValueError, KeyError, TypeError) as error:
            raise EmbeddingsRejected(f"Voyage embeddings replied with no embeddings: {error}") from error


def _detail(body: str) -> str:
    """A provider's error message, one line, bounded (never the texts sent)."""
    try:
        parsed = json.loads(body)
        message = parsed.get("detail") or parsed.get("message") or body if isinstance(parsed, dict) else body
    except ValueError:
        message = body
    return " ".join(str(message).split())[:200]


# Bedrock's error codes by what a retry can do about them.
_BEDROCK_THROTTLED = {"ThrottlingException", "TooManyRequestsException", "ServiceQuotaExceededException"}
_BEDROCK_UNAVAILABLE = {"ServiceUnavailableException", "InternalServerException", "ModelNotReadyException",
                        "ModelTimeoutException", "ServiceUnavailable", "InternalFailure"}


class BedrockEmbedder:
    remote = True

    def __init__(self, model: str, dimensions: int, region: str, retry: RetryPolicy, client: Any = None) -> None:
        self.model, self.dimensions, self._retry = model, dimensions, retry
        self._cohere = model.startswith("cohere.") or ".cohere." in model
        self._client = client or _bedrock_client(region)

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        rows: list[list[float]] = []
        retry = self._retry.for_questions() if purpose == "query" else self._retry
        if self._cohere:
            input_type = "search_query" if purpose == "query" else "search_document"
            for start in range(0, len(texts), COHERE_BATCH):
                body: dict[str, Any] = {"texts": list(texts[start:start + COHERE_BATCH]), "input_type": input_type,
                                        "truncate": "END"}
                rows += retry.run(functools.partial(self._invoke, body, "embeddings"))
        else:  # Titan Text Embeddings V2 takes one text a call
            for one in texts:
                rows.append(retry.run(functools.partial(
                    self._invoke, {"inputText": one, "dimensions": self.dimensions, "normalize": True}, "embedding")))
        return _unit_rows(rows, self.dimensions, "Bedrock") if rows else np.zeros((0, self.dimensions), np.float32)

    def _invoke(self, body: dict[str, Any], key: str) -> Any:
        """The model's reply's `key` (the embedding, or the list of them)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            reply = self._client.invoke_model(modelId=self.model, body=json.dumps(body),
                                              contentType="application/json", accept="application/json")
            return json.loads(reply["body"].read())[key]
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            message = f"Bedrock embeddings: {code or status}: {_detail(str(error))}"
            if code in _BEDROCK_THROTTLED or status == 429:
                raise EmbeddingsThrottled(message, benign=True) from error
            if code in _BEDROCK_UNAVAILABLE or status >= 500:
                raise EmbeddingsUnavailable(message) from error
            raise EmbeddingsRejected(message) from error
        except BotoCoreError as error:  # connection errors, timeouts, no credentials
            failure = EmbeddingsRejected if "credentials" in str(error).lower() else EmbeddingsUnavailable
            raise failure(f"Bedrock embeddings: {error}") from error
        except (ValueError, KeyError) as error:
            raise EmbeddingsRejected(f"Bedrock embeddings replied with no embeddings: {error}") from error


def _bedrock_client(region: str) -> Any:
    import boto3
    from botocore.config import Config

    # One attempt per call: the retry policy above decides, by the named failure.
    config = Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=REQUEST_TIMEOUT_SECONDS,
                    connect_timeout=10)
    return boto3.client("bedrock-runtime", region_name=region, config=config)


SERVER_BATCH = 64  # texts a call: local servers embed a batch at once, and claims are short
_SERVER_BUSY = frozenset({429, 503})


class ServerEmbedder:
    """Embeddings from an OpenAI-compatible server, through the openai SDK (its own retries off)."""

    remote = True

    def __init__(self, model: str, dimensions: int, base_url: str, api_key: str | None, retry: RetryPolicy,
                 client: openai.OpenAI | None = None) -> None:
        self.model, self.dimensions, self._retry, self._base_url = model, dimensions, retry, base_url
        self._client = client or openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", max_retries=0,
                                               timeout=REQUEST_TIMEOUT_SECONDS)

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        rows: list[list[float]] = []
        retry = self._retry.for_questions() if purpose == "query" else self._retry
        timeout = QUERY_TIMEOUT_SECONDS if purpose == "query" else REQUEST_TIMEOUT_SECONDS
        for start in range(0, len(texts), SERVER_BATCH):
            rows += retry.run(functools.partial(self._call, list(texts[start:start + SERVER_BATCH]), timeout))
        if rows and len(rows[0]) != self.dimensions:
            raise EmbeddingsRejected(f"{self.model} at {self._base_url} makes vectors of {len(rows[0])} dimensions, "
                                     f"not {self.dimensions}: set WIKI_EMBEDDINGS_DIMENSIONS={len(rows[0])}")
        return _unit_rows(rows, self.dimensions, "The embeddings server") if rows else np.zeros(
            (0, self.dimensions), np.float32)

    def _call(self, batch: list[str], timeout: float) -> list[list[float]]:
        try:
            reply = self._client.embeddings.create(model=self.model, input=batch, encoding_format="float",
                                                   timeout=timeout)
        except openai.APIStatusError as error:
            message = f"embeddings server at {self._base_url}: {error.status_code}: {_detail(error.response.text)}"
            wait = _retry_after(error.response.headers.get("retry-after"))
            if error.status_code in _SERVER_BUSY:
                raise EmbeddingsThrottled(message, retry_after=wait, benign=True) from error
            if error.status_code >= 500 or error.status_code in (408, 409):
                raise EmbeddingsUnavailable(message, retry_after=wait) from error
            hint = " (check WIKI_EMBEDDINGS_MODEL)" if error.status_code == 404 else (
                " (check WIKI_OPENAI_API_KEY)" if error.status_code in (401, 403) else "")
            raise EmbeddingsRejected(message + hint) from error
        except (openai.APIConnectionError, openai.APITimeoutError) as error:
            raise EmbeddingsUnavailable(f"embeddings server at {self._base_url} is not reachable: {error}") from error
        data = sorted(reply.data, key=lambda item: item.index)
        if len(data) != len(batch):
            raise EmbeddingsRejected(f"embeddings server at {self._base_url} returned {len(data)} vectors for "
                                     f"{len(batch)} texts")
        return [list(item.embedding) for item in data]


def provider_embedder(settings: ProviderSettings) -> Embedder:
    """The provider's embedder the settings name (WIKI_EMBEDDINGS=voyage, bedrock or openai-compatible)."""
    retry = RetryPolicy(budget_seconds=settings.embeddings_retry_seconds)
    if settings.embeddings == "voyage":
        if settings.voyage_api_key is None:
            raise EmbeddingsRejected("VOYAGE_API_KEY must be set when WIKI_EMBEDDINGS=voyage")
        return VoyageEmbedder(settings.embeddings_model, settings.embeddings_dimensions,
                              settings.voyage_api_key.get_secret_value(), settings.voyage_base_url, retry)
    if settings.embeddings == "bedrock":
        if not settings.aws_region:
            raise EmbeddingsRejected("AWS_REGION must be set when WIKI_EMBEDDINGS=bedrock")
        return BedrockEmbedder(settings.embeddings_model, settings.embeddings_dimensions, settings.aws_region, retry)
    if settings.embeddings == "openai-compatible":
        key = settings.openai_api_key
        return ServerEmbedder(settings.embeddings_model, settings.embeddings_dimensions, settings.embeddings_base_url,
                              key.get_secret_value() if key else None, retry)
    raise EmbeddingsRejected(f"WIKI_EMBEDDINGS={settings.embeddings} names no provider")


class ProviderSettings(Protocol):
    """What the embedders read of runtime/settings.py's Settings (this layer does not import it)."""

    @property
    def embeddings(self) -> str: ...
    @property
    def embeddings_model(self) -> str: ...
    @property
    def embeddings_dimensions(self) -> int: ...
    @property
    def embeddings_retry_seconds(self) -> float: ...
    @property
    def voyage_api_key(self) -> SecretStr | None: ...
    @property
    def voyage_base_url(self) -> str: ...
    @property
    def aws_region(self) -> str | None: ...
    @property
    def embeddings_base_url(self) -> str: ...
    @property
    def openai_api_key(self) -> SecretStr | None: ...
