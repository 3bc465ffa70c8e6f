"""Configuration from the environment (docs/configuration.md has the table).

Every setting is read once, validated, and a bad value stops start-up with a message that names the
environment variable, e.g. "WIKI_LLM: Input should be 'scripted', 'anthropic', 'bedrock' or 'openai-compatible'".
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from domain.fairness import (
    DEFAULT_TENANT_QUOTA_SHARE,
    MAX_WEIGHT,
    MIN_WEIGHT,
    parse_tenant_weights,
    tenant_calls_per_second,
)
from domain.model_ids import Provider, default_model_id, model_id_problem


class ConfigError(Exception):
    """A setting has a bad value; the message names the variable."""


# Memories per batch when WIKI_RECORD_PAGE_SIZE is not set (`Settings.page_size`).
MODEL_PAGE_SIZE = 50
SCRIPTED_PAGE_SIZE = 200


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=None, extra="ignore", populate_by_name=False)

    database_url: str | None = Field(None, validation_alias=_env("DATABASE_URL"))
    temporal_address: str | None = Field(None, validation_alias=_env("TEMPORAL_ADDRESS"))
    temporal_namespace: str = Field("default", min_length=1, validation_alias=_env("TEMPORAL_NAMESPACE"))
    task_queue: str = Field("wiki-compile", min_length=1, validation_alias=_env("WIKI_TASK_QUEUE"))

    llm: Literal["scripted", "anthropic", "bedrock", "openai-compatible"] = Field(
        "scripted", validation_alias=_env("WIKI_LLM"))
    # An OpenAI-compatible server (docs/local-models.md): which one (its default address and its
    # structured-output mode follow from it), where it listens, and its key if it asks for one.
    openai_server: Literal["ollama", "vllm", "lm-studio", "llama-cpp", "other"] = Field(
        "other", validation_alias=_env("WIKI_OPENAI_SERVER"))
    openai_base_url: str = Field("", validation_alias=_env("WIKI_OPENAI_BASE_URL"))
    openai_api_key: SecretStr | None = Field(None, validation_alias=_env("WIKI_OPENAI_API_KEY"))
    # How a structured reply is asked of it: a JSON schema (response_format), a forced tool call, or
    # plain JSON validated and repaired once; auto: the server's default (SERVER_STRUCTURED_OUTPUT).
    llm_structured_output: Literal["auto", "json_schema", "tools", "json"] = Field(
        "auto", validation_alias=_env("WIKI_LLM_STRUCTURED_OUTPUT"))
    # What an OpenAI-compatible server's tokens cost, USD per million (0: a local server costs nothing).
    llm_price_input_per_mtok: float = Field(0, ge=0, le=10_000, validation_alias=_env("WIKI_LLM_PRICE_INPUT_PER_MTOK"))
    llm_price_output_per_mtok: float = Field(
        0, ge=0, le=10_000, validation_alias=_env("WIKI_LLM_PRICE_OUTPUT_PER_MTOK"))
    # Recall's semantic retriever: "static" embeds every claim in the compile with the model that
    # ships inside its package (planners/embeddings.py; no download), "voyage" and "bedrock" with a
    # provider's model (planners/embedding_providers.py), "off" embeds nothing (recall then ranks by
    # words, names, links and time only).
    embeddings: Literal["static", "voyage", "bedrock", "openai-compatible", "off"] = Field(
        "static", validation_alias=_env("WIKI_EMBEDDINGS"))
    # openai-compatible: the server's /v1/embeddings (unset: the model server's address, WIKI_OPENAI_BASE_URL).
    embeddings_base_url: str = Field("", validation_alias=_env("WIKI_EMBEDDINGS_BASE_URL"))
    # The provider's model and vector size; unset: the provider's default (EMBEDDING_MODELS below).
    embeddings_model: str = Field("", validation_alias=_env("WIKI_EMBEDDINGS_MODEL"))
    embeddings_dimensions: int = Field(0, ge=0, validation_alias=_env("WIKI_EMBEDDINGS_DIMENSIONS"))
    # How long one provider call may keep retrying throttled or unavailable replies.
    embeddings_retry_seconds: float = Field(
        60, gt=0, le=3600, validation_alias=_env("WIKI_EMBEDDINGS_RETRY_SECONDS"))
    voyage_api_key: SecretStr | None = Field(None, validation_alias=_env("VOYAGE_API_KEY"))
    voyage_base_url: str = Field("https://api.voyageai.com/v1", validation_alias=_env("VOYAGE_BASE_URL"))
    # The Anthropic API's key; never sent to Bedrock.
    anthropic_api_key: SecretStr | None = Field(None, validation_alias=_env("ANTHROPIC_API_KEY"))
    # Bedrock: the region as the AWS tools read it; a Bedrock API key, else SigV4 from the AWS chain.
    aws_region: str | None = Field(None, min_length=1, validation_alias=_env("AWS_REGION", "AWS_DEFAULT_REGION"))
    aws_bearer_token_bedrock: SecretStr | None = Field(None, validation_alias=_env("AWS_BEARER_TOKEN_BEDROCK"))
    # Unset: Claude Haiku 4.5 in the provider's form (domain/model_ids.py); checked at start-up.
    model_id: str = Field("", validation_alias=_env("WIKI_MODEL_ID"))
    # How long a call may wait for its first token: a local model reads a long prompt before it writes.
    llm_first_token_seconds: float = Field(
        60, gt=0, le=900, validation_alias=_env("WIKI_LLM_FIRST_TOKEN_SECONDS"))
    # A streamed reply that sends nothing for this long is a stalled call (it is retried, then split).
    llm_stall_timeout_seconds: float = Field(
        60, gt=0, le=600, validation_alias=_env("WIKI_LLM_STALL_TIMEOUT_SECONDS"))
    # The slowest output rate a healthy call is expected to keep: a call's deadline is a minute plus
    # its max_tokens at this rate (capped at 15 minutes).
    llm_min_output_tokens_per_second: float = Field(
        40, gt=0, le=10_000, validation_alias=_env("WIKI_LLM_MIN_OUTPUT_TOKENS_PER_SECOND"))
    # Total time one model call may spend waiting out throttling before the compile fails
    # (Temporal retries without a count limit inside this bound).
    llm_retry_budget_seconds: int = Field(
        3600, ge=60, le=7 * 24 * 3600, validation_alias=_env("WIKI_LLM_RETRY_BUDGET_SECONDS")
    )
    # Model calls on their own task queue, whose workers cap the calls per second for every worker at
    # once (Temporal enforces it server-side): keep it under the provider's quota to avoid 429s.
    llm_task_queue: str | None = Field(None, min_length=1, validation_alias=_env("WIKI_LLM_TASK_QUEUE"))
    llm_max_per_second: float | None = Field(None, gt=0, validation_alias=_env("WIKI_LLM_MAX_PER_SECOND"))
    # Each tenant's model calls at most this many a second (Temporal's per-fairness-key rate limit on
    # WIKI_LLM_TASK_QUEUE, scaled by the tenant's weight). Unset: WIKI_LLM_TENANT_QUOTA_SHARE of
    # WIKI_LLM_MAX_PER_SECOND, so one tenant's bulk work leaves the rest of the quota free for the others'
    # interactive calls (domain/fairness.py `tenant_calls_per_second`).
    llm_tenant_max_per_second: float | None = Field(
        None, gt=0, validation_alias=_env("WIKI_LLM_TENANT_MAX_PER_SECOND"))
    llm_tenant_quota_share: float = Field(
        DEFAULT_TENANT_QUOTA_SHARE, gt=0, le=1, validation_alias=_env("WIKI_LLM_TENANT_QUOTA_SHARE"))
    # Task queue priority and fairness (docs/cluster.md): compiles start with the priority of their
    # trigger and their tenant as fairness key, weighted by WIKI_FAIRNESS_WEIGHT or the tenant's entry in
    # WIKI_FAIRNESS_TENANT_WEIGHTS (`acme=4,globex=2.5`). Off: compiles start with neither (plain FIFO).
    fairness_enabled: bool = Field(True, validation_alias=_env("WIKI_FAIRNESS_ENABLED"))
    fairness_weight: float = Field(1.0, ge=MIN_WEIGHT, le=MAX_WEIGHT, validation_alias=_env("WIKI_FAIRNESS_WEIGHT"))
    fairness_tenant_weights: str = Field("", validation_alias=_env("WIKI_FAIRNESS_TENANT_WEIGHTS"))
    # Message Batches (half price, answered within 24 hours) for the leaf plans of bulk compiles
    # (bootstrap imports, rebuilds): auto = for those triggers on the Anthropic API; off = never.
    # Bedrock has no Message Batches in the SDK, so there every call stays interactive.
    llm_batch_mode: Literal["auto", "off"] = Field("auto", validation_alias=_env("WIKI_LLM_BATCH_MODE"))
    # How often a pending Message Batch is polled.
    llm_batch_poll_seconds: float = Field(
        60, gt=0, le=3600, validation_alias=_env("WIKI_LLM_BATCH_POLL_SECONDS"))
    # How long a batched plan request waits for other scopes' requests before one batch carries them all.
    llm_batch_window_seconds: float = Field(
        5, ge=0, le=600, validation_alias=_env("WIKI_LLM_BATCH_WINDOW_SECONDS"))
    # Simulated model latency for the scripted planner (benchmarks); 0 in tests and the demo.
    scripted_latency_ms: int = Field(0, ge=0, le=60_000, validation_alias=_env("WIKI_SCRIPTED_LATENCY_MS"))

    aggregation_pass_enabled: bool = Field(True, validation_alias=_env("WIKI_AGGREGATION_PASS_ENABLED"))
    deterministic_linking_enabled: bool = Field(True, validation_alias=_env("WIKI_DETERMINISTIC_LINKING_ENABLED"))
    overlap_planning: bool = Field(True, validation_alias=_env("WIKI_OVERLAP_PLANNING"))

    # Memories per batch (unset: by planner, `page_size()`).
    record_page_size: int | None = Field(None, ge=1, le=500, validation_alias=_env("WIKI_RECORD_PAGE_SIZE"))
    max_records_per_run: int = Field(500, ge=1, validation_alias=_env("WIKI_MAX_RECORDS_PER_RUN"))
    max_records_per_bootstrap_run: int = Field(
        1000, ge=1, validation_alias=_env("WIKI_MAX_RECORDS_PER_BOOTSTRAP_RUN")
    )
    max_new_pages_per_run: int = Field(25, ge=1, validation_alias=_env("WIKI_MAX_NEW_PAGES_PER_RUN"))
    max_sections_rewritten_per_run: int = Field(
        100, ge=1, validation_alias=_env("WIKI_MAX_SECTIONS_REWRITTEN_PER_RUN")
    )
    max_candidate_pages: int = Field(200, ge=1, le=2000, validation_alias=_env("WIKI_MAX_CANDIDATE_PAGES"))
    section_writer_concurrency: int = Field(32, ge=1, le=64, validation_alias=_env("WIKI_SECTION_WRITER_CONCURRENCY"))
    debounce_seconds: float = Field(300, ge=0, le=86_400, validation_alias=_env("WIKI_DEBOUNCE_SECONDS"))
    # How long a compile activity may go without a heartbeat before Temporal retries it on another
    # worker: the time to notice a dead worker.
    heartbeat_timeout_seconds: float = Field(
        10, ge=1, le=600, validation_alias=_env("WIKI_HEARTBEAT_TIMEOUT_SECONDS")
    )

    # What one worker runs at once (app/capacity.py): activities (0: derived from its CPUs, its planner
    # and WIKI_LLM_MAX_PER_SECOND) and the threads computing CPU-bound steps (0: one per CPU it may use).
    worker_activity_slots: int = Field(0, ge=0, le=1000, validation_alias=_env("WIKI_WORKER_ACTIVITY_SLOTS"))
    worker_cpu_threads: int = Field(0, ge=0, le=256, validation_alias=_env("WIKI_WORKER_CPU_THREADS"))

    # Connection pool of each process (worker, `wiki serve`, `wiki mcp`): steady connections, extra ones
    # under bursts, and how long a request waits for a connection before it is answered 503.
    db_pool_size: int = Field(10, ge=1, le=500, validation_alias=_env("WIKI_DB_POOL_SIZE"))
    db_pool_overflow: int = Field(10, ge=0, le=500, validation_alias=_env("WIKI_DB_POOL_OVERFLOW"))
    db_pool_timeout_seconds: float = Field(5, gt=0, le=300, validation_alias=_env("WIKI_DB_POOL_TIMEOUT_SECONDS"))

    # The agent-facing servers (`wiki serve`, `wiki mcp --http`). Requests served at once, how many may
    # wait for a turn and for how long; past either bound a request is answered 503 with Retry-After
    # at once instead of queueing until it times out.
    http_max_in_flight: int = Field(16, ge=1, le=1000, validation_alias=_env("WIKI_HTTP_MAX_IN_FLIGHT"))
    http_queue_limit: int = Field(64, ge=0, le=100_000, validation_alias=_env("WIKI_HTTP_QUEUE_LIMIT"))
    http_queue_timeout_seconds: float = Field(
        2, gt=0, le=300, validation_alias=_env("WIKI_HTTP_QUEUE_TIMEOUT_SECONDS"))
    # Under sustained overload (the queue not empty once in the last 0.1 s) a request waits at most this
    # long for its turn, so the requests served stay fast and the rest are refused 503 at once.
    http_queue_target_ms: float = Field(
        50, gt=0, le=300_000, validation_alias=_env("WIKI_HTTP_QUEUE_TARGET_MS"))
    # Retains served at once (of http_max_in_flight): writes never take every connection from reads.
    http_max_concurrent_retains: int = Field(
        4, ge=1, le=1000, validation_alias=_env("WIKI_HTTP_MAX_CONCURRENT_RETAINS"))
    # The largest request body read, in KiB; a larger one is refused (413) before its first byte is read.
    http_max_body_kib: int = Field(10 * 1024, ge=1, le=64 * 1024, validation_alias=_env("WIKI_HTTP_MAX_BODY_KIB"))
    # Each token's request rate: a bucket of `burst` requests refilled at `rate` per second (per server
    # process); an empty bucket is answered 429 with Retry-After.
    http_rate_per_second: float = Field(50, gt=0, le=100_000, validation_alias=_env("WIKI_HTTP_RATE_PER_SECOND"))
    http_rate_burst: int = Field(100, ge=1, le=100_000, validation_alias=_env("WIKI_HTTP_RATE_BURST"))
    # How long a server process trusts a token it looked up before it looks again: a revoked token is
    # refused by every process within this many seconds (0: looked up on every request). An expiry is
    # checked on every request whatever this says.
    http_token_cache_seconds: float = Field(
        5, ge=0, le=300, validation_alias=_env("WIKI_HTTP_TOKEN_CACHE_SECONDS"))
    # Answers of `wiki serve`'s page, search and changes reads kept per server process, in MiB (0: none),
    # each under its scope's revision: a committed write to the scope makes them all miss.
    http_read_cache_mib: int = Field(64, ge=0, le=4096, validation_alias=_env("WIKI_HTTP_READ_CACHE_MIB"))

    data_dir: Path = Field(Path(".data"), validation_alias=_env("WIKI_DATA_DIR"))
    metrics_port: int | None = Field(None, ge=1, le=65535, validation_alias=_env("WIKI_METRICS_PORT"))
    # Where the worker's metrics endpoint listens; loopback unless an operator opens it up.
    metrics_host: str = Field("127.0.0.1", min_length=1, validation_alias=_env("WIKI_METRICS_HOST"))
    # Ports of the embedded services started when DATABASE_URL / TEMPORAL_ADDRESS are unset.
    dev_postgres_port: int = Field(54329, ge=1, le=65535, validation_alias=_env("WIKI_DEV_POSTGRES_PORT"))
    dev_temporal_port: int = Field(7233, ge=1, le=65535, validation_alias=_env("WIKI_DEV_TEMPORAL_PORT"))
    dev_temporal_ui_port: int = Field(8233, ge=1, le=65535, validation_alias=_env("WIKI_DEV_TEMPORAL_UI_PORT"))

    @model_validator(mode="after")
    def _anthropic_needs_a_key(self) -> Settings:
        if self.llm == "anthropic" and not self.anthropic_api_key:
            raise ValueError("ANTHROPIC_API_KEY must be set when WIKI_LLM=anthropic")
        return self

    @model_validator(mode="after")
    def _model_id_fits_the_provider(self) -> Settings:
        if self.llm == "bedrock" and not self.aws_region:
            raise ValueError("AWS_REGION (or AWS_DEFAULT_REGION) must be set when WIKI_LLM=bedrock")
        if not self.model_id.strip():
            self.model_id = default_model_id(self.llm, self.aws_region)
        problem = model_id_problem(model_provider(self.llm), self.model_id, self.aws_region)
        if problem:
            raise ValueError(f"WIKI_MODEL_ID: {problem}")
        return self

    @model_validator(mode="after")
    def _openai_server_is_addressed(self) -> Settings:
        url = self.openai_base_url.strip() or SERVER_BASE_URLS.get(self.openai_server, "")
        if self.llm != "openai-compatible":
            # Embeddings may use it too (their own check names their variable when it is missing).
            self.openai_base_url = url.rstrip("/") if url and not url_problem(url) else self.openai_base_url
            return self
        if not url:
            raise ValueError("WIKI_OPENAI_BASE_URL must be set when WIKI_OPENAI_SERVER=other (the server's "
                             "address, e.g. http://127.0.0.1:8000/v1)")
        problem = url_problem(url)
        if problem:
            raise ValueError(f"WIKI_OPENAI_BASE_URL: {problem}")
        self.openai_base_url = url.rstrip("/")
        return self

    def structured_output(self) -> StructuredOutputMode:
        """The structured-output mode the model gateway asks replies in: the setting, or on auto the
        server's default."""
        if self.llm_structured_output != "auto":
            return self.llm_structured_output
        return SERVER_STRUCTURED_OUTPUT[self.openai_server]

    @model_validator(mode="after")
    def _embeddings_fit_the_provider(self) -> Settings:
        problem = embeddings_problem(self)
        if problem:
            raise ValueError(problem)
        return self

    @property
    def http_max_body_bytes(self) -> int:
        return self.http_max_body_kib * 1024

    @model_validator(mode="after")
    def _requests_fit_the_pool(self) -> Settings:
        # A request admitted holds at most one connection at a time: admitting more than the pool can
        # hand out would only move the queue into the pool, where it ends in a timeout.
        if self.http_max_in_flight > self.db_pool_size + self.db_pool_overflow:
            raise ValueError("WIKI_HTTP_MAX_IN_FLIGHT must be at most WIKI_DB_POOL_SIZE + WIKI_DB_POOL_OVERFLOW "
                             f"({self.db_pool_size + self.db_pool_overflow}), got {self.http_max_in_flight}")
        if self.http_max_concurrent_retains > self.http_max_in_flight:
            raise ValueError("WIKI_HTTP_MAX_CONCURRENT_RETAINS must be at most WIKI_HTTP_MAX_IN_FLIGHT "
                             f"({self.http_max_in_flight}), got {self.http_max_concurrent_retains}")
        return self

    @model_validator(mode="after")
    def _tenant_weights_parse(self) -> Settings:
        try:
            parse_tenant_weights(self.fairness_tenant_weights)
        except ValueError as error:
            raise ValueError(f"WIKI_FAIRNESS_TENANT_WEIGHTS: {error}") from None
        return self

    def page_size(self) -> int:
        """Memories per batch: WIKI_RECORD_PAGE_SIZE, else by planner. A model reads a batch in one
        prompt and answers it in one reply, so its batches stay small (`MODEL_PAGE_SIZE`). The scripted
        planner rebuilds every section a batch touches from all the memories it cites, so a section
        cited by a share of an import is rebuilt once per batch, and the import's work grows with the
        number of batches times the sections' size: larger batches (`SCRIPTED_PAGE_SIZE`) rebuild each
        section fewer times (measured by the `bootstrap` bench part)."""
        if self.record_page_size:
            return self.record_page_size
        return SCRIPTED_PAGE_SIZE if self.llm == "scripted" else MODEL_PAGE_SIZE

    def tenant_max_per_second(self) -> float | None:
        """Each tenant's model calls a second on WIKI_LLM_TASK_QUEUE (before its weight); None: no limit."""
        if self.llm_tenant_max_per_second is not None:
            return self.llm_tenant_max_per_second
        if not self.fairness_enabled or self.llm_max_per_second is None:
            # Without fairness keys every task has the same (empty) key: a per-key limit would cap the queue.
            return None
        return tenant_calls_per_second(self.llm_max_per_second, self.llm_tenant_quota_share)

    def tenant_weight(self, tenant: str) -> float:
        """The fairness weight of a tenant's compiles: its override, else WIKI_FAIRNESS_WEIGHT."""
        return parse_tenant_weights(self.fairness_tenant_weights).get(tenant, self.fairness_weight)

    @model_validator(mode="after")
    def _rate_limit_needs_its_queue(self) -> Settings:
        # The limit applies to a whole task queue: on the compile queue it would throttle database work too.
        if self.llm_max_per_second is not None and not self.llm_task_queue:
            raise ValueError("WIKI_LLM_TASK_QUEUE must be set when WIKI_LLM_MAX_PER_SECOND is")
        if self.llm_tenant_max_per_second is not None and not self.llm_task_queue:
            raise ValueError("WIKI_LLM_TASK_QUEUE must be set when WIKI_LLM_TENANT_MAX_PER_SECOND is")
        return self


