"""The simulator: Claude's Messages API and Bedrock's InvokeModel on one loopback HTTP server.

Routes: POST /v1/messages (Anthropic API, JSON or server-sent events with "stream": true), the
Message Batches routes POST /v1/messages/batches, GET /v1/messages/batches/{id} and its /results
JSONL, POST .../{id}/cancel and DELETE .../{id} (claude_sim/batches.py: half-price usage, a
configurable processing delay, deletion only once a batch has ended), POST
/model/{modelId}/invoke and /model/{modelId}/invoke-with-response-stream (Bedrock). A product
reaches it only through the SDK's documented base-URL settings: ANTHROPIC_BASE_URL for the API,
ANTHROPIC_BEDROCK_BASE_URL for Bedrock (both this server's URL).

Each call: authenticate (auth.py), validate (validation.py), answer with the brain (brain.py), count
usage with prompt caching and enforce rate limits (accounting.py), apply the next queued fault that
matches the call (faults.py), then reply, paced by the configured time to first token and output
rate. Every call is recorded in `calls`, with the usage the reply reported (for a stream cut short,
what its message_start reported).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from claude_sim import brain
from claude_sim.accounting import Limits, PromptCache, RateLimiter, Usage
from claude_sim.auth import Caller, Denied, api_caller, bedrock_caller
from claude_sim.batch_routes import BatchRoutes
from claude_sim.batch_routes import api_error as _api_error
from claude_sim.batches import BATCH_BILLING_MULTIPLIER, Batch, errored, succeeded
from claude_sim.catalog import Model, api_model, bedrock_model, tokens
from claude_sim.faults import Fault, miscopy
from claude_sim.framing import bedrock_chunk, bedrock_exception, sse
from claude_sim.lies import ENV_LIES, Liar, Lie
from claude_sim.validation import Invalid, check_api_headers, check_body, count_breakpoints
from claude_sim.wire import Request, Response, SimulatedService, pace

CHUNK_TOKENS = 16  # output tokens per streamed delta
PING_EVERY_SECONDS = 5.0
_BEDROCK_ERROR_SUFFIX = ":http://internal.amazon.com/coral/com.amazon.bedrock/"


@dataclass
class SimConfig:
    api_keys: set[str] = field(default_factory=lambda: {"sim-anthropic-key"})
    bedrock_api_keys: set[str] = field(default_factory=lambda: {"sim-bedrock-key"})
    aws_credentials: dict[str, str] = field(default_factory=lambda: {"AKIDSIMULATOR0000001": "sim-secret"})
    region: str = "us-east-1"
    ttft_seconds: float = 0.0
    output_tokens_per_second: float = 0.0  # 0: the whole reply at once
    limits: Limits = field(default_factory=Limits)
    hang_seconds: float = 60.0  # how long a stalled stream is held before the server drops it
    # How long a Message Batch stays in_progress after creation before its results are ready.
    batch_processing_seconds: float = 0.0
    # The share of a leaf plan's lines the simulated model makes lies, in six kinds taking turns
    # (claude_sim/lies.py); env CLAUDE_SIM_LIES when not given. `lie_seed` picks which lines.
    lies: float = field(default_factory=lambda: float(os.environ.get(ENV_LIES) or 0))
    lie_seed: int = 0
    # How long a canceled Message Batch stays `canceling` (its requests in progress finishing).
    batch_cancel_seconds: float = 0.0


@dataclass
class Call:
    platform: str  # "anthropic" or "bedrock"
    kind: str  # "planner", "writer", "aggregation", "judge", "claim_judge", "rederive", "other"
    model: str
    streamed: bool
    at: float
    status: int = 0
    auth: str = ""
    identity: str = ""
    fault: str | None = None
    usage: Usage | None = None  # what the reply reported
    max_tokens: int = 0
    breakpoints: int = 0
    # A leaf plan's memories as its prompt shows them (the prompt names them by handle, not by id).
    memory_texts: list[str] = field(default_factory=list)
    error: str = ""
    body: dict[str, Any] = field(default_factory=dict)  # the request's JSON body, as received
    path: str = ""
    batch_id: str | None = None  # set for a request answered inside a Message Batch
    reply_text: str = ""  # what the output tokens were counted on (a tool input as JSON, or the text)

    @property
    def billing_multiplier(self) -> float:
        """The share of list price the provider bills for this call's usage: half for a batched request."""
        return BATCH_BILLING_MULTIPLIER if self.batch_id else 1.0


