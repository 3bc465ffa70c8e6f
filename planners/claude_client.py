"""The model gateway: one streamed Messages API call through the anthropic SDK, errors mapped by kind.

The workflow owns retries. The SDK client is built with `max_retries=0`, so a throttled call surfaces
at once as `ModelThrottled` carrying the provider's Retry-After; the activity layer turns it into a
retryable Temporal error whose next retry waits exactly that long. Errors that retrying cannot fix
(bad key, unknown model, spend limit, missing AWS credentials) are non-retryable, with one sentence
an operator can act on.

Streaming: a long plan takes minutes to generate, and a non-streamed call waits silently for all of
it. Every call streams, so the connection carries bytes as the model writes; a call is cut short
when nothing arrives for the stall timeout, or when it runs past a deadline derived from its
max_tokens. Either way it becomes `ModelInterrupted`, carrying the tokens the provider reported
before the cut, and the workflow retries it and then splits the batch (a plan that long is better
asked for in halves).

Structured output: a single forced tool. SDK 2.12 offers two mechanisms on the Messages API:
`output_config={"format": {"type": "json_schema", ...}}` (constrained decoding) and tool use with
`tool_choice` naming one tool. We use the forced tool because constrained decoding is only served
for some models and compiles the schema into a grammar that the API rejects with a 400 when it is
large: the plan schema, with its many optional fields, is exactly that kind. A forced non-strict
tool works for every Claude model on the Anthropic API and on Bedrock, and the plan is validated by
pydantic afterwards anyway. The reply text is then the JSON of the tool input.

Prompt caching: a breakpoint caches the exact prefix before it, and only when that prefix reaches
the model's minimum cacheable length. The only prefix that is the same from call to call is the
tool schema plus the system prompt, so that is the only place a breakpoint goes, and only when it
is long enough for the model (Haiku 4.5 needs 4,096 tokens; our planner prefix is shorter, so on
Haiku 4.5 nothing is marked and nothing is paid at the cache-write rate).

Bedrock: the SDK's Bedrock client puts the SDK's own API version into the request body, which
Bedrock's Claude models do not accept; the body carries `bedrock-2023-05-31` instead. It signs with
SigV4 from the AWS credential chain, or sends a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK), never
the Anthropic key.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, Literal, Protocol, cast

import anthropic
import httpx2
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from anthropic.types.messages.batch_create_params import Request
from pydantic import BaseModel

from domain.errors import (
    BatchGone,
    ModelInterrupted,
    ModelRejected,
    ModelThrottled,
    ModelTruncated,
    ModelUnavailable,
    PlanInvalid,
    StepFailed,
)
from domain.pricing import ModelPrice, TokenUsage, cache_prefix_worthwhile, estimate_tokens

# The SDKs log each request's whole body (the prompt: memory text) at DEBUG. No log line may hold
# memory text, so their loggers stay at INFO whatever the root level (ANTHROPIC_LOG=debug included).
SDK_LOGGERS = ("anthropic", "openai", "httpx", "httpx2", "httpcore")
for _name in SDK_LOGGERS:
    if logging.getLogger(_name).level < logging.INFO:  # unset (0) or DEBUG
        logging.getLogger(_name).setLevel(logging.INFO)

STRUCTURED_REPLY_TOOL = "submit_answer"
TRUNCATION_STOP_REASONS = frozenset({"max_tokens", "model_context_window_exceeded"})
BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31"
# A Retry-After beyond this is treated as a bogus header rather than an instruction to stall a scope.
MAX_RETRY_AFTER = timedelta(minutes=10)
# A call's deadline: time to the first token, then max_tokens at the slowest healthy output rate,
# never more than MAX_CALL_SECONDS (the workflow gives one attempt a little more than that).
FIRST_TOKEN_ALLOWANCE_SECONDS = 60.0
MAX_CALL_SECONDS = 15 * 60.0
CONNECT_TIMEOUT_SECONDS = 10.0
# Statuses the provider uses for "try again" that are not throttling: request timeout, conflict,
# and Bedrock's ModelErrorException (424: the model failed to process the request, transient).
_RETRYABLE_CLIENT_STATUSES = frozenset({408, 409, 424})
# Error kinds of a stream that broke after it started (Anthropic's error types, Bedrock's exception
# names as the SDK reports them) that a retry can fix.
_TRANSIENT_STREAM_ERRORS = frozenset({
    "overloaded_error", "rate_limit_error", "api_error", "timeout_error",
    "throttlingException", "serviceUnavailableException", "internalServerException",
    "modelStreamErrorException", "modelTimeoutException", "modelNotReadyException",
})
# A 429 that is a spend limit, not a rate limit: retrying cannot help until someone raises the limit.
_SPEND_LIMIT_CODES = frozenset({"enforced_spend_limit_reached", "contract_spend_limit_reached"})
_EPHEMERAL_CACHE = {"type": "ephemeral"}

Provider = Literal["anthropic", "bedrock"]


class ModelReply(BaseModel):
    text: str
    stop_reason: str | None
    usage: TokenUsage
    model: str
    batch: bool = False  # answered inside a Message Batch: billed at the batch price


class BatchItem(BaseModel):
    """One request of a Message Batch: what `complete` would send, named by `custom_id`."""

    custom_id: str
    model: str
    system: str
    user: str
    max_tokens: int
    json_schema: dict[str, Any] | None = None


class BatchState(BaseModel):
    batch_id: str
    ended: bool
    processing: int = 0
    succeeded: int = 0
    errored: int = 0
    canceling: bool = False  # a cancel was asked and the requests in progress are finishing
    canceled: int = 0


class BatchOutcome(BaseModel):
    """One request's result: the reply, or why there is none (errored, canceled, expired)."""

    custom_id: str
    reply: ModelReply | None = None
    error: str = ""


