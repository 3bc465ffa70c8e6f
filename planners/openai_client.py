"""The model gateway to an OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp's server, or
any other that speaks the chat-completions protocol): one streamed call through the `openai` SDK,
errors mapped to the named failures the Anthropic gateway raises, so the workflow treats both alike.

Every model call of the product goes through `complete`, with the prompts and the reply parsing of
the Claude path (planners/claude_planner.py, planners/rederive.py): only the provider differences
live here.

Structured output, three ways (`StructuredOutput`), chosen by WIKI_LLM_STRUCTURED_OUTPUT or, on
`auto`, by the server's default (runtime/settings.py SERVER_STRUCTURED_OUTPUT):
- `json_schema`: `response_format` of type json_schema, the reply schema as given; the servers
  constrain decoding to it (a grammar in Ollama and llama.cpp, xgrammar/guidance in vLLM, LM Studio's
  own). Not strict: the product's schemas leave shapes open that OpenAI's strict mode forbids.
- `tools`: one function whose parameters are the schema, forced with `tool_choice` (Ollama ignores
  tool_choice, so there a model may answer in text: the text is read then).
- `json`: the schema written into the system prompt, the reply read as JSON.
Whatever the mode, the reply is checked against the schema (jsonschema) and, when it is not JSON or
not that shape, the model is asked ONCE to repair it (shown its reply and what is wrong); a reply
still unusable is `PlanInvalid`, as from Claude. On `auto`, a server that refuses the mode (a 400 or
422 naming response_format or tools) is asked again one step down (json_schema, then tools, then
json; Ollama straight to json, whose tools cannot be forced) and this client keeps the lower mode;
with a mode set explicitly, that refusal fails the call naming the setting.

Streaming with `stream_options.include_usage`: the connection carries bytes while the model writes,
tokens come from the server's `usage` (cached prompt tokens reported as cache reads). A call waits
up to WIKI_LLM_FIRST_TOKEN_SECONDS for its first chunk (a local model reads the prompt before it
writes), then at most the stall timeout between chunks, and ends by the deadline the Anthropic
gateway computes. The SDK's own retries are off: Temporal retries.

A server that cut the prompt to its context window without saying so (Ollama does, to num_ctx)
reports far fewer prompt tokens than were sent: that is refused with the settings to change, since
a plan from half a prompt would be written as if it were whole.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any, Literal, cast

import httpx2
import jsonschema
import openai
from openai.types.chat import ChatCompletionChunk

from domain.errors import (
    ModelInterrupted,
    ModelRejected,
    ModelThrottled,
    ModelTruncated,
    ModelUnavailable,
    PlanInvalid,
    StepFailed,
)
from domain.guards import JsonResponseError, parse_json_response
from domain.pricing import ModelPrice, TokenUsage, estimate_tokens, flat_price
from planners.claude_client import (
    CONNECT_TIMEOUT_SECONDS,
    FIRST_TOKEN_ALLOWANCE_SECONDS,
    MAX_CALL_SECONDS,
    ModelReply,
    retry_after,
)
from planners.structured_output import REPLY_FUNCTION, StructuredOutput, system_prompt

ModelServer = Literal["ollama", "vllm", "lm-studio", "llama-cpp", "other"]
PROVIDER = "openai-compatible"
REPAIR_INSTRUCTION = ("Your reply above cannot be used: {problem}. Answer again with the whole corrected JSON "
                      "object alone, nothing else.")
# Where a refused mode steps down to (auto only). Ollama's OpenAI endpoint ignores tool_choice.
_STEP_DOWN: dict[str, dict[str, StructuredOutput]] = {
    "ollama": {"json_schema": "json", "tools": "json"},
    "other": {"json_schema": "tools", "tools": "json"},
}
# A prompt the server says it read is this many times shorter than the estimate: the server cut it.
SILENT_CUT_RATIO = 2.0
SILENT_CUT_MIN_TOKENS = 1_024
# The error text of a prompt over the model's context window, as servers word it: OpenAI and vLLM
# ("maximum context length", context_length_exceeded), llama.cpp (exceed_context_size_error, "exceeds
# the available context size"), LM Studio and others ("context length", "context window", n_ctx).
_CONTEXT_OVERFLOW = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|exceeds? (the )?(available )?context|n_ctx|"
    r"too many tokens|prompt is too long|input is too long", re.IGNORECASE)
# A refused structured-output mode: the request names response_format, json_schema or tools.
_MODE_REFUSED = re.compile(r"response_format|json_schema|tool_choice|\btools?\b|function call|grammar",
                           re.IGNORECASE)
_THINKING = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)
_RETRYABLE_STATUSES = frozenset({408, 409, 500, 502, 504})
_PROBLEMS_SHOWN = 5
log = logging.getLogger(__name__)


class _ModeRefused(Exception):
    """The server refused the structured-output mode of the request."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class _Answer:
    """What one streamed call returned: text, the function's arguments, the refusal, how it ended."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.arguments: list[str] = []
        self.refusal: list[str] = []
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.started = False
        self.stalled = 0.0  # the silence, in seconds, that cut the stream short (0: none)

    def observe(self, chunk: ChatCompletionChunk) -> None:
        self.started = True
        if chunk.usage is not None:
            self.usage = chunk.usage
        for choice in chunk.choices[:1]:
            delta = choice.delta
            if delta.content:
                self.text.append(delta.content)
            if delta.refusal:
                self.refusal.append(delta.refusal)
            for call in delta.tool_calls or []:
                if call.function is not None and call.function.arguments:
                    self.arguments.append(call.function.arguments)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    def content(self, mode: StructuredOutput | None) -> str:
        if mode == "tools" and self.arguments:
            return "".join(self.arguments)
        return _THINKING.sub("", "".join(self.text))


class OpenAICompatibleClient:
    """Async gateway to a model on an OpenAI-compatible server (`Completes`, as `ModelClient` is)."""

    provider = PROVIDER
    supports_batches = False  # no Message Batches: every call is interactive

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        server: ModelServer = "other",
        structured_output: StructuredOutput = "tools",
        adaptive: bool = True,
        price: ModelPrice | None = None,
        http_client: httpx2.AsyncClient | None = None,
        stall_timeout_seconds: float = 60.0,
        min_output_tokens_per_second: float = 40.0,
        first_token_seconds: float = FIRST_TOKEN_ALLOWANCE_SECONDS,
    ) -> None:
        """`adaptive`: the mode came from the server's default (WIKI_LLM_STRUCTURED_OUTPUT=auto), so a
        server that refuses it is asked one step down; else the refusal fails the call."""
        self.base_url = base_url.rstrip("/")
        self.server = server
        self.price: ModelPrice = price or flat_price(0.0, 0.0)
        self._configured: StructuredOutput = structured_output
        self._mode: StructuredOutput = structured_output
        self._adaptive = adaptive
        self._stall = stall_timeout_seconds
        self._min_rate = min_output_tokens_per_second
        self._first_token = first_token_seconds
        self._warned_no_usage = False
        # The read timeout only bounds the wait for the response head: chunks are timed in `_stream`.
        timeout = httpx2.Timeout(max(stall_timeout_seconds, first_token_seconds), connect=CONNECT_TIMEOUT_SECONDS)
        # A local server wants no key, but the SDK sends one: any non-empty value it ignores.
        self._sdk = openai.AsyncOpenAI(base_url=self.base_url, api_key=api_key or "not-needed", max_retries=0,
                                       timeout=timeout, http_client=http_client)

    @property
    def structured_output(self) -> StructuredOutput:
        """The mode structured replies are asked in now (lower than configured after a refusal)."""
        return self._mode

    def describe(self) -> dict[str, str]:
        """What the ledger records of this gateway: the provider and server, and the structured-output
        mode in force (with the one configured when the server refused it)."""
        mode = self._mode if self._mode == self._configured else f"{self._mode} (the server refused {self._configured})"
        return {"llm_provider": f"{PROVIDER} ({self.server})", "structured_output": mode}

    async def aclose(self) -> None:
        await self._sdk.close()

    def deadline_seconds(self, max_tokens: int) -> float:
        return min(MAX_CALL_SECONDS, self._first_token + max_tokens / self._min_rate)

    async def complete(self, *, model: str, system: str, user: str, max_tokens: int,
                       json_schema: dict[str, Any] | None = None) -> ModelReply:
        """One streamed call. With `json_schema`, the reply is that JSON object (checked, repaired
        once), in `ModelReply.text`."""
        messages = [{"role": "user", "content": user}]
        while True:
            mode = self._mode if json_schema is not None else None
            try:
                answer = await self._call(model, system, messages, max_tokens, json_schema, mode)
                break
            except _ModeRefused as refused:
                self._step_down(cast(StructuredOutput, mode), refused.detail)
        reply = self._reply(answer, model, system, messages, max_tokens, mode)
        if json_schema is None:
            return reply
        return await self._structured(reply, answer, model, system, messages, max_tokens, json_schema, mode)

    # ------------------------------------------------------------------ one call

    async def _call(self, model: str, system: str, messages: list[dict[str, Any]], max_tokens: int,
                    schema: dict[str, Any] | None, mode: StructuredOutput | None) -> _Answer:
        request = self._request(model, system, messages, max_tokens, schema, mode)
        answer = _Answer()
        deadline = self.deadline_seconds(max_tokens)
        prompt_chars = _prompt_chars(request)
        try:
            async with asyncio.timeout(deadline):
                await self._stream(request, answer)
        except TimeoutError:
            if answer.stalled:
                raise ModelInterrupted(
                    f"The call to model {model} stalled: nothing arrived for {answer.stalled:g} s; it is "
                    "retried, then the batch is split.", spent=_spent(answer, prompt_chars)) from None
            raise ModelInterrupted(
                f"The call to model {model} did not finish within its {deadline:.0f} s deadline "
                f"(max_tokens={max_tokens}); it is retried, then the batch is split.",
                spent=_spent(answer, prompt_chars)) from None
        except openai.APIStatusError as err:
            raise self._status_error(err, model, mode) from err
        except openai.APITimeoutError as err:
            raise ModelInterrupted(f"The model server at {self.base_url} sent no reply to model {model} within "
                                   f"{max(self._stall, self._first_token):g} s; it is retried, then the batch is split.",
                                   spent=_spent(answer, prompt_chars)) from err
        except (openai.APIConnectionError, httpx2.TransportError) as err:
            raise self._connection_error(err, answer, prompt_chars) from err
        except openai.APIError as err:  # an error event inside a stream that had started
            if answer.started:
                raise ModelInterrupted(f"The reply of model {model} broke off mid-stream ({err.message}); it is "
                                       "retried, then the batch is split.", spent=_spent(answer, prompt_chars)) from err
            raise ModelUnavailable(f"The model server at {self.base_url} failed the call: {err.message}") from err
        return answer

    async def _stream(self, request: dict[str, Any], answer: _Answer) -> None:
        stream = await self._sdk.chat.completions.create(**request)
        try:
            chunks = aiter(stream)
            while True:
                wait = self._stall if answer.started else self._first_token
                try:
                    async with asyncio.timeout(wait):
                        chunk = await anext(chunks)
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    answer.stalled = wait
                    raise
                answer.observe(chunk)
        finally:
            await stream.close()

    def _request(self, model: str, system: str, messages: list[dict[str, Any]], max_tokens: int,
                 schema: dict[str, Any] | None, mode: StructuredOutput | None) -> dict[str, Any]:
        # Temperature 0: a compile wants the model's most likely reading, and constrained JSON from a
        # small model holds better without sampling noise.
        request: dict[str, Any] = {
            "model": model, "max_tokens": max_tokens, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "system", "content": system_prompt(system, schema, mode)}, *messages],
        }
        if schema is None or mode is None:
            return request
        if mode == "json_schema":
            request["response_format"] = {"type": "json_schema", "json_schema": {
                "name": REPLY_FUNCTION, "schema": schema, "strict": False}}
        elif mode == "tools":
            request["tools"] = [{"type": "function", "function": {
                "name": REPLY_FUNCTION, "description": "Submit your answer: the JSON object described in "
                "the instructions.", "parameters": schema}}]
            if self.server != "ollama":
                request["tool_choice"] = {"type": "function", "function": {"name": REPLY_FUNCTION}}
        return request

    def _step_down(self, mode: StructuredOutput, detail: str) -> None:
        lower = _STEP_DOWN.get(self.server, _STEP_DOWN["other"]).get(mode)
        if not self._adaptive or lower is None:
            raise ModelRejected(
                f"The model server at {self.base_url} refused structured output as {mode} ({detail}). Set "
                "WIKI_LLM_STRUCTURED_OUTPUT to a mode it supports (json_schema, tools or json), or to auto.")
        log.warning("the model server at %s refused structured output as %s (%s): asking in %s from now on",
                    self.base_url, mode, detail, lower)
        self._mode = lower

    # ------------------------------------------------------------------ the reply

    def _reply(self, answer: _Answer, model: str, system: str, messages: list[dict[str, Any]], max_tokens: int,
               mode: StructuredOutput | None) -> ModelReply:
        """The reply, or the error of a reply cut off, refused or read from a prompt the server cut."""
        prompt_chars = len(system) + sum(len(str(m.get("content") or "")) for m in messages)
        usage = self._usage(answer, prompt_chars)
        text = answer.content(mode)
        reply = ModelReply(text=text, stop_reason=answer.finish_reason, usage=usage, model=model)
        expected = estimate_tokens(prompt_chars)
        read = usage.input_tokens + usage.cache_read_input_tokens
        if answer.usage is not None and expected >= SILENT_CUT_MIN_TOKENS and read * SILENT_CUT_RATIO < expected:
            raise ModelRejected(
                f"The model server at {self.base_url} read {read} prompt tokens of about {expected} sent: it cut "
                "the prompt to the model's context window. Raise the context length (Ollama: OLLAMA_CONTEXT_LENGTH "
                "or num_ctx; llama.cpp: -c; vLLM: --max-model-len; LM Studio: the model's context length) or lower "
                "WIKI_RECORD_PAGE_SIZE, then resume the compile.", spent=usage)
        if answer.finish_reason == "length":
            raise ModelTruncated(f"The reply of model {model} was cut off (finish_reason length) after "
                                 f"{usage.output_tokens} output tokens (max_tokens={max_tokens}).", spent=usage)
        if answer.refusal or answer.finish_reason == "content_filter":
            why = " ".join("".join(answer.refusal).split())[:200] or "finish_reason content_filter"
            raise PlanInvalid(f"Model {model} declined to answer ({why}).", spent=usage)
        return reply

    async def _structured(self, reply: ModelReply, answer: _Answer, model: str, system: str,
                          messages: list[dict[str, Any]], max_tokens: int, schema: dict[str, Any],
                          mode: StructuredOutput | None) -> ModelReply:
        """The reply as the schema's JSON; one repair call when it is not (its tokens added)."""
        value, problem = read_structured(reply.text, schema)
        if problem is None:
            return reply.model_copy(update={"text": json.dumps(value, ensure_ascii=False)})
        log.info("model %s replied with unusable JSON (%s): asking once for a repair", model, problem)
        repair = [*messages, {"role": "assistant", "content": reply.text or "(nothing)"},
                  {"role": "user", "content": REPAIR_INSTRUCTION.format(problem=problem)}]
        try:
            second = self._reply(await self._call(model, system, repair, max_tokens, schema, mode),
                                 model, system, repair, max_tokens, mode)
        except StepFailed as error:
            if isinstance(error.spent, TokenUsage):
                error.spent = reply.usage + error.spent
            raise
        spent = reply.usage + second.usage
        value, problem = read_structured(second.text, schema)
        if problem is not None:
            raise PlanInvalid(f"Model {model} replied with unusable JSON twice (after one repair: {problem}).",
                              spent=spent)
        return second.model_copy(update={"text": json.dumps(value, ensure_ascii=False), "usage": spent})

    def _usage(self, answer: _Answer, prompt_chars: int) -> TokenUsage:
        usage = answer.usage
        if usage is None:
            if not self._warned_no_usage:
                log.warning("the model server at %s reports no usage: tokens are estimated (4 characters a token)",
                            self.base_url)
                self._warned_no_usage = True
            return TokenUsage(input_tokens=estimate_tokens(prompt_chars),
                              output_tokens=estimate_tokens(len("".join(answer.text + answer.arguments))))
        details = getattr(usage, "prompt_tokens_details", None)
        cached = int(getattr(details, "cached_tokens", 0) or 0)
        prompt = int(usage.prompt_tokens or 0)
        return TokenUsage(input_tokens=max(prompt - cached, 0), output_tokens=int(usage.completion_tokens or 0),
                          cache_read_input_tokens=min(cached, prompt))

    # ------------------------------------------------------------------ errors

    def _connection_error(self, err: Exception, answer: _Answer, prompt_chars: int) -> StepFailed:
        detail = " ".join(str(getattr(err, "__cause__", None) or err).split()) or type(err).__name__
        if answer.started:
            return ModelInterrupted(f"The connection to the model server at {self.base_url} broke mid-reply: "
                                    f"{detail}", spent=_spent(answer, prompt_chars))
        return ModelUnavailable(f"The model server at {self.base_url} is not reachable ({detail}): is it running? "
                                "The compile retries until it answers.")

    def _status_error(self, err: openai.APIStatusError, model: str, mode: StructuredOutput | None) -> Exception:
        status = err.status_code
        detail = _error_detail(err)
        delay = retry_after(err.response.headers)
        if status == 429:
            when = f"after the requested {delay.total_seconds():g} s" if delay else "with backoff"
            return ModelThrottled(f"The model server is throttling (429: {detail}); retrying {when}.",
                                  retry_after=delay, benign=True)
        if status == 503:
            # Busy, queue full, or still loading the model (llama.cpp, Ollama): try again shortly.
            return ModelThrottled(f"The model server is busy (503: {detail}); retrying "
                                  + (f"after the requested {delay.total_seconds():g} s." if delay else "with backoff."),
                                  retry_after=delay, benign=True)
        if status in _RETRYABLE_STATUSES:
            return ModelUnavailable(f"The model server failed ({status}: {detail})", retry_after=delay)
        if status in (400, 413, 422) and _CONTEXT_OVERFLOW.search(detail):
            return ModelTruncated(f"The prompt does not fit model {model}'s context window ({status}: {detail}); "
                                  "the batch is split.")
        if status in (400, 422) and mode is not None and _MODE_REFUSED.search(detail + " " + _error_param(err)):
            return _ModeRefused(f"{status}: {detail}")
        return ModelRejected(self._rejection(status, detail, model))

    def _rejection(self, status: int, detail: str, model: str) -> str:
        message = f"The model server at {self.base_url} rejected the request ({status}: {detail.rstrip('.')})."
        if status in (401, 403):
            return f"{message} Check WIKI_OPENAI_API_KEY."
        if status == 404:
            return (f"{message} Check WIKI_MODEL_ID ({model!r}): the server must serve it (GET /v1/models lists "
                    "what it does; Ollama: `ollama pull` it), and WIKI_OPENAI_BASE_URL (it usually ends in /v1).")
        return f"{message} Retrying it will not help."