def model_provider(llm: str) -> Provider:
    """The provider whose model ids WIKI_MODEL_ID must be (the scripted planner prices as Claude)."""
    return "bedrock" if llm == "bedrock" else "openai-compatible" if llm == "openai-compatible" else "anthropic"


# Where each OpenAI-compatible server listens out of the box (its documented default port).
SERVER_BASE_URLS: dict[str, str] = {
    "ollama": "http://127.0.0.1:11434/v1",
    "vllm": "http://127.0.0.1:8000/v1",
    "lm-studio": "http://127.0.0.1:1234/v1",
    "llama-cpp": "http://127.0.0.1:8080/v1",
}
# How each server is best asked for a structured reply (docs/local-models.md says why): all four
# constrain decoding to a JSON schema given as response_format; an unknown server is asked for a
# forced tool call, the form most OpenAI-compatible proxies and servers pass through.
StructuredOutputMode = Literal["json_schema", "tools", "json"]
SERVER_STRUCTURED_OUTPUT: dict[str, StructuredOutputMode] = {
    "ollama": "json_schema", "vllm": "json_schema", "lm-studio": "json_schema", "llama-cpp": "json_schema",
    "other": "tools",
}
_HTTP_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")


def url_problem(url: str) -> str | None:
    return None if _HTTP_URL.fullmatch(url) else f"must be an http(s) URL, not {url!r}"