class Completes(Protocol):
    """Whatever answers a model call as `ModelClient.complete` does (the client itself, or a stand-in
    that answers it from a Message Batch)."""

    async def complete(self, *, model: str, system: str, user: str, max_tokens: int,
                       json_schema: dict[str, Any] | None = None) -> ModelReply: ...


class ModelGateway(Completes, Protocol):
    """What a planner needs of its gateway: `ModelClient` (Claude), or `OpenAICompatibleClient`
    (planners/openai_client.py) for a model on an OpenAI-compatible server."""

    @property
    def provider(self) -> str: ...

    @property
    def supports_batches(self) -> bool: ...

    # The price its calls are billed at; None: the list price of the model id (domain/pricing.py).
    @property
    def price(self) -> ModelPrice | None: ...

    async def aclose(self) -> None: ...


class ModelClient:
    """Thin async gateway to Claude on the Anthropic API or on Bedrock."""

    price: ModelPrice | None = None  # Claude's calls are priced by model id at the list prices

    def __init__(
        self,
        *,
        provider: Provider = "anthropic",
        api_key: str | None = None,
        aws_region: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        stall_timeout_seconds: float = 60.0,
        min_output_tokens_per_second: float = 40.0,
        first_token_seconds: float = FIRST_TOKEN_ALLOWANCE_SECONDS,
    ) -> None:
        """`api_key` is the Anthropic API key, or on Bedrock a Bedrock API key (None: SigV4 from the
        AWS credential chain, unless AWS_BEARER_TOKEN_BEDROCK is set, which the SDK reads)."""
        self.provider = provider
        self._stall_timeout = stall_timeout_seconds
        self._min_rate = min_output_tokens_per_second
        self._first_token = first_token_seconds
        self._sdk = _build_sdk_client(provider, api_key, aws_region, http_client, stall_timeout_seconds)

    async def aclose(self) -> None:
        await self._sdk.close()

    def deadline_seconds(self, max_tokens: int) -> float:
        return min(MAX_CALL_SECONDS, self._first_token + max_tokens / self._min_rate)

    async def complete(
        self,
        *,
        model: str,
        system: str,
        user: str,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
    ) -> ModelReply:
        """One streamed call. With `json_schema`, the model must answer through one tool whose input
        schema it is, and `ModelReply.text` is that input as JSON."""
        request = self._request(model, system, user, max_tokens, json_schema)
        progress = _Progress()
        deadline = self.deadline_seconds(max_tokens)
        try:
            async with asyncio.timeout(deadline):
                async with self._sdk.messages.stream(**request) as stream:
                    async for event in stream:
                        progress.observe(event)
                    message = await stream.get_final_message()
        except TimeoutError:
            raise ModelInterrupted(
                f"The call to model {model} did not finish within its {deadline:.0f} s deadline "
                f"(max_tokens={max_tokens}); it is retried, then the batch is split.",
                spent=progress.spent()) from None
        except anthropic.APIError as err:
            raise _model_error(err, model=model, provider=self.provider, progress=progress,
                               stall=self._stall_timeout) from err
        except httpx2.TransportError as err:
            # Raised as is (not wrapped by the SDK) when the connection fails while the stream is read.
            raise _transport_error(err, model=model, provider=self.provider, progress=progress,
                                   stall=self._stall_timeout) from err
        except (ImportError, RuntimeError, ValueError) as err:
            # Raised by the SDK before anything is sent: Bedrock's signing needs boto3 and credentials.
            raise _setup_error(err, self.provider) from err
        reply = ModelReply(
            text=_reply_text(message, structured=json_schema is not None),
            stop_reason=message.stop_reason,
            usage=_token_usage(message.usage),
            model=model,
        )
        return checked_reply(reply, max_tokens)

    # ------------------------------------------------------------------ Message Batches

    @property
    def supports_batches(self) -> bool:
        """Message Batches exist on the Anthropic API only: the SDK's Bedrock client has none (Bedrock's
        batch inference is a separate job API over S3), so on Bedrock every call is interactive."""
        return self.provider == "anthropic"

    async def submit_batch(self, items: list[BatchItem]) -> str:
        """Create one Message Batch of `items` (billed at half price, answered within 24 hours); its id."""
        if not self.supports_batches:
            raise ModelRejected("Message Batches are not available on Bedrock; calls there are interactive.")
        # The same request body as an interactive call's (built untyped by `_request`), minus streaming.
        requests = [Request(custom_id=item.custom_id, params=cast(MessageCreateParamsNonStreaming, self._request(
                        item.model, item.system, item.user, item.max_tokens, item.json_schema)))
                    for item in items]
        model = items[0].model if items else ""
        try:
            batch = await self._sdk.messages.batches.create(requests=requests)
        except anthropic.APIError as err:
            raise _model_error(err, model=model, provider=self.provider, progress=_Progress(),
                               stall=self._stall_timeout) from err
        return batch.id

    async def batch_state(self, batch_id: str) -> BatchState:
        try:
            batch = await self._sdk.messages.batches.retrieve(batch_id)
        except anthropic.APIError as err:
            raise self._batch_error(err, batch_id) from err
        return _batch_state(batch)

    async def cancel_batch(self, batch_id: str) -> BatchState:
        """Ask the provider to stop a batch: it is `canceling` until the requests in progress finish,
        then ended, every request not processed by then `canceled`. One that has ended stays as it is."""
        try:
            batch = await self._sdk.messages.batches.cancel(batch_id)
        except anthropic.BadRequestError:
            state = await self.batch_state(batch_id)
            if state.ended:
                return state  # nothing left to cancel
            raise
        except anthropic.APIError as err:
            raise self._batch_error(err, batch_id) from err
        return _batch_state(batch)

    async def delete_batch(self, batch_id: str) -> bool:
        """Delete an ended batch and its results at the provider (a batch in progress must be canceled
        and have ended first); False when the provider held no such batch any more."""
        try:
            await self._sdk.messages.batches.delete(batch_id)
        except anthropic.NotFoundError:
            return False
        except anthropic.APIError as err:
            raise self._batch_error(err, batch_id) from err
        return True

    def _batch_error(self, err: anthropic.APIError, batch_id: str) -> StepFailed:
        if isinstance(err, anthropic.NotFoundError):
            return BatchGone(f"The provider holds no Message Batch {batch_id} (never created for this key, "
                             "or deleted).")
        return _model_error(err, model="", provider=self.provider, progress=_Progress(), stall=self._stall_timeout)

    async def batch_results(self, batch_id: str) -> list[BatchOutcome]:
        """Every request's outcome, matched by custom_id (the results file is in no particular order)."""
        outcomes: list[BatchOutcome] = []
        try:
            decoder = await self._sdk.messages.batches.results(batch_id)
            async for line in decoder:
                result = line.result
                if result.type == "succeeded":
                    message = result.message
                    outcomes.append(BatchOutcome(custom_id=line.custom_id, reply=ModelReply(
                        text=_reply_text(message, structured=True), stop_reason=message.stop_reason,
                        usage=_token_usage(message.usage), model=message.model, batch=True)))
                else:
                    detail = getattr(getattr(getattr(result, "error", None), "error", None), "message", "")
                    outcomes.append(BatchOutcome(custom_id=line.custom_id, error=f"{result.type}: {detail}".strip()))
        except anthropic.APIError as err:
            raise self._batch_error(err, batch_id) from err
        except httpx2.TransportError as err:
            raise _transport_error(err, model="", provider=self.provider, progress=_Progress(),
                                   stall=self._stall_timeout) from err
        return outcomes

    def _request(self, model: str, system: str, user: str, max_tokens: int,
                 json_schema: dict[str, Any] | None) -> dict[str, Any]:
        # No temperature: the SDK's Messages API (2.12) has no such parameter.
        tools = _forced_tool(json_schema) if json_schema is not None else {}
        prefix_chars = len(system) + len(json.dumps(tools.get("tools", [])))
        system_block: dict[str, Any] = {"type": "text", "text": system}
        if cache_prefix_worthwhile(model, estimate_tokens(prefix_chars)):
            system_block["cache_control"] = _EPHEMERAL_CACHE
        request: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "system": [system_block],
            "messages": [{"role": "user", "content": [{"type": "text", "text": user}]}],
            **tools,
        }
        if self.provider == "bedrock":
            request["extra_body"] = {"anthropic_version": BEDROCK_ANTHROPIC_VERSION}
        return request