def read_structured(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """The JSON value in `text` and what is wrong with it against `schema` (None: nothing)."""
    try:
        value = parse_json_response(text)
    except (JsonResponseError, ValueError) as error:
        return None, str(error)[:300]
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.path))
    if not errors:
        return value, None
    shown = "; ".join(f"{'/'.join(map(str, e.path)) or 'the object'}: {e.message[:120]}"
                      for e in errors[:_PROBLEMS_SHOWN])
    return value, f"it does not match the schema ({shown})"


def _prompt_chars(request: dict[str, Any]) -> int:
    return sum(len(str(m.get("content") or "")) for m in request["messages"])


def _spent(answer: _Answer, prompt_chars: int) -> TokenUsage:
    """What a call cut short is taken to have used: its reported usage, else an estimate once it started."""
    if answer.usage is not None:
        return TokenUsage(input_tokens=int(answer.usage.prompt_tokens or 0),
                          output_tokens=int(answer.usage.completion_tokens or 0))
    if not answer.started:
        return TokenUsage()
    return TokenUsage(input_tokens=estimate_tokens(prompt_chars),
                      output_tokens=estimate_tokens(len("".join(answer.text + answer.arguments))))


def _error_detail(err: openai.APIStatusError) -> str:
    body = err.body
    message: Any = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        message = message or body.get("detail") or body.get("message")
    return " ".join(str(message or err.message or "error").split())[:300]


def _error_param(err: openai.APIStatusError) -> str:
    body = err.body
    inner = body.get("error", body) if isinstance(body, dict) else None
    return str(inner.get("param") or "") if isinstance(inner, dict) else ""
