"""The model gateway driven through the real anthropic SDK, with only the HTTP transport faked."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from activities.common import as_application_error
from domain.errors import LLM_REJECTED, LLM_THROTTLED, LLM_TRUNCATED, LLM_UNAVAILABLE, StepFailed
from domain.plan import Plan
from domain.pricing import TokenUsage
from planners.claude_client import STRUCTURED_REPLY_TOOL, ModelClient, retry_after
from planners.prompts import PLANNER_REPLY_SCHEMA

MODEL = "claude-haiku-4-5"
BEDROCK_MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
EMPTY_PLAN = {"pageUpdates": [], "newPages": [], "unresolvedMentions": [], "promotions": [], "pageLinks": []}
USAGE = {
    "input_tokens": 120,
    "output_tokens": 45,
    "cache_creation_input_tokens": 2048,
    "cache_read_input_tokens": 4096,
}


class FakeApi:
    """An HTTP endpoint that answers with the given responses in order and records every request."""

    def __init__(self, *responses: httpx2.Response | Exception) -> None:
        self._responses = list(responses)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        response = self._responses.pop(0)
        if isinstance(response, Exception):
            raise response
        return response

    def body(self) -> dict[str, Any]:
        return json.loads(self.requests[-1].content)


def message(content: list[dict[str, Any]], stop_reason: str = "end_turn") -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": USAGE,
        },
    )


def tool_reply(tool_input: dict[str, Any], stop_reason: str = "tool_use") -> httpx2.Response:
    block = {"type": "tool_use", "id": "toolu_01", "name": STRUCTURED_REPLY_TOOL, "input": tool_input}
    return message([block], stop_reason)


def api_error(status: int, kind: str, text: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return httpx2.Response(status, json=body, headers=headers)


def client_for(api: FakeApi, provider: str = "anthropic") -> ModelClient:
    http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(api))
    if provider == "bedrock":
        return ModelClient(
            provider="bedrock", api_key="bedrock-token", aws_region="us-east-1", http_client=http_client
        )
    return ModelClient(provider="anthropic", api_key="test-key", http_client=http_client)


async def plan_call(api: FakeApi, provider: str = "anthropic", model: str = MODEL) -> Any:
    client = client_for(api, provider)
    try:
        return await client.complete(
            model=model,
            system="SYSTEM RULES",
            stable_user="STABLE PAGES",
            batch_user="BATCH RECORDS",
            max_tokens=24000,
            json_schema=PLANNER_REPLY_SCHEMA,
        )
    finally:
        await client.aclose()


async def failing_call(api: FakeApi, provider: str = "anthropic", model: str = MODEL) -> ApplicationError:
    """The provider's failure as the workflow sees it: the client's error, named for Temporal."""
    with pytest.raises(StepFailed) as caught:
        await plan_call(api, provider, model)
    assert len(api.requests) == 1, "the SDK must not retry on its own"
    return as_application_error(caught.value)


# --- success ------------------------------------------------------------------------------------


async def test_structured_call_caches_system_and_stable_part_and_forces_the_reply_tool() -> None:
    plan = {**EMPTY_PLAN, "unresolvedMentions": [{"alias": "Chef João", "suggestedType": "entity"}]}
    api = FakeApi(tool_reply(plan))

    reply = await plan_call(api)

    assert len(api.requests) == 1
    assert api.requests[0].url.path == "/v1/messages"
    body = api.body()
    assert body["model"] == MODEL
    assert body["max_tokens"] == 24000
    assert body["system"] == [
        {"type": "text", "text": "SYSTEM RULES", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "STABLE PAGES", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "BATCH RECORDS"},
            ],
        }
    ]
    assert body["tools"] == [
        {
            "name": STRUCTURED_REPLY_TOOL,
            "description": body["tools"][0]["description"],
            "input_schema": PLANNER_REPLY_SCHEMA,
        }
    ]
    assert body["tool_choice"] == {
        "type": "tool",
        "name": STRUCTURED_REPLY_TOOL,
        "disable_parallel_tool_use": True,
    }
    assert "output_config" not in body
    assert json.loads(reply.text) == plan
    assert Plan.model_validate_json(reply.text).unresolvedMentions[0].alias == "Chef João"
    assert reply.stop_reason == "tool_use"
    assert reply.model == MODEL
    assert reply.usage == TokenUsage(**USAGE)


async def test_unstructured_call_returns_the_text_and_sends_no_tool_and_no_empty_stable_block() -> None:
    api = FakeApi(message([{"type": "text", "text": "Final "}, {"type": "text", "text": "body."}]))

    reply = await client_for(api).complete(
        model=MODEL, system="WRITER", batch_user="Section to write", max_tokens=2048
    )

    body = api.body()
    assert body["messages"][0]["content"] == [{"type": "text", "text": "Section to write"}]
    assert "tools" not in body and "tool_choice" not in body
    assert reply.text == "Final body."
    assert reply.stop_reason == "end_turn"


async def test_bedrock_calls_the_invoke_endpoint_of_the_model() -> None:
    api = FakeApi(tool_reply(EMPTY_PLAN))

    reply = await plan_call(api, provider="bedrock", model=BEDROCK_MODEL)

    assert api.requests[0].url.host == "bedrock-runtime.us-east-1.amazonaws.com"
    assert api.requests[0].url.path == f"/model/{BEDROCK_MODEL}/invoke"
    body = api.body()
    assert "model" not in body and body["anthropic_version"]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert json.loads(reply.text) == EMPTY_PLAN


# --- throttling and outages: retryable, with the provider's delay --------------------------------


async def test_rate_limit_is_retryable_after_the_providers_retry_after_seconds() -> None:
    api = FakeApi(api_error(429, "rate_limit_error", "Number of requests exceeded", {"retry-after": "7"}))

    error = await failing_call(api)

    assert error.type == LLM_THROTTLED
    assert not error.non_retryable
    assert error.next_retry_delay == timedelta(seconds=7)
    assert error.category == ApplicationErrorCategory.BENIGN


async def test_retry_after_ms_takes_precedence_over_retry_after() -> None:
    headers = {"retry-after-ms": "1500", "retry-after": "30"}
    api = FakeApi(api_error(429, "rate_limit_error", "slow down", headers))

    error = await failing_call(api)

    assert error.type == LLM_THROTTLED
    assert error.next_retry_delay == timedelta(milliseconds=1500)


async def test_overloaded_without_retry_after_leaves_the_delay_to_temporal_backoff() -> None:
    api = FakeApi(api_error(529, "overloaded_error", "Overloaded"))

    error = await failing_call(api)

    assert error.type == LLM_THROTTLED
    assert not error.non_retryable
    assert error.next_retry_delay is None
    assert error.category == ApplicationErrorCategory.BENIGN


@pytest.mark.parametrize("status", [500, 503])
async def test_server_errors_are_retryable_unavailability(status: int) -> None:
    api = FakeApi(api_error(status, "api_error", "Internal server error", {"retry-after": "3"}))

    error = await failing_call(api)

    assert error.type == LLM_UNAVAILABLE
    assert not error.non_retryable
    assert error.next_retry_delay == timedelta(seconds=3)
    assert error.category != ApplicationErrorCategory.BENIGN


async def test_connection_failure_is_retryable_unavailability() -> None:
    api = FakeApi(httpx2.ConnectError("connection refused"))

    error = await failing_call(api)

    assert error.type == LLM_UNAVAILABLE
    assert not error.non_retryable


async def test_bedrock_throttling_is_read_from_its_own_error_shape() -> None:
    throttled = httpx2.Response(
        429,
        json={"message": "Too many requests, please wait before trying again."},
        headers={"x-amzn-errortype": "ThrottlingException:http://internal.amazon.com/", "retry-after": "2"},
    )
    api = FakeApi(throttled)

    error = await failing_call(api, provider="bedrock", model=BEDROCK_MODEL)

    assert error.type == LLM_THROTTLED
    assert "ThrottlingException" in error.message
    assert error.next_retry_delay == timedelta(seconds=2)


# --- rejections: non-retryable, with a message an operator can act on ----------------------------


async def test_bad_api_key_is_rejected_for_good_with_a_clear_message() -> None:
    api = FakeApi(api_error(401, "authentication_error", "invalid x-api-key"))

    error = await failing_call(api)

    assert error.type == LLM_REJECTED
    assert error.non_retryable
    assert error.message == (
        "The model provider rejected the request (401 authentication_error): invalid x-api-key. "
        "Check ANTHROPIC_API_KEY."
    )


async def test_bad_request_is_rejected_for_good() -> None:
    api = FakeApi(api_error(400, "invalid_request_error", "max_tokens: 24000 > 8192, the maximum allowed"))

    error = await failing_call(api)

    assert error.type == LLM_REJECTED
    assert error.non_retryable
    assert error.message.startswith(
        "The model provider rejected the request (400 invalid_request_error): max_tokens: 24000 > 8192"
    )


async def test_unknown_model_is_rejected_naming_the_model() -> None:
    api = FakeApi(api_error(404, "not_found_error", "model: claude-nope"))

    error = await failing_call(api, model="claude-nope")

    assert error.type == LLM_REJECTED
    assert error.non_retryable
    assert "(404 not_found_error)" in error.message
    assert "Check the model id 'claude-nope'" in error.message


async def test_permission_denied_is_rejected_for_good() -> None:
    api = FakeApi(api_error(403, "permission_error", "Your API key does not have permission"))

    error = await failing_call(api)

    assert error.type == LLM_REJECTED
    assert error.non_retryable


# --- truncation ----------------------------------------------------------------------------------


async def test_reply_cut_off_at_max_tokens_is_a_non_retryable_truncation_carrying_its_usage() -> None:
    api = FakeApi(tool_reply({"pageUpdates": []}, stop_reason="max_tokens"))

    error = await failing_call(api)

    assert error.type == LLM_TRUNCATED
    assert error.non_retryable
    assert "max_tokens=24000" in error.message
    assert TokenUsage.model_validate(error.details[0]) == TokenUsage(**USAGE)


# --- Retry-After parsing -------------------------------------------------------------------------

NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, timedelta(seconds=7)),
        ({"retry-after": "2.5"}, timedelta(seconds=2.5)),
        ({"retry-after-ms": "250"}, timedelta(milliseconds=250)),
        ({"retry-after-ms": "soon", "retry-after": "4"}, timedelta(seconds=4)),
        ({"retry-after": "Fri, 01 May 2026 12:00:30 GMT"}, timedelta(seconds=30)),
        ({"retry-after": "Fri, 01 May 2026 11:59:00 GMT"}, None),
        ({"retry-after": "0"}, None),
        ({"retry-after": "whenever"}, None),
        ({"retry-after": "86400"}, None),
        ({}, None),
    ],
)
def test_retry_after(headers: dict[str, str], expected: timedelta | None) -> None:
    assert retry_after(headers, now=NOW) == expected