def _batch_state(batch: Any) -> BatchState:
    counts = batch.request_counts
    return BatchState(batch_id=batch.id, ended=batch.processing_status == "ended",
                      canceling=batch.processing_status == "canceling", processing=counts.processing,
                      succeeded=counts.succeeded, errored=counts.errored, canceled=counts.canceled)


def checked_reply(reply: ModelReply, max_tokens: int) -> ModelReply:
    """The reply, or the error of a reply cut off or refused (its tokens travel on the error)."""
    if reply.stop_reason in TRUNCATION_STOP_REASONS:
        raise _truncated(reply, max_tokens)
    if reply.stop_reason == "refusal":
        raise PlanInvalid(f"Model {reply.model} declined to answer (stop_reason refusal).", spent=reply.usage)
    return reply


class _Progress:
    """What a stream reported before it ended: the usage of message_start and message_delta, and the
    characters of content received (an estimate of output tokens when no delta reported them)."""

    def __init__(self) -> None:
        self.usage: TokenUsage | None = None
        self.output_tokens = 0
        self.content_chars = 0

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", "")
        if kind == "message_start":
            self.usage = _token_usage(event.message.usage)
        elif kind == "message_delta" and getattr(event, "usage", None) is not None:
            self.output_tokens = max(self.output_tokens, event.usage.output_tokens or 0)
        elif kind == "content_block_delta":
            delta = event.delta
            self.content_chars += len(getattr(delta, "text", "") or getattr(delta, "partial_json", "") or "")

    @property
    def started(self) -> bool:
        return self.usage is not None

    def spent(self) -> TokenUsage:
        if self.usage is None:
            return TokenUsage()
        output = max(self.usage.output_tokens, self.output_tokens, estimate_tokens(self.content_chars))
        return self.usage.model_copy(update={"output_tokens": output})


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
    stall_timeout_seconds: float,
) -> anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock:
    # max_retries=0: the SDK's own retries would hide throttling from Temporal and multiply attempts.
    # The read timeout is the stall timeout: on a stream it bounds the silence between two chunks.
    timeout = httpx2.Timeout(stall_timeout_seconds, connect=CONNECT_TIMEOUT_SECONDS)
    if provider == "bedrock":
        return anthropic.AsyncAnthropicBedrock(
            api_key=api_key, aws_region=aws_region, max_retries=0, timeout=timeout, http_client=http_client,
        )
    if provider == "anthropic":
        return anthropic.AsyncAnthropic(api_key=api_key, max_retries=0, timeout=timeout, http_client=http_client)
    raise ValueError(f"Unknown model provider {provider!r}: expected 'anthropic' or 'bedrock'.")


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