@dataclass
class _Reply:
    content: list[dict[str, Any]]
    stop_reason: str
    output_text: str  # what the output tokens are counted on


class ClaudeSimulator(SimulatedService, BatchRoutes):
    fault_type = Fault

    def __init__(self, config: SimConfig | None = None) -> None:
        super().__init__(self._handle)
        self.config = config or SimConfig()
        self.cache = PromptCache()
        self.limiter = RateLimiter(self.config.limits)
        # Scripted answers for tests, per call kind, used before the brain: each takes the prompt's user
        # text and returns the tool input (or the text) of the reply.
        self.scripts: dict[str, deque[Callable[[str], Any]]] = {}
        self.calls: list[Call] = []
        self.liar = Liar(self.config.lies, self.config.lie_seed)  # its `told`: every lie, with its kind
        self.batches: dict[str, Batch] = {}  # the batches the provider holds (a deleted one is gone)
        self.deleted_batches: list[str] = []  # ids of the batches deleted through the API, in order

    def answer_next(self, kind: str, answer: Callable[[str], Any]) -> None:
        self.scripts.setdefault(kind, deque()).append(answer)

    @property
    def lies(self) -> list[Lie]:
        """Every line the lying mode wrote, with its kind, in the order told."""
        self.liar.share = self.config.lies  # a test may change the config after start
        return self.liar.told

    def of_kind(self, kind: str) -> list[Call]:
        return [call for call in self.calls if call.kind == kind]

    def reported_usage(self) -> list[tuple[str, Usage]]:
        """(model, usage) of every call whose reply reported usage: what the provider would bill."""
        return [(call.model, call.usage) for call in self.calls if call.usage is not None]

    def billed_usage(self) -> list[tuple[str, Usage, float]]:
        """(model, usage, share of list price billed) of every call that reported usage."""
        return [(call.model, call.usage, call.billing_multiplier) for call in self.calls if call.usage is not None]

    # ------------------------------------------------------------------ routing

    async def _handle(self, request: Request) -> Response:
        path = request.path
        if request.method == "POST" and path == "/v1/messages":
            return await self._api(request)
        if path.startswith("/v1/messages/batches"):
            return await self._batches(request)
        if request.method == "POST" and path.startswith("/model/"):
            model_id, _, action = path.removeprefix("/model/").rpartition("/")
            if action in ("invoke", "invoke-with-response-stream"):
                return await self._bedrock(request, unquote(model_id), action == "invoke-with-response-stream")
        return _api_error(404, "not_found_error", f"No route for {request.method} {path}")

    async def _api(self, request: Request) -> Response:
        try:
            caller = api_caller(request.headers, self.config.api_keys)
            check_api_headers(request.headers)
            body = json.loads(request.body or b"null")
            model_id = body.get("model") if isinstance(body, dict) else None
            model = api_model(str(model_id))
            if model is None:
                return self._record_error(request, "anthropic", str(model_id), caller,
                                          _api_error(404, "not_found_error", f"model: {model_id}"))
            check_body(body, model, bedrock=False)
        except Denied as denied:
            return self._record_error(request, "anthropic", "", None, _api_error(denied.status, denied.kind,
                                                                                    denied.message))
        except (Invalid, ValueError) as invalid:
            return self._record_error(request, "anthropic", "", None,
                                      _api_error(400, "invalid_request_error", str(invalid)))
        return await self._serve("anthropic", model, str(model_id), caller, body, bool(body.get("stream")),
                                 request.path)

    async def _bedrock(self, request: Request, model_id: str, streamed: bool) -> Response:
        try:
            caller = bedrock_caller(request.method, request.path, request.headers, request.body,
                                    bearer_keys=self.config.bedrock_api_keys,
                                    credentials=self.config.aws_credentials, region=self.config.region)
            model = bedrock_model(model_id)
            if model is None:
                return self._record_error(request, "bedrock", model_id, caller, _bedrock_error(
                    400, "ValidationException", "The provided model identifier is invalid."))
            body = json.loads(request.body or b"null")
            check_body(body, model, bedrock=True)
        except Denied as denied:
            return self._record_error(request, "bedrock", model_id, None,
                                      _bedrock_error(denied.status, denied.kind, denied.message))
        except (Invalid, ValueError) as invalid:
            return self._record_error(request, "bedrock", model_id, None,
                                      _bedrock_error(400, "ValidationException", str(invalid)))
        return await self._serve("bedrock", model, model_id, caller, body, streamed, request.path)

    # ------------------------------------------------------------------ Message Batches (batch_routes.py)

    def _process(self, batch: Batch) -> None:
        """Answer every request of the batch as an interactive call would be answered, and end it."""
        for item in batch.requests:
            body, custom_id = item["params"], item["custom_id"]
            model = api_model(str(body["model"]))
            assert model is not None  # checked at creation
            kind, user = brain.kind_of(body.get("system"), body.get("messages"), body.get("tools")), \
                _user(body)
            call = Call("anthropic", kind, str(body["model"]), False, time.monotonic(), auth="batch",
                        identity=batch.identity, max_tokens=body["max_tokens"],
                        breakpoints=count_breakpoints(body), body=body, path="/v1/messages/batches",
                        batch_id=batch.id)
            if kind == "planner":
                call.memory_texts = brain.leaf_memories(body.get("system"), body.get("messages"), body.get("tools"))
            self.calls.append(call)
            fault = next((f for f in self.faults if f.matches(kind) and f.kind in ("server_error", "overloaded")),
                         None)
            if fault is not None:
                self.faults.remove(fault)
                call.fault, call.status = fault.kind, 500
                batch.results.append(errored(custom_id, "api_error", "Internal server error"))
                continue
            usage = self.cache.account(f"{batch.identity}|{model.family}", body, model.min_cacheable_tokens)
            script = self.scripts.get(kind)
            reply = self._answer(kind, user, body, None, script.popleft() if script else None)
            usage.output_tokens = tokens(reply.output_text)
            call.reply_text = reply.output_text
            if usage.output_tokens > body["max_tokens"]:
                reply = _cut(reply, body["max_tokens"])
                usage.output_tokens = body["max_tokens"]
            call.status, call.usage = 200, usage
            batch.results.append(succeeded(custom_id, _message(str(body["model"]), reply.content,
                                                               reply.stop_reason, usage)))
        batch.ended_at = datetime.now(UTC)

    def _record_error(self, request: Request, platform: str, model: str, caller: Caller | None,
                      response: Response) -> Response:
        self.calls.append(Call(platform, "rejected", model, False, time.monotonic(), status=response.status,
                               auth=caller.method if caller else "", identity=caller.identity if caller else "",
                               error=response.body.decode(errors="replace"), path=request.path))
        return response

    # ------------------------------------------------------------------ one accepted call

    async def _serve(self, platform: str, model: Model, model_id: str, caller: Caller, body: dict[str, Any],
                     streamed: bool, path: str) -> Response:
        kind, user = brain.kind_of(body.get("system"), body.get("messages"), body.get("tools")), _user(body)
        call = Call(platform, kind, model_id, streamed, time.monotonic(), auth=caller.method, identity=caller.identity,
                    max_tokens=body["max_tokens"], breakpoints=count_breakpoints(body), body=body, path=path)
        if kind == "planner":
            call.memory_texts = brain.leaf_memories(body.get("system"), body.get("messages"), body.get("tools"))
        self.calls.append(call)
        fault = next((f for f in self.faults if f.matches(kind)), None)
        if fault is not None:
            if not fault.lasting:
                self.faults.remove(fault)
            call.fault = fault.kind
        bedrock = platform == "bedrock"
        early = self._early_fault(fault, bedrock)
        if early is not None:
            call.status = early.status if not early.hang else 0
            return early
        usage = self.cache.account(f"{caller.identity}|{model.family}", body, model.min_cacheable_tokens)
        prompt_tokens = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
        wait = self.limiter.admit(prompt_tokens)
        if wait is not None:
            call.status = 429
            return self._throttled(bedrock, math.ceil(wait))
        script = self.scripts.get(kind)
        reply = self._answer(kind, user, body, fault.kind if fault else None, script.popleft() if script else None)
        usage.output_tokens = tokens(reply.output_text)
        call.reply_text = reply.output_text
        if usage.output_tokens > body["max_tokens"]:
            reply = _cut(reply, body["max_tokens"])
            usage.output_tokens = body["max_tokens"]
        self.limiter.charge_output(usage.output_tokens)
        call.status = 200
        if not streamed:
            call.usage = usage
            await pace(self.config.ttft_seconds, self.config.output_tokens_per_second, usage.output_tokens)
            return self._whole(bedrock, model_id, reply, usage)
        broken = fault.kind if fault and fault.kind in ("stall", "stream_error") else None
        call.usage = Usage(**{**usage.as_dict(), "output_tokens": 1}) if broken else usage
        return Response(200, self._stream_headers(bedrock),
                        stream=self._events(bedrock, model_id, reply, usage, broken))

    def _answer(self, kind: str, user: str, body: dict[str, Any], fault: str | None,
                script: Callable[[str], Any] | None) -> _Reply:
        """The reply to one accepted call: a test's scripted answer, else the brain's, then the fault."""
        forced = (body.get("tool_choice") or {}).get("name")
        if fault == "refusal":
            return _Reply([], "refusal", "")
        if script is not None:
            answer: Any = script(user)
        else:
            self.liar.share = self.config.lies
            answer = brain.answer(body.get("system"), body.get("messages"), body.get("tools"),
                                  body.get("tool_choice"), liar=self.liar).answer
        if fault == "malformed":
            answer = {"updates": "not a list", "new_pages": None} if forced else ""
        if fault == "miscopied_ids" and isinstance(answer, dict):
            answer = _miscopied(answer)
        reply = _reply(answer, forced)
        if fault == "truncate":
            reply = _cut(reply, max(1, tokens(reply.output_text) // 2))
        return reply

    def _early_fault(self, fault: Fault | None, bedrock: bool) -> Response | None:
        if fault is None:
            return None
        if fault.kind == "hang":
            return Response(200, hang=True)
        if fault.kind == "rate_limit":
            return self._throttled(bedrock, math.ceil(fault.retry_after if fault.retry_after is not None else 1))
        if fault.kind == "overloaded":
            if bedrock:
                return _bedrock_error(503, "ServiceUnavailableException", "Bedrock is unable to process your request.")
            response = _api_error(529, "overloaded_error", "Overloaded")
            if fault.retry_after is not None:
                response.headers["retry-after"] = str(math.ceil(fault.retry_after))
            return response
        if fault.kind == "spend_limit":
            if bedrock:
                return _bedrock_error(400, "ServiceQuotaExceededException", "Your account's quota is exhausted.")
            response = _api_error(429, "rate_limit_error", "You have reached your specified API usage limits.",
                                  details={"error_code": "enforced_spend_limit_reached"})
            response.headers["x-should-retry"] = "false"
            return response
        if fault.kind == "server_error":
            return (_bedrock_error(500, "InternalServerException", "An internal server error occurred.")
                    if bedrock else _api_error(500, "api_error", "Internal server error"))
        if fault.kind == "model_error":
            return (_bedrock_error(424, "ModelErrorException", "The model failed to process the request.")
                    if bedrock else _api_error(500, "api_error", "Internal server error"))
        return None

    def _throttled(self, bedrock: bool, seconds: int) -> Response:
        if bedrock:
            return _bedrock_error(429, "ThrottlingException", "Too many requests, please wait before trying again.")
        response = _api_error(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate "
                                                       "limit")
        response.headers.update(self.limiter.headers())
        response.headers["retry-after"] = str(max(1, seconds))
        return response

    def _stream_headers(self, bedrock: bool) -> dict[str, str]:
        if bedrock:
            return {"content-type": "application/vnd.amazon.eventstream",
                    "x-amzn-bedrock-content-type": "application/json", "x-amzn-requestid": str(uuid.uuid4())}
        return {"content-type": "text/event-stream", "request-id": f"req_{uuid.uuid4().hex[:24]}",
                **self.limiter.headers()}

    def _whole(self, bedrock: bool, model_id: str, reply: _Reply, usage: Usage) -> Response:
        message = _message(model_id, reply.content, reply.stop_reason, usage)
        if bedrock:
            headers = {"content-type": "application/json", "x-amzn-requestid": str(uuid.uuid4()),
                       "x-amzn-bedrock-input-token-count": str(usage.input_tokens),
                       "x-amzn-bedrock-output-token-count": str(usage.output_tokens)}
        else:
            headers = {"content-type": "application/json", "request-id": f"req_{uuid.uuid4().hex[:24]}",
                       **self.limiter.headers()}
        return Response(200, headers, json.dumps(message, ensure_ascii=False).encode())

    async def _events(self, bedrock: bool, model_id: str, reply: _Reply, usage: Usage,
                      broken: str | None) -> AsyncIterator[bytes]:
        frame = bedrock_chunk if bedrock else sse
        started = time.monotonic()
        waited = 0.0
        while waited + PING_EVERY_SECONDS < self.config.ttft_seconds:
            await asyncio.sleep(PING_EVERY_SECONDS)
            waited += PING_EVERY_SECONDS
            if not bedrock:
                yield sse({"type": "ping"})
        if self.config.ttft_seconds > waited:
            await asyncio.sleep(self.config.ttft_seconds - waited)
        start_usage = {**usage.as_dict(), "output_tokens": 1}
        yield frame({"type": "message_start", "message": _message(model_id, [], None, start_usage)})
        if broken == "stall":
            await asyncio.sleep(self.config.hang_seconds)
            raise ConnectionError("stalled stream dropped")
        if broken == "stream_error":
            if bedrock:
                yield bedrock_exception("modelStreamErrorException", "The model stream was interrupted.")
            else:
                yield sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            return
        for index, block in enumerate(reply.content):
            async for chunk in self._block_events(index, block):
                yield frame(chunk)
        yield frame({"type": "message_delta", "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                     "usage": {"output_tokens": usage.output_tokens}})
        stop: dict[str, Any] = {"type": "message_stop"}
        if bedrock:
            stop["amazon-bedrock-invocationMetrics"] = {
                "inputTokenCount": usage.input_tokens, "outputTokenCount": usage.output_tokens,
                "invocationLatency": int((time.monotonic() - started) * 1000),
                "firstByteLatency": int(self.config.ttft_seconds * 1000),
                "cacheReadInputTokenCount": usage.cache_read_input_tokens,
                "cacheWriteInputTokenCount": usage.cache_creation_input_tokens}
        yield frame(stop)

    async def _block_events(self, index: int, block: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        if block["type"] == "tool_use":
            text = json.dumps(block["input"], ensure_ascii=False)
            yield {"type": "content_block_start", "index": index,
                   "content_block": {**block, "input": {}}}
            delta_type, key = "input_json_delta", "partial_json"
        else:
            text = block["text"]
            yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            delta_type, key = "text_delta", "text"
        step = CHUNK_TOKENS * 4
        rate = self.config.output_tokens_per_second
        for offset in range(0, len(text), step):
            piece = text[offset:offset + step]
            if rate > 0:
                await asyncio.sleep(tokens(piece) / rate)
            yield {"type": "content_block_delta", "index": index, "delta": {"type": delta_type, key: piece}}
        yield {"type": "content_block_stop", "index": index}


# ---------------------------------------------------------------------- replies


def _user(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    content = messages[-1].get("content") if messages else ""
    return content if isinstance(content, str) else "\n".join(
        block.get("text", "") for block in content if block.get("type") == "text")


def _reply(answer: Any, forced: str | None) -> _Reply:
    if forced and isinstance(answer, dict):
        block = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": forced, "input": answer}
        return _Reply([block], "tool_use", json.dumps(answer, ensure_ascii=False))
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return _Reply([{"type": "text", "text": text}] if text else [], "end_turn", text)


def _cut(reply: _Reply, max_tokens: int) -> _Reply:
    """The reply as a model stopped at max_tokens writes it: the text cut, a tool input left partial."""
    kept = reply.output_text.encode()[: max_tokens * 4].decode(errors="ignore")
    if reply.content and reply.content[0]["type"] == "tool_use":
        # A cut tool input is partial JSON; the API reports what parsed so far, here the empty object.
        return _Reply([{**reply.content[0], "input": {}}], "max_tokens", kept)
    return _Reply([{"type": "text", "text": kept}] if kept else [], "max_tokens", kept)


_ID_KEYS = frozenset({"pageId", "mentionId", "source_ref", "page", "mention", "ref"})
_ID_LISTS = frozenset({"source_refs", "refs"})


def _miscopied_section(section: list[Any]) -> list[Any]:
    """A section written as an array, [slug, lines, refs?], with its quoted lines and refs miscopied."""
    lines = [miscopy(line) if isinstance(line, str) and line.startswith("@") else line for line in section[1]] \
        if len(section) > 1 and isinstance(section[1], list) else []
    refs = [[miscopy(ref) for ref in section[2] if isinstance(ref, str)]] \
        if len(section) > 2 and isinstance(section[2], list) else []
    return [section[0], lines, *refs]


def _miscopied(value: Any) -> Any:
    """The answer with every id or handle miscopied: references, quoted lines ("@m3") and link ends."""
    if isinstance(value, list) and len(value) >= 2 and isinstance(value[0], str) and isinstance(value[1], list) \
            and all(isinstance(line, str) for line in value[1]):
        return _miscopied_section(value)
    if isinstance(value, dict):
        return {key: (miscopy(item) if key in _ID_KEYS and isinstance(item, str) else
                      [miscopy(ref) for ref in item] if key in _ID_LISTS and isinstance(item, list) else
                      [miscopy(line) if line.startswith("@") else line for line in item]
                      if key == "lines" and isinstance(item, list) else
                      [[[miscopy(one) for one in end] if isinstance(end, list) else miscopy(end) for end in link[:2]]
                       + link[2:] for link in item]
                      if key == "links" and isinstance(item, list) else
                      _miscopied(item)) for key, item in value.items()}
    if isinstance(value, list):
        return [_miscopied(item) for item in value]
    return value


def _message(model_id: str, content: list[dict[str, Any]], stop_reason: str | None,
             usage: Usage | dict[str, int]) -> dict[str, Any]:
    return {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model_id,
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": usage.as_dict() if isinstance(usage, Usage) else usage}


def _bedrock_error(status: int, kind: str, message: str) -> Response:
    headers = {"content-type": "application/json", "x-amzn-errortype": kind + _BEDROCK_ERROR_SUFFIX,
               "x-amzn-requestid": str(uuid.uuid4())}
    return Response(status, headers, json.dumps({"message": message}).encode())