# Each provider's embedding models (by name prefix) and the vector sizes each can be asked for, the
# first being the default. Static: the model in planners/embeddings.py, one size.
EMBEDDING_MODELS: dict[str, dict[str, tuple[int, ...]]] = {
    "static": {"wordllama-l2-supercat-256": (256,)},
    "voyage": {"voyage-3.5-lite": (1024, 256, 512, 2048), "voyage-3.5": (1024, 256, 512, 2048),
               "voyage-3-large": (1024, 256, 512, 2048), "voyage-code-3": (1024, 256, 512, 2048),
               "voyage-context-3": (1024, 256, 512, 2048)},
    "bedrock": {"amazon.titan-embed-text-v2:0": (1024, 256, 512), "cohere.embed-english-v3": (1024,),
                "cohere.embed-multilingual-v3": (1024,)},
}


def embeddings_problem(settings: Settings) -> str | None:
    """What is wrong with the embedding settings, naming the variable; None when they hold. Fills in
    the provider's default model and size when they are unset."""
    if settings.embeddings == "off":
        return None
    if settings.embeddings == "openai-compatible":
        return _server_embeddings_problem(settings)
    models = EMBEDDING_MODELS[settings.embeddings]
    model = settings.embeddings_model.strip() or next(iter(models))
    # A Bedrock model may be named through a cross-region profile ("us.cohere.embed-…").
    known = next((name for name in models if model == name or model.endswith("." + name)), None)
    if known is None:
        return (f"WIKI_EMBEDDINGS_MODEL: {model!r} is not an embedding model of WIKI_EMBEDDINGS={settings.embeddings} "
                f"(one of {', '.join(models)})")
    sizes = models[known]
    dimensions = settings.embeddings_dimensions or sizes[0]
    if dimensions not in sizes:
        return (f"WIKI_EMBEDDINGS_DIMENSIONS: {known} makes vectors of {', '.join(map(str, sorted(sizes)))} "
                f"dimensions, not {dimensions}")
    if settings.embeddings == "voyage":
        if not settings.voyage_api_key or not settings.voyage_api_key.get_secret_value().strip():
            return "VOYAGE_API_KEY must be set when WIKI_EMBEDDINGS=voyage"
        if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", settings.voyage_base_url):
            return f"VOYAGE_BASE_URL must be an http(s) URL, not {settings.voyage_base_url!r}"
    if settings.embeddings == "bedrock" and not settings.aws_region:
        return "AWS_REGION (or AWS_DEFAULT_REGION) must be set when WIKI_EMBEDDINGS=bedrock"
    settings.embeddings_model, settings.embeddings_dimensions = model, dimensions
    return None