def _setup_error(err: Exception, provider: Provider) -> StepFailed:
    if isinstance(err, ImportError):
        return ModelRejected("Bedrock signs requests with boto3 and botocore, which are not installed: "
                             "install the bedrock extra (pip install -e '.[bedrock]').")
    if provider == "bedrock" and "credentials" in str(err).lower():
        return ModelRejected("No AWS credentials were found for Bedrock: set AWS_ACCESS_KEY_ID and "
                             "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK.")
    return ModelRejected(f"The model client could not send the request: {str(err).rstrip('.')}.")


def _stalled(model: str, stall: float, progress: _Progress) -> ModelInterrupted:
    return ModelInterrupted(
        f"The call to model {model} stalled: nothing arrived for {stall:g} s; it is retried, then the batch is "
        "split.", spent=progress.spent())


def _connection_lost(provider: Provider, detail: str, progress: _Progress) -> StepFailed:
    if progress.started:
        return ModelInterrupted(f"The connection to the model provider ({provider}) broke mid-reply: {detail}",
                                spent=progress.spent())
    return ModelUnavailable(f"Could not reach the model provider ({provider}): {detail}")


def _transport_error(err: httpx2.TransportError, *, model: str, provider: Provider, progress: _Progress,
                     stall: float) -> StepFailed:
    if isinstance(err, httpx2.TimeoutException):
        return _stalled(model, stall, progress)
    return _connection_lost(provider, str(err) or type(err).__name__, progress)


