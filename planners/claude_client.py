"""The model gateway: one Messages API call through the anthropic SDK, provider errors mapped by kind.

The workflow owns retries. The SDK client is built with `max_retries=0`, so a throttled call surfaces
at once as `ModelThrottled` carrying the provider's Retry-After; the activity layer turns it into a
retryable Temporal error whose next retry waits exactly that long, so throttling never fails a scope.
Errors that retrying cannot fix are non-retryable, with a message an operator can act on.

Structured output: a single forced tool. SDK 2.12 offers two mechanisms on the Messages API:
`output_config={"format": {"type": "json_schema", ...}}` (constrained decoding) and tool use with
`tool_choice` naming one tool. We use the forced tool because constrained decoding is only served
for some models (not claude-sonnet-4 nor claude-opus-4-1, both in our price table) and compiles the
schema into a grammar that the API rejects with a 400 when it is large: the plan schema, with its
many optional fields, is exactly that kind. A forced non-strict tool works for every Claude model on
the Anthropic API and on Bedrock, and the plan is validated by pydantic afterwards anyway. The
reply text is then the JSON of the tool input.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, Literal

import anthropic
import httpx2
from pydantic import BaseModel

from domain.errors import ModelRejected, ModelThrottled, ModelTruncated, ModelUnavailable, StepFailed
from domain.pricing import TokenUsage

STRUCTURED_REPLY_TOOL = "submit_answer"
TRUNCATION_STOP_REASONS = frozenset({"max_tokens", "model_context_window_exceeded"})
# A Retry-After beyond this is treated as a bogus header rather than an instruction to stall a scope.
MAX_RETRY_AFTER = timedelta(minutes=10)
# Statuses the provider uses for "try again" that are not throttling (the SDK retries these too).
_RETRYABLE_CLIENT_STATUSES = frozenset({408, 409})
_EPHEMERAL_CACHE = {"type": "ephemeral"}

Provider = Literal["anthropic", "bedrock"]


class ModelReply(BaseModel):
    text: str
    stop_reason: str | None
    usage: TokenUsage
    model: str


class ModelClient:
    """Thin async gateway to Claude on the Anthropic API or on Bedrock."""

    def __init__(
        self,
        *,
        provider: Provider = "anthropic",
        api_key: str | None = None,
        aws_region: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        timeout_seconds: float = 120.0,
    ) -> None:
        self.provider = provider
        self._sdk = _build_sdk_client(provider, api_key, aws_region, http_client, timeout_seconds)

    async def aclose(self) -> None:
        await self._sdk.close()

    async def complete(
        self,
        *,
        model: str,
        system: str,
        stable_user: str = "",
        batch_user: str,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
    ) -> ModelReply:
        """One call. `system` and `stable_user` are marked as prompt-cache breakpoints; `batch_user`
        follows them uncached. With `json_schema`, the model must answer through one tool whose input
        schema it is, and `ModelReply.text` is that input as JSON."""
        # No temperature: the Messages API of SDK 2.12 no longer takes one (the original sent 0).
        request: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "system": [{"type": "text", "text": system, "cache_control": _EPHEMERAL_CACHE}],
            "messages": [{"role": "user", "content": _user_content(stable_user, batch_user)}],
        }
        if json_schema is not None:
            request |= _forced_tool(json_schema)
        try:
            message = await self._sdk.messages.create(**request)
        except anthropic.APIError as err:
            raise _model_error(err, model=model, provider=self.provider) from err
        reply = ModelReply(
            text=_reply_text(message, structured=json_schema is not None),
            stop_reason=message.stop_reason,
            usage=_token_usage(message.usage),
            model=model,
        )
        if reply.stop_reason in TRUNCATION_STOP_REASONS:
            raise _truncated(reply, max_tokens)
        return reply


def retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> timedelta | None:
    """The provider's requested wait: `retry-after-ms` first, then `retry-after` in seconds or as an
    HTTP date. None when absent, unparsable, not positive, or implausibly long."""
    delay = _retry_after_ms(headers.get("retry-after-ms"))
    if delay is None:
        delay = _retry_after_value(headers.get("retry-after"), now or datetime.now(UTC))
    if delay is None or delay <= timedelta(0) or delay > MAX_RETRY_AFTER:
        return None
    return delay


def _retry_after_ms(raw: str | None) -> timedelta | None:
    try:
        return timedelta(milliseconds=float(raw)) if raw is not None else None
    except ValueError:
        return None


def _retry_after_value(raw: str | None, now: datetime) -> timedelta | None:
    if raw is None:
        return None
    try:
        return timedelta(seconds=float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT by definition
        when = when.replace(tzinfo=UTC)
    return when - now


def _build_sdk_client(
    provider: Provider,
    api_key: str | None,
    aws_region: str | None,
    http_client: httpx2.AsyncClient | None,
    timeout_seconds: float,
) -> anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock:
    # max_retries=0: the SDK's own retries would hide throttling from Temporal and multiply attempts.
    if provider == "bedrock":
        return anthropic.AsyncAnthropicBedrock(
            api_key=api_key,
            aws_region=aws_region,
            max_retries=0,
            timeout=timeout_seconds,
            http_client=http_client,
        )
    if provider == "anthropic":
        return anthropic.AsyncAnthropic(
            api_key=api_key, max_retries=0, timeout=timeout_seconds, http_client=http_client
        )
    raise ValueError(f"Unknown model provider {provider!r}: expected 'anthropic' or 'bedrock'.")


def _user_content(stable_user: str, batch_user: str) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if stable_user:
        content.append({"type": "text", "text": stable_user, "cache_control": _EPHEMERAL_CACHE})
    content.append({"type": "text", "text": batch_user})
    return content


def _forced_tool(json_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "tools": [
            {
                "name": STRUCTURED_REPLY_TOOL,
                "description": "Submit your answer: the JSON object described in the instructions.",
                "input_schema": json_schema,
            }
        ],
        "tool_choice": {"type": "tool", "name": STRUCTURED_REPLY_TOOL, "disable_parallel_tool_use": True},
    }


def _reply_text(message: Any, *, structured: bool) -> str:
    if structured:
        for block in message.content:
            if block.type == "tool_use" and block.name == STRUCTURED_REPLY_TOOL:
                return json.dumps(block.input, ensure_ascii=False)
    # Unstructured replies, or a model that answered in text despite the forced tool: the caller's
    # validation decides what the text is worth.
    return "".join(block.text for block in message.content if block.type == "text")


def _token_usage(usage: Any) -> TokenUsage:
    return TokenUsage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
        cache_read_input_tokens=usage.cache_read_input_tokens or 0,
    )


def _truncated(reply: ModelReply, max_tokens: int) -> ModelTruncated:
    # The usage travels with the error so the tokens of the wasted call are still counted in the cost.
    return ModelTruncated(
        f"The reply of model {reply.model} was cut off ({reply.stop_reason}) after "
        f"{reply.usage.output_tokens} output tokens (max_tokens={max_tokens}).",
        spent=reply.usage,
    )


def _model_error(err: anthropic.APIError, *, model: str, provider: Provider) -> StepFailed:
    if isinstance(err, anthropic.APITimeoutError):
        return ModelUnavailable(f"The call to model {model} timed out.")
    if isinstance(err, anthropic.APIConnectionError):
        return ModelUnavailable(f"Could not reach the model provider ({provider}): {err.message}")
    if not isinstance(err, anthropic.APIStatusError):
        return ModelUnavailable(f"The model provider returned an unusable response: {err.message}")
    delay = retry_after(err.response.headers)
    if isinstance(err, anthropic.RateLimitError | anthropic.OverloadedError):
        when = f"after the requested {delay.total_seconds():g} s" if delay else "with backoff"
        return ModelThrottled(
            f"The model provider is throttling ({err.status_code} {_error_kind(err)}); retrying {when}.",
            retry_after=delay,
            benign=True,
        )
    if isinstance(err, anthropic.InternalServerError) or err.status_code in _RETRYABLE_CLIENT_STATUSES:
        return ModelUnavailable(
            f"The model provider failed ({err.status_code} {_error_kind(err)}): {_error_detail(err)}",
            retry_after=delay,
        )
    return ModelRejected(_rejection_message(err, model, provider))


def _rejection_message(err: anthropic.APIStatusError, model: str, provider: Provider) -> str:
    message = (
        f"The model provider rejected the request ({err.status_code} {_error_kind(err)}): "
        f"{_error_detail(err).rstrip('.')}."
    )
    hint = _rejection_hint(err, model, provider)
    return f"{message} {hint}" if hint else message


def _rejection_hint(err: anthropic.APIStatusError, model: str, provider: Provider) -> str:
    credentials = (
        "ANTHROPIC_API_KEY"
        if provider == "anthropic"
        else "the AWS credentials (or AWS_BEARER_TOKEN_BEDROCK)"
    )
    if isinstance(err, anthropic.AuthenticationError):
        return f"Check {credentials}."
    if isinstance(err, anthropic.PermissionDeniedError):
        return f"Check that {credentials} may use model {model}."
    if isinstance(err, anthropic.NotFoundError):
        return f"Check the model id {model!r}: it must exist and be enabled for this account and region."
    if isinstance(err, anthropic.BadRequestError):
        return f"The request to model {model} was malformed or too large; retrying it will not help."
    return ""


def _error_kind(err: anthropic.APIStatusError) -> str:
    # Anthropic names the kind in the body (error.type); Bedrock in a header ("ThrottlingException:...").
    bedrock_kind = err.response.headers.get("x-amzn-errortype", "").split(":")[0]
    return err.type or bedrock_kind or "error"


def _error_detail(err: anthropic.APIStatusError) -> str:
    # Anthropic bodies carry error.message (err.api_message); Bedrock's carry a top-level message.
    return (
        err.api_message or _body_field(err.body, "message") or _body_field(err.body, "Message") or err.message
    )


def _body_field(body: object, key: str) -> str | None:
    value = body.get(key) if isinstance(body, dict) else None
    return value if isinstance(value, str) and value else None