def _server_embeddings_problem(settings: Settings) -> str | None:
    """An OpenAI-compatible server's embeddings: its model by name and the size of its vectors, both
    required (the server serves whatever it has; recall stores and scores one model and size)."""
    model = settings.embeddings_model.strip()
    if not model or any(c.isspace() for c in model) or not model.isprintable():
        return ("WIKI_EMBEDDINGS_MODEL must name the server's embedding model when WIKI_EMBEDDINGS=openai-compatible "
                "(e.g. nomic-embed-text on Ollama)")
    if not settings.embeddings_dimensions:
        return ("WIKI_EMBEDDINGS_DIMENSIONS must be set when WIKI_EMBEDDINGS=openai-compatible: the length of the "
                "model's vectors (e.g. 768 for nomic-embed-text)")
    url = (settings.embeddings_base_url.strip() or settings.openai_base_url.strip()
           or SERVER_BASE_URLS.get(settings.openai_server, ""))
    if not url:
        return "WIKI_EMBEDDINGS_BASE_URL (or WIKI_OPENAI_BASE_URL) must be set when WIKI_EMBEDDINGS=openai-compatible"
    problem = url_problem(url)
    if problem:
        named = "WIKI_EMBEDDINGS_BASE_URL" if settings.embeddings_base_url.strip() else "WIKI_OPENAI_BASE_URL"
        return f"{named}: {problem}"
    settings.embeddings_model, settings.embeddings_base_url = model, url.rstrip("/")
    return None


