"""The model gateway through the real anthropic SDK, over loopback HTTP, against the Claude simulator.

The client is aimed at the simulator only by the SDK's base-URL settings (ANTHROPIC_BASE_URL,
ANTHROPIC_BEDROCK_BASE_URL), as a deployment would aim it at the real services.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import anthropic
import pytest
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from activities.common import as_application_error
from domain.context import PlannerContext
from domain.errors import (
    LLM_INTERRUPTED,
    LLM_REJECTED,
    LLM_THROTTLED,
    LLM_TRUNCATED,
    LLM_UNAVAILABLE,
    PLAN_INVALID,
    StepFailed,
)
from domain.pricing import TokenUsage
from planners.claude_client import BEDROCK_ANTHROPIC_VERSION, STRUCTURED_REPLY_TOOL, ModelClient, retry_after
from planners.prompts import PLANNER_REPLY_SCHEMA, PLANNER_SYSTEM, build_planner_prompt
from tests.conftest import SIM_ACCESS_KEY

MODEL = "claude-haiku-4-5"
BEDROCK_MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
API_KEY = "sim-anthropic-key"
ACCESS_KEY = SIM_ACCESS_KEY


def client(provider: str = "anthropic", **options) -> ModelClient:
    if provider == "bedrock":
        return ModelClient(provider="bedrock", aws_region="us-east-1", **options)
    return ModelClient(provider="anthropic", api_key=options.pop("api_key", API_KEY), **options)


async def call(provider: str = "anthropic", model: str | None = None, *, structured: bool = True,
               user: str = "No memories.", max_tokens: int = 4096, **options):
    gateway = client(provider, **options)
    try:
        return await gateway.complete(model=model or (BEDROCK_MODEL if provider == "bedrock" else MODEL),
                                      system=PLANNER_SYSTEM, user=user, max_tokens=max_tokens,
                                      json_schema=PLANNER_REPLY_SCHEMA if structured else None)
    finally:
        await gateway.aclose()


async def failure(provider: str = "anthropic", model: str | None = None, **options) -> tuple[StepFailed, ApplicationError]:
    with pytest.raises(StepFailed) as raised:
        await call(provider, model, **options)
    return raised.value, as_application_error(raised.value)


# ------------------------------------------------------------------ requests


async def test_a_structured_call_streams_forces_the_reply_tool_and_reads_the_tool_input(sim) -> None:
    # A leaf prompt of an empty batch: the simulated model answers in the contract's shape.
    empty = build_planner_prompt(PlannerContext(tenant_id="t", owner_id="o", memories=[], candidate_pages=[],
                                                open_mentions=[]))
    reply = await call(user=empty.user)

    [sent] = sim.calls
    assert (sent.path, sent.streamed, sent.auth, sent.identity) == ("/v1/messages", True, "bearer", API_KEY)
    assert sent.body["tool_choice"] == {"type": "tool", "name": STRUCTURED_REPLY_TOOL, "disable_parallel_tool_use": True}
    assert sent.body["tools"][0]["input_schema"] == PLANNER_REPLY_SCHEMA
    assert "temperature" not in sent.body
    assert set(json.loads(reply.text)) >= {"updates", "new_pages", "held", "promotions"}
    assert reply.stop_reason == "tool_use"
    assert reply.usage == TokenUsage(**sent.usage.as_dict())


async def test_haiku_45_gets_no_cache_breakpoint_because_the_stable_prefix_is_below_its_minimum(sim) -> None:
    await call()
    await call()

    assert [c.breakpoints for c in sim.calls] == [0, 0]
    assert all(c.usage.cache_creation_input_tokens == c.usage.cache_read_input_tokens == 0 for c in sim.calls)


async def test_a_model_with_a_lower_minimum_caches_the_system_prompt_and_reads_it_back(sim) -> None:
    # Sonnet 4.6's minimum (2,048 tokens) is under the planner's stable prefix (tools and system).
    first = await call(model="claude-sonnet-4-6", user="First batch.")
    second = await call(model="claude-sonnet-4-6", user="Second batch, different.")

    assert [c.breakpoints for c in sim.calls] == [1, 1]
    assert [c.body["system"][0]["cache_control"] for c in sim.calls] == [{"type": "ephemeral"}] * 2
    assert first.usage.cache_creation_input_tokens > 0 and first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0


async def test_an_unstructured_call_returns_the_text_and_sends_no_tool(sim) -> None:
    reply = await call(structured=False, user="Say hello.")

    assert "tools" not in sim.calls[0].body and "tool_choice" not in sim.calls[0].body
    assert reply.text == "Simulated reply." and reply.stop_reason == "end_turn"


async def test_bedrock_signs_with_sigv4_sends_its_version_in_the_body_and_never_the_anthropic_key(
        sim, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)  # set, but it must not travel to Bedrock
    reply = await call("bedrock")

    [sent] = sim.calls
    assert sent.path == f"/model/{BEDROCK_MODEL}/invoke-with-response-stream"
    assert (sent.platform, sent.auth, sent.identity, sent.status) == ("bedrock", "sigv4", ACCESS_KEY, 200)
    assert sent.body["anthropic_version"] == BEDROCK_ANTHROPIC_VERSION
    assert "model" not in sent.body and "stream" not in sent.body
    assert reply.usage == TokenUsage(**sent.usage.as_dict())


async def test_bedrock_takes_a_bedrock_api_key_from_the_environment(sim, monkeypatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "sim-bedrock-key")
    await call("bedrock")

    assert (sim.calls[0].auth, sim.calls[0].identity) == ("bearer", "sim-bedrock-key")


async def test_bedrock_with_the_sdks_own_version_is_rejected_by_the_simulator_as_by_bedrock(sim) -> None:
    gateway = client("bedrock")
    try:
        with pytest.raises(anthropic.BadRequestError, match="anthropic_version"):
            await gateway._sdk.messages.create(model=BEDROCK_MODEL, max_tokens=10,
                                               messages=[{"role": "user", "content": "hi"}])
    finally:
        await gateway.aclose()


# ------------------------------------------------------------------ errors


async def test_a_rate_limit_is_retryable_after_the_providers_retry_after(sim) -> None:
    sim.fail_next("rate_limit", retry_after=7)
    error, app_error = await failure()

    assert app_error.type == LLM_THROTTLED and not app_error.non_retryable
    assert app_error.next_retry_delay == timedelta(seconds=7)
    assert app_error.category == ApplicationErrorCategory.BENIGN
    assert "429 rate_limit_error" in error.message


async def test_overloaded_without_retry_after_leaves_the_delay_to_temporal_backoff(sim) -> None:
    sim.fail_next("overloaded")
    error, app_error = await failure()

    assert (app_error.type, app_error.next_retry_delay) == (LLM_THROTTLED, None)
    assert "529 overloaded_error" in error.message


async def test_a_spend_limit_is_not_retried_and_says_so(sim) -> None:
    sim.fail_next("spend_limit")
    error, app_error = await failure()

    assert app_error.type == LLM_REJECTED and app_error.non_retryable
    assert "spend limit" in error.message and "\n" not in error.message


@pytest.mark.parametrize(("provider", "fault", "status"),
                         [("anthropic", "server_error", "500"), ("bedrock", "server_error", "500"),
                          ("bedrock", "model_error", "424 ModelErrorException")])
async def test_server_and_bedrock_model_errors_are_retryable_unavailability(sim, provider, fault, status) -> None:
    sim.fail_next(fault)
    error, app_error = await failure(provider)

    assert app_error.type == LLM_UNAVAILABLE and not app_error.non_retryable
    assert status in error.message


async def test_bedrock_throttling_and_overload_are_throttling(sim) -> None:
    sim.fail_next("rate_limit")
    sim.fail_next("overloaded")
    first, _ = await failure("bedrock")
    second, _ = await failure("bedrock")

    assert first.kind == second.kind == LLM_THROTTLED
    assert "429 ThrottlingException" in first.message and "503 ServiceUnavailableException" in second.message


async def test_a_bad_api_key_is_rejected_for_good_naming_the_setting(sim) -> None:
    error, app_error = await failure(api_key="sk-wrong")

    assert app_error.type == LLM_REJECTED and app_error.non_retryable
    assert "401 authentication_error" in error.message and "ANTHROPIC_API_KEY" in error.message


@pytest.mark.parametrize(("provider", "model"), [("anthropic", "claude-haiku-9"),
                                                 ("bedrock", "claude-haiku-4-5")])
async def test_an_unknown_model_id_is_rejected_naming_the_setting(sim, provider, model) -> None:
    error, app_error = await failure(provider, model)

    assert app_error.type == LLM_REJECTED
    assert f"WIKI_MODEL_ID ({model!r})" in error.message


async def test_max_tokens_above_the_models_limit_is_a_bad_request(sim) -> None:
    error, _ = await failure(max_tokens=64_001)

    assert error.kind == LLM_REJECTED and "max_tokens: 64001 > 64000" in error.message


async def test_a_hung_connection_is_an_interruption_after_the_stall_timeout(sim) -> None:
    sim.fail_next("hang")
    error, app_error = await failure(stall_timeout_seconds=0.3)

    assert app_error.type == LLM_INTERRUPTED and app_error.non_retryable  # the workflow retries it
    assert "stalled" in error.message and error.spent == TokenUsage()


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
@pytest.mark.parametrize("fault", ["stall", "stream_error"])
async def test_a_stream_cut_short_is_an_interruption_carrying_the_tokens_it_reported(sim, provider, fault) -> None:
    sim.fail_next(fault)
    error, app_error = await failure(provider, stall_timeout_seconds=0.3)

    assert app_error.type == LLM_INTERRUPTED
    assert error.spent == TokenUsage(**sim.calls[0].usage.as_dict())
    assert error.spent.input_tokens > 0


async def test_a_call_past_its_deadline_is_an_interruption(sim) -> None:
    sim.config.ttft_seconds = 1.0
    error, _ = await failure(first_token_seconds=0.2, min_output_tokens_per_second=1e9)

    assert error.kind == LLM_INTERRUPTED and "deadline" in error.message


async def test_a_reply_cut_off_at_max_tokens_is_a_truncation_carrying_its_usage(sim) -> None:
    sim.fail_next("truncate")
    error, app_error = await failure()

    assert app_error.type == LLM_TRUNCATED and app_error.non_retryable
    assert error.spent == TokenUsage(**sim.calls[0].usage.as_dict())


async def test_a_refusal_is_an_invalid_plan(sim) -> None:
    sim.fail_next("refusal")
    error, _ = await failure()

    assert error.kind == PLAN_INVALID and "refusal" in error.message


async def test_an_unreachable_provider_is_retryable_unavailability(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
    error, app_error = await failure()

    assert app_error.type == LLM_UNAVAILABLE and not app_error.non_retryable


async def test_bedrock_without_aws_credentials_fails_in_one_sentence(sim, monkeypatch, tmp_path) -> None:
    from anthropic.lib.aws import _auth  # the SDK caches its boto3 session per credential arguments

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    _auth._get_session.cache_clear()
    try:
        error, app_error = await failure("bedrock")
    finally:
        _auth._get_session.cache_clear()

    assert app_error.type == LLM_REJECTED and "No AWS credentials" in error.message
    assert sim.calls == []


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, timedelta(seconds=7)),
        ({"retry-after": "1.5"}, timedelta(seconds=1.5)),
        ({"retry-after-ms": "2500", "retry-after": "9"}, timedelta(milliseconds=2500)),
        ({"retry-after": "Thu, 01 Jan 2026 00:00:30 GMT"}, timedelta(seconds=30)),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "0"}, None),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "86400"}, None),
        ({}, None),
    ],
)
def test_retry_after(headers: dict[str, str], expected: timedelta | None) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert retry_after(headers, now=now) == expected
