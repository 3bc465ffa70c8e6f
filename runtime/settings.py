"""Configuration from the environment (README has the table).

Every setting is read once, validated, and a bad value stops start-up with a message that names the
environment variable, e.g. "WIKI_LLM: Input should be 'scripted', 'anthropic' or 'bedrock'".
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class ConfigError(Exception):
    """A setting has a bad value; the message names the variable."""


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=None, extra="ignore", populate_by_name=False)

    database_url: str | None = Field(None, validation_alias=_env("DATABASE_URL"))
    temporal_address: str | None = Field(None, validation_alias=_env("TEMPORAL_ADDRESS"))
    temporal_namespace: str = Field("default", min_length=1, validation_alias=_env("TEMPORAL_NAMESPACE"))
    task_queue: str = Field("wiki-compile", min_length=1, validation_alias=_env("WIKI_TASK_QUEUE"))

    llm: Literal["scripted", "anthropic", "bedrock"] = Field("scripted", validation_alias=_env("WIKI_LLM"))
    anthropic_api_key: SecretStr | None = Field(None, validation_alias=_env("ANTHROPIC_API_KEY"))
    aws_region: str = Field("us-east-1", validation_alias=_env("AWS_REGION"))
    model_id: str = Field("claude-haiku-4-5", min_length=1, validation_alias=_env("WIKI_MODEL_ID"))
    # Total time one model call may spend waiting out throttling before the compile fails
    # (Temporal retries without a count limit inside this bound).
    llm_retry_budget_seconds: int = Field(
        3600, ge=60, le=7 * 24 * 3600, validation_alias=_env("WIKI_LLM_RETRY_BUDGET_SECONDS")
    )
    # Model calls on their own task queue, whose workers cap the calls per second for every worker at
    # once (Temporal enforces it server-side): keep it under the provider's quota to avoid 429s.
    llm_task_queue: str | None = Field(None, min_length=1, validation_alias=_env("WIKI_LLM_TASK_QUEUE"))
    llm_max_per_second: float | None = Field(None, gt=0, validation_alias=_env("WIKI_LLM_MAX_PER_SECOND"))
    # Simulated model latency for the scripted planner (benchmarks); 0 in tests and the demo.
    scripted_latency_ms: int = Field(0, ge=0, le=60_000, validation_alias=_env("WIKI_SCRIPTED_LATENCY_MS"))

    aggregation_pass_enabled: bool = Field(True, validation_alias=_env("WIKI_AGGREGATION_PASS_ENABLED"))
    deterministic_linking_enabled: bool = Field(True, validation_alias=_env("WIKI_DETERMINISTIC_LINKING_ENABLED"))

    record_page_size: int = Field(50, ge=1, le=500, validation_alias=_env("WIKI_RECORD_PAGE_SIZE"))
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

    data_dir: Path = Field(Path(".data"), validation_alias=_env("WIKI_DATA_DIR"))
    metrics_port: int | None = Field(None, ge=1, le=65535, validation_alias=_env("WIKI_METRICS_PORT"))
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
    def _rate_limit_needs_its_queue(self) -> Settings:
        # The limit applies to a whole task queue: on the compile queue it would throttle database work too.
        if self.llm_max_per_second is not None and not self.llm_task_queue:
            raise ValueError("WIKI_LLM_TASK_QUEUE must be set when WIKI_LLM_MAX_PER_SECOND is")
        return self


def _describe(error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "configuration"
        value = item.get("input")
        shown = "" if isinstance(value, dict) or value is None else f" (got {value!r})"
        lines.append(f"{name}: {item['msg']}{shown}")
    return "; ".join(lines)


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as error:
        raise ConfigError(f"invalid configuration: {_describe(error)}") from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