def _model_error(err: anthropic.APIError, *, model: str, provider: Provider, progress: _Progress,
                 stall: float) -> StepFailed:
    if isinstance(err, anthropic.APITimeoutError):
        return _stalled(model, stall, progress)
    if isinstance(err, anthropic.APIConnectionError):
        return _connection_lost(provider, err.message, progress)
    if not isinstance(err, anthropic.APIStatusError):
        return ModelUnavailable(f"The model provider returned an unusable response: {err.message}")
    if err.status_code == 200:
        return _stream_error(err, model, progress)
    delay = retry_after(err.response.headers)
    if _is_spend_limit(err):
        return ModelRejected(
            f"The model provider refused the call: the spend limit is reached ({err.status_code} "
            f"{_error_kind(err)}: {_error_detail(err).rstrip('.')}). Raise the limit or wait for it to reset; "
            "retrying sooner will not help.")
    if isinstance(err, anthropic.RateLimitError | anthropic.OverloadedError) or err.status_code == 503:
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


def _stream_error(err: anthropic.APIStatusError, model: str, progress: _Progress) -> StepFailed:
    """An error event inside a stream that had started (HTTP 200): the kind is in the event."""
    kind = _error_kind(err)
    detail = _error_detail(err).rstrip(".")
    if kind in _TRANSIENT_STREAM_ERRORS:
        return ModelInterrupted(f"The reply of model {model} broke off mid-stream ({kind}: {detail}); it is "
                                "retried, then the batch is split.", spent=progress.spent())
    return ModelRejected(f"The model provider ended the reply with an error ({kind}): {detail}.")


def _is_spend_limit(err: anthropic.APIStatusError) -> bool:
    # Anthropic marks a 429 it does not want retried with x-should-retry: false (a spend limit), and
    # names the limit in error.details.error_code.
    return err.status_code == 429 and (
        err.response.headers.get("x-should-retry", "").lower() == "false" or err.error_code in _SPEND_LIMIT_CODES)


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
    invalid_model = "model identifier is invalid" in _error_detail(err).lower()
    if isinstance(err, anthropic.NotFoundError) or invalid_model:
        form = "a Bedrock model id or inference profile" if provider == "bedrock" else "an Anthropic model id"
        return (f"Check WIKI_MODEL_ID ({model!r}): it must be {form}, exist, and be enabled for this account"
                + (" and region." if provider == "bedrock" else "."))
    if isinstance(err, anthropic.AuthenticationError):
        return f"Check {credentials}."
    if isinstance(err, anthropic.PermissionDeniedError):
        return f"Check that {credentials} may use model {model}."
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
