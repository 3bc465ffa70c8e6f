"""The fake: OpenAI's chat-completions and embeddings protocol on one loopback HTTP server.

Routes: POST /v1/chat/completions (a whole JSON reply, or server-sent events with "stream": true:
`data: <chunk>` lines, the usage chunk when stream_options.include_usage asks for it, `data: [DONE]`),
POST /v1/embeddings, GET /v1/models. Each chat call: authenticate (a Bearer key, when keys are set),
validate as the configured server would (validation.py, profiles.py), find the structured-output mode
the request uses and the question it asks, apply the next queued fault that matches the call, answer
through the Claude simulator (brain_adapter.py) and reply in the request's mode: the JSON as content
(json_schema, json), or a call of the named function (tools). Usage counts four UTF-8 bytes a token,
as the Claude simulator does. Every call is recorded in `calls`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from claude_sim import ClaudeSimulator
from claude_sim import SimConfig as ClaudeConfig
from claude_sim.wire import Request, Response, SimulatedService, pace
from openai_sim.brain_adapter import claude_answer
from openai_sim.faults import Fault
from openai_sim.profiles import PROFILES, ServerProfile
from openai_sim.validation import Invalid, check_chat, check_embeddings
from planners.structured_output import MODE_INSTRUCTIONS, SCHEMA_MARKER

CHUNK_CHARS = 64  # characters of content per streamed chunk
SILENT_CUT_TOKENS = 2_048  # what a server that cuts prompts silently keeps (Ollama's old num_ctx)
_WORD = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 4) if text else 0


@dataclass
class SimConfig:
    profile: ServerProfile = field(default_factory=lambda: PROFILES["ollama"])
    models: set[str] = field(default_factory=lambda: {"qwen2.5:14b", "llama3.1:8b", "local-model"})
    embedding_models: dict[str, int] = field(default_factory=lambda: {"nomic-embed-text": 768, "local-embed": 256})
    api_keys: set[str] = field(default_factory=set)  # empty: no key asked (a local server)
    ttft_seconds: float = 0.0
    output_tokens_per_second: float = 0.0  # 0: the whole reply at once
    hang_seconds: float = 60.0  # how long a stalled stream is held before the server drops it
    # The Claude simulator's share of plan lines made lies (its lying mode), passed through.
    lies: float = 0.0


@dataclass
class Call:
    # planner, writer, aggregation, judge, claim_judge, rederive, other, embeddings; or invalid (a malformed
    # request), unsupported (a feature the server lacks), rejected (key, unknown model)
    kind: str
    model: str
    mode: str | None  # json_schema, tools, json, or None (an unstructured call)
    streamed: bool
    at: float
    status: int = 0
    fault: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    body: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    reply_text: str = ""
    repair: bool = False  # a second try the gateway asked after an unusable reply


@dataclass
class _Reply:
    text: str  # the content, or the function's arguments
    as_tool: bool
    finish_reason: str
    refusal: str = ""


class OpenAISimulator(SimulatedService):
    fault_type = Fault
    # The address the SDK is given (WIKI_OPENAI_BASE_URL) is the server and /v1.
    base_path = "/v1"

    def __init__(self, config: SimConfig | None = None) -> None:
        super().__init__(self._handle)
        self.config = config or SimConfig()
        self.calls: list[Call] = []
        self.claude = ClaudeSimulator(ClaudeConfig(lies=self.config.lies))

    async def start(self, port: int = 0) -> str:
        await self.claude.start()
        return await super().start(port)

    async def stop(self) -> None:
        await super().stop()
        await self.claude.stop()

    def of_kind(self, kind: str) -> list[Call]:
        return [call for call in self.calls if call.kind == kind]

    def invalid_requests(self) -> list[Call]:
        """Requests refused as malformed (a 400 that is not a context overflow or an injected fault)."""
        return [call for call in self.calls if call.kind == "invalid"]

    # ------------------------------------------------------------------ routing

    async def _handle(self, request: Request) -> Response:
        denied = self._denied(request)
        if denied is not None:
            return denied
        if request.method == "POST" and request.path == "/v1/chat/completions":
            return await self._chat(request)
        if request.method == "POST" and request.path == "/v1/embeddings":
            return self._embeddings(request)
        if request.method == "GET" and request.path == "/v1/models":
            names = sorted(self.config.models | set(self.config.embedding_models))
            return _json(200, {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "library"}
                                                          for name in names]})
        return _error(404, f"No route for {request.method} {request.path}", "not_found_error")

    def _denied(self, request: Request) -> Response | None:
        if not self.config.api_keys:
            return None
        key = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if key in self.config.api_keys:
            return None
        self.calls.append(Call("rejected", "", None, False, time.monotonic(), status=401, error="invalid key"))
        return _error(401, "Incorrect API key provided", "invalid_request_error", code="invalid_api_key")

    def _take_fault(self, kind: str) -> Fault | None:
        fault = next((f for f in self.faults if f.matches(kind)), None)
        if fault is not None and not fault.lasting:
            self.faults.remove(fault)
        return fault

    # ------------------------------------------------------------------ chat completions

    async def _chat(self, request: Request) -> Response:
        body: Any = None
        try:
            body = json.loads(request.body or b"null")
            check_chat(body, self.config.profile)
        except (Invalid, ValueError) as invalid:
            message = invalid.message if isinstance(invalid, Invalid) else f"Invalid JSON body: {invalid}"
            param = invalid.param if isinstance(invalid, Invalid) else None
            model = str(body.get("model", "")) if isinstance(body, dict) else ""
            kind = "unsupported" if isinstance(invalid, Invalid) and invalid.unsupported else "invalid"
            self.calls.append(Call(kind, model, None, False, time.monotonic(), status=400, error=message))
            return _error(400, message, "invalid_request_error", param=param)
        model = body["model"]
        if model not in self.config.models:
            self.calls.append(Call("rejected", model, None, False, time.monotonic(), status=404,
                                   error="unknown model"))
            return _error(404, f'model "{model}" not found, try pulling it first', "not_found_error")
        question = read_question(body)
        streamed = body.get("stream") is True
        call = Call(question.kind, model, question.mode, streamed, time.monotonic(), body=body,
                    repair=question.repair)
        self.calls.append(call)
        call.prompt_tokens = tokens(question.prompt_text)
        fault = self._take_fault(question.kind)
        call.fault = fault.kind if fault else None
        early = self._early(fault, call, body)
        if early is not None:
            return early
        answered = await claude_answer(self.claude, question.system, question.user, question.schema,
                                       int(body.get("max_tokens") or body.get("max_completion_tokens") or 4096))
        reply = _render(answered.answer, answered.cut, question, fault.kind if fault else None,
                        tool_choice_honoured=self.config.profile.tool_choice)
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 1 << 30)
        if tokens(reply.text) > max_tokens:
            reply = _Reply(reply.text.encode()[: max_tokens * 4].decode(errors="ignore"), reply.as_tool, "length")
        call.completion_tokens = tokens(reply.text or reply.refusal)
        call.reply_text = reply.text
        call.status = 200
        if fault is not None and fault.kind == "silent_cut":
            call.prompt_tokens = min(call.prompt_tokens, SILENT_CUT_TOKENS)
        usage = {"prompt_tokens": call.prompt_tokens, "completion_tokens": call.completion_tokens,
                 "total_tokens": call.prompt_tokens + call.completion_tokens}
        if not streamed:
            await pace(self.config.ttft_seconds, self.config.output_tokens_per_second,
                       call.completion_tokens)
            return _json(200, _completion(model, reply, usage))
        include = bool((body.get("stream_options") or {}).get("include_usage")) and self.config.profile.usage_in_stream
        return Response(200, {"content-type": "text/event-stream"},
                        stream=self._events(model, reply, usage if include else None, fault))

    def _early(self, fault: Fault | None, call: Call, body: dict[str, Any]) -> Response | None:
        """The response of a fault that replaces the answer, or of a prompt over the context window."""
        kind = fault.kind if fault else None
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        window = self.config.profile.context_tokens
        if kind == "context_length" or call.prompt_tokens + max_tokens > window:
            call.status = 400
            call.error = "context_length"
            return _error(400, f"This model's maximum context length is {window} tokens. However, you requested "
                               f"{call.prompt_tokens + max_tokens} tokens ({call.prompt_tokens} in the messages, "
                               f"{max_tokens} in the completion). Please reduce the length of the messages or "
                               "completion.", "invalid_request_error", param="messages", code="context_length_exceeded")
        if kind == "hang":
            return Response(200, hang=True)
        if kind == "drop_before":
            raise ConnectionError("the server dropped the connection")
        if kind in ("rate_limit", "overloaded"):
            call.status = 429 if kind == "rate_limit" else 503
            seconds = fault.retry_after if fault and fault.retry_after is not None else 1
            response = _error(call.status, "Too many requests: the server's queue is full" if kind == "rate_limit"
                              else "server busy, please try again. maximum pending requests exceeded",
                              "rate_limit_error" if kind == "rate_limit" else "server_error")
            response.headers["retry-after"] = str(max(0, math.ceil(seconds)))
            return response
        if kind == "server_error":
            call.status = 500
            return _error(500, "llama runner process has terminated: signal: killed", "server_error")
        return None

    async def _events(self, model: str, reply: _Reply, usage: dict[str, int] | None,
                      fault: Fault | None) -> AsyncIterator[bytes]:
        kind = fault.kind if fault else None
        chunk_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        if self.config.ttft_seconds > 0:
            await asyncio.sleep(self.config.ttft_seconds)
        yield _sse(_chunk(chunk_id, model, {"role": "assistant", "content": ""}))
        if kind == "stall":
            await asyncio.sleep(self.config.hang_seconds)
            raise ConnectionError("stalled stream dropped")
        if kind == "error_event":
            yield _sse({"error": {"message": "the model runner crashed mid-generation", "type": "server_error"}})
            return
        if reply.refusal:
            yield _sse(_chunk(chunk_id, model, {"refusal": reply.refusal}))
        call_id = f"call_{uuid.uuid4().hex[:24]}"
        pieces = [reply.text[i:i + CHUNK_CHARS] for i in range(0, len(reply.text), CHUNK_CHARS)]
        rate = self.config.output_tokens_per_second
        for index, piece in enumerate(pieces):
            if kind == "drop" and index == max(1, len(pieces) // 2):
                raise ConnectionError("the server dropped the connection mid-stream")
            if rate > 0:
                await asyncio.sleep(tokens(piece) / rate)
            if reply.as_tool:
                function: dict[str, Any] = {"arguments": piece}
                start = {"id": call_id, "type": "function"} if index == 0 else {}
                if index == 0:
                    function["name"] = "submit_answer"
                delta: dict[str, Any] = {"tool_calls": [{"index": 0, **start, "function": function}]}
            else:
                delta = {"content": piece}
            yield _sse(_chunk(chunk_id, model, delta))
        if kind == "drop":
            raise ConnectionError("the server dropped the connection mid-stream")
        yield _sse(_chunk(chunk_id, model, {}, reply.finish_reason))
        if usage is not None:
            yield _sse({"id": chunk_id, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                        "choices": [], "usage": usage})
        yield b"data: [DONE]\n\n"

    # ------------------------------------------------------------------ embeddings

    def _embeddings(self, request: Request) -> Response:
        try:
            body = json.loads(request.body or b"null")
            texts = check_embeddings(body)
        except (Invalid, ValueError) as invalid:
            message = invalid.message if isinstance(invalid, Invalid) else f"Invalid JSON body: {invalid}"
            self.calls.append(Call("invalid", "", None, False, time.monotonic(), status=400, error=message))
            return _error(400, message, "invalid_request_error")
        model = body.get("model")
        dimensions = self.config.embedding_models.get(str(model))
        if dimensions is None:
            self.calls.append(Call("rejected", str(model), None, False, time.monotonic(), status=404))
            return _error(404, f'model "{model}" not found, try pulling it first', "not_found_error")
        call = Call("embeddings", str(model), None, False, time.monotonic(), body=body,
                    prompt_tokens=sum(tokens(t) for t in texts))
        self.calls.append(call)
        fault = self._take_fault("embeddings")
        call.fault = fault.kind if fault else None
        if fault is not None and fault.kind in ("rate_limit", "overloaded", "server_error"):
            call.status = {"rate_limit": 429, "overloaded": 503, "server_error": 500}[fault.kind]
            response = _error(call.status, f"injected {fault.kind}", "server_error")
            if fault.retry_after is not None:
                response.headers["retry-after"] = str(math.ceil(fault.retry_after))
            return response
        call.status = 200
        encoded = body.get("encoding_format", "float") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = embed(text, dimensions)
            value: Any = base64.b64encode(vector.astype("<f4").tobytes()).decode() if encoded else vector.tolist()
            data.append({"object": "embedding", "index": index, "embedding": value})
        return _json(200, {"object": "list", "data": data, "model": model,
                           "usage": {"prompt_tokens": call.prompt_tokens, "total_tokens": call.prompt_tokens}})


def embed(text: str, dimensions: int) -> np.ndarray:
    """A deterministic unit vector of the text's words (feature hashing): texts sharing words are near."""
    vector = np.zeros(dimensions, dtype=np.float32)
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "little") % dimensions
        vector[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = float(np.linalg.norm(vector))
    if norm == 0:
        vector[0] = 1.0
        return vector
    return vector / norm


# ---------------------------------------------------------------------- reading the request


@dataclass
class Question:
    kind: str
    mode: str | None
    system: str  # the product's system prompt, without the gateway's structured-output paragraph
    user: str  # the first user message: what is asked
    schema: dict[str, Any] | None
    prompt_text: str  # everything the model reads (for usage)
    repair: bool


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def read_question(body: dict[str, Any]) -> Question:
    messages = body["messages"]
    system = "\n\n".join(_text(m.get("content")) for m in messages if m["role"] in ("system", "developer"))
    users = [_text(m.get("content")) for m in messages if m["role"] == "user"]
    schema: dict[str, Any] | None = None
    mode: str | None = None
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        mode, schema = "json_schema", response_format["json_schema"]["schema"]
    elif body.get("tools"):
        mode, schema = "tools", body["tools"][0]["function"].get("parameters") or {"type": "object"}
    elif SCHEMA_MARKER in system:
        mode = "json"
        head, _, tail = system.partition(SCHEMA_MARKER)
        system = head.rstrip()
        schema = json.loads(tail.strip().splitlines()[0])
    if mode in MODE_INSTRUCTIONS:
        system = system.removesuffix(MODE_INSTRUCTIONS[mode]).rstrip()
    user = users[0] if users else ""
    tools_text = json.dumps(body.get("tools") or response_format or "")
    prompt_text = "".join(_text(m.get("content")) for m in messages) + (tools_text if schema is not None else "")
    return Question(kind=call_kind(schema, user), mode=mode, system=system, user=user, schema=schema,
                    prompt_text=prompt_text, repair=len(users) > 1)


def call_kind(schema: dict[str, Any] | None, user: str) -> str:
    """Which of the product's calls this is, by the reply it asks for (for the record and for faults)."""
    properties = set((schema or {}).get("properties") or {})
    for key, kind in (("held", "planner"), ("pageUpdates", "planner"), ("parentSectionUpdates", "aggregation"),
                      ("decisions", "judge"), ("supported", "claim_judge"), ("rederived", "rederive")):
        if key in properties:
            return kind
    if schema is None and "## Planner's proposed body" in user:
        return "writer"
    return "other"


# ---------------------------------------------------------------------- replies


def _render(answer: Any, cut: bool, question: Question, fault: str | None, *, tool_choice_honoured: bool) -> _Reply:
    """The answer in the request's mode, with the fault that changes it applied."""
    if fault == "refusal":
        return _Reply("", False, "stop", refusal="I can't help with that request.")
    structured = question.schema is not None
    text = json.dumps(answer, ensure_ascii=False) if structured and not isinstance(answer, str) else str(answer)
    # A model whose tool_choice is not enforced (Ollama) often answers a tool request in text.
    as_tool = question.mode == "tools" and tool_choice_honoured
    if fault == "malformed":
        text = 'Sure! Here is the JSON you asked for: {"updates": [' if structured else ""
    finish = "tool_calls" if as_tool else "stop"
    if cut:
        finish = "length"
    if fault == "truncate":
        text, finish = text[: max(1, len(text) // 2)], "length"
    return _Reply(text, as_tool, finish)


def _chunk(chunk_id: str, model: str, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"id": chunk_id, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


def _completion(model: str, reply: _Reply, usage: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None if reply.as_tool else reply.text,
                               "refusal": reply.refusal or None}
    if reply.as_tool:
        message["tool_calls"] = [{"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                                  "function": {"name": "submit_answer", "arguments": reply.text}}]
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            "usage": usage}


def _sse(value: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(value, ensure_ascii=False)}\n\n".encode()


def _json(status: int, value: dict[str, Any]) -> Response:
    return Response(status, {"content-type": "application/json"}, json.dumps(value, ensure_ascii=False).encode())


def _error(status: int, message: str, kind: str, *, param: str | None = None, code: str | None = None) -> Response:
    return _json(status, {"error": {"message": message, "type": kind, "param": param, "code": code}})