# A password inside a URL: `scheme://user:password@host` and `?password=…` / `&sslpassword=…` (the
# libpq and asyncpg query forms), wherever such a URL sits in a longer text.
_URL_PASSWORD = re.compile(r"(?P<keep>[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@?#]*:)[^\s@/]*(?=@)")
_QUERY_PASSWORD = re.compile(r"(?P<keep>[?&;](?:ssl)?pass(?:word)?=)[^&#\s]*", re.IGNORECASE)
_SECRET_NAMES = re.compile(r"(?:^|_)(?:url|key|token|secret|password)(?:$|_)", re.IGNORECASE)
MASK = "***"


def mask_secrets(text: str) -> str:
    """`text` with every URL password replaced by ***: safe to print or log."""
    text = _URL_PASSWORD.sub(lambda m: m.group("keep") + MASK, text)
    return _QUERY_PASSWORD.sub(lambda m: m.group("keep") + MASK, text)


def _describe(error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"])
        value = item.get("input")
        shown = "" if isinstance(value, dict) or value is None else f" (got {value!r})"
        if shown and _SECRET_NAMES.search(name):
            shown = f" (got {mask_secrets(repr(value))})" if "url" in name.lower() else ""
        message = item["msg"].removeprefix("Value error, ")
        # A rule across settings names its variables in its own message.
        lines.append(f"{name}: {message}{shown}" if name else message)
    return "; ".join(lines)


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as error:
        raise ConfigError(f"invalid configuration: {_describe(error)}") from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
