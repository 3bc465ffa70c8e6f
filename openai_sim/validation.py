"""Request checks as an OpenAI-compatible server makes them: a request the product gets wrong is
refused with a 400 naming the field, and counted as invalid (the target is none)."""

from __future__ import annotations

import re
from typing import Any

from openai_sim.profiles import ServerProfile

# The chat-completions request fields of OpenAI's API reference that a local server reads or ignores.
CHAT_FIELDS = frozenset({
    "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "n", "stream",
    "stream_options", "stop", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
    "response_format", "seed", "tools", "tool_choice", "parallel_tool_calls", "user", "metadata", "store",
})
EMBEDDING_FIELDS = frozenset({"model", "input", "encoding_format", "dimensions", "user"})
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Invalid(Exception):
    """A request the server refuses: the status, the message and the field it names."""

    def __init__(self, message: str, param: str | None = None, status: int = 400, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.message, self.param, self.status = message, param, status
        self.unsupported = unsupported  # a well-formed request for a feature this server does not have


def check_chat(body: Any, profile: ServerProfile) -> None:
    if not isinstance(body, dict):
        raise Invalid("The request body must be a JSON object")
    extra = sorted(set(body) - CHAT_FIELDS)
    if extra:
        raise Invalid(f"Unrecognized request argument supplied: {extra[0]}", extra[0])
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise Invalid("model: a model name is required", "model")
    _check_messages(body.get("messages"))
    for field in ("max_tokens", "max_completion_tokens"):
        value = body.get(field)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise Invalid(f"{field}: must be an integer of at least 1", field)
    temperature = body.get("temperature")
    if temperature is not None and (not isinstance(temperature, int | float) or not 0 <= temperature <= 2):
        raise Invalid("temperature: must be a number from 0 to 2", "temperature")
    if body.get("stream_options") is not None:
        if body.get("stream") is not True:
            raise Invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options")
        if not isinstance(body["stream_options"], dict):
            raise Invalid("stream_options: must be an object", "stream_options")
    _check_response_format(body.get("response_format"), profile)
    names = _check_tools(body.get("tools"), profile)
    _check_tool_choice(body.get("tool_choice"), names)


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise Invalid("messages: at least one message is required", "messages")
    for index, message in enumerate(messages):
        where = f"messages.{index}"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise Invalid(f"{where}.role: must be one of {', '.join(sorted(ROLES))}", f"{where}.role")
        content = message.get("content")
        if content is None and not (message["role"] == "assistant" and message.get("tool_calls")):
            raise Invalid(f"{where}.content: a message needs content", f"{where}.content")
        if content is not None and not isinstance(content, str | list):
            raise Invalid(f"{where}.content: must be a string or a list of parts", f"{where}.content")
        if isinstance(content, list) and not all(isinstance(p, dict) and p.get("type") == "text" and
                                                 isinstance(p.get("text"), str) for p in content):
            raise Invalid(f"{where}.content: this server reads text parts only", f"{where}.content")


def _check_response_format(value: Any, profile: ServerProfile) -> None:
    if value is None:
        return
    kind = value.get("type") if isinstance(value, dict) else None
    if kind not in ("text", "json_object", "json_schema"):
        raise Invalid("response_format.type: must be text, json_object or json_schema", "response_format")
    if kind != "json_schema":
        return
    if not profile.json_schema:
        raise Invalid("response_format.type 'json_schema' is not supported by this server", "response_format",
                      unsupported=True)
    spec = value.get("json_schema")
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not _NAME.match(spec["name"]):
        raise Invalid("response_format.json_schema.name: required, letters, digits, _ and - (at most 64)",
                      "response_format")
    if not isinstance(spec.get("schema"), dict):
        raise Invalid("response_format.json_schema.schema: must be a JSON Schema object", "response_format")


def _check_tools(tools: Any, profile: ServerProfile) -> set[str]:
    if tools is None:
        return set()
    if not profile.tools:
        raise Invalid("tools are not supported by this server", "tools", unsupported=True)
    if not isinstance(tools, list) or not tools:
        raise Invalid("tools: must be a non-empty list", "tools")
    names: set[str] = set()
    for index, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) and tool.get("type") == "function" else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not _NAME.match(
                function["name"]):
            raise Invalid(f"tools.{index}: a function with a name (letters, digits, _ and -)", "tools")
        if not isinstance(function.get("parameters", {}), dict):
            raise Invalid(f"tools.{index}.function.parameters: must be a JSON Schema object", "tools")
        names.add(function["name"])
    return names


def _check_tool_choice(choice: Any, names: set[str]) -> None:
    if choice is None:
        return
    if not names:
        raise Invalid("tool_choice is only allowed when tools are given", "tool_choice")
    if choice in ("none", "auto", "required"):
        return
    function = choice.get("function") if isinstance(choice, dict) and choice.get("type") == "function" else None
    if not isinstance(function, dict) or function.get("name") not in names:
        raise Invalid("tool_choice: must name one of the tools given", "tool_choice")


def check_embeddings(body: Any) -> list[str]:
    """The texts of an embeddings request, or Invalid."""
    if not isinstance(body, dict):
        raise Invalid("The request body must be a JSON object")
    extra = sorted(set(body) - EMBEDDING_FIELDS)
    if extra:
        raise Invalid(f"Unrecognized request argument supplied: {extra[0]}", extra[0])
    texts = body.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
        raise Invalid("input: a non-empty string or list of non-empty strings", "input")
    if body.get("encoding_format", "float") not in ("float", "base64"):
        raise Invalid("encoding_format: float or base64", "encoding_format")
    return texts
