"""Request checks, as the Messages API and Bedrock document them; each failure is one message."""

from __future__ import annotations

import re
from typing import Any

from claude_sim.catalog import API_VERSIONS, BEDROCK_NEW_VERSION, BEDROCK_VERSION, Model

MAX_CACHE_BREAKPOINTS = 4
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_API_FIELDS = frozenset({
    "model", "max_tokens", "messages", "system", "tools", "tool_choice", "stream", "metadata", "stop_sequences",
    "temperature", "top_p", "top_k", "thinking", "service_tier", "output_config", "cache_control", "container",
    "inference_geo", "speed", "diagnostics",
})
_BEDROCK_FIELDS = (_API_FIELDS - {"model", "stream", "service_tier", "container", "inference_geo"}) | {
    "anthropic_version", "anthropic_beta"}


class Invalid(Exception):
    """The request breaks a documented rule; the message says which."""


def check_api_headers(headers: dict[str, str]) -> None:
    version = headers.get("anthropic-version")
    if not version:
        raise Invalid("anthropic-version: header is required")
    if version not in API_VERSIONS:
        raise Invalid(f"anthropic-version: {version!r} is not a valid version")


def check_body(body: Any, model: Model, *, bedrock: bool) -> None:
    if not isinstance(body, dict):
        raise Invalid("The request body must be a JSON object")
    allowed = _BEDROCK_FIELDS if bedrock else _API_FIELDS
    extra = sorted(set(body) - allowed)
    if extra:
        raise Invalid(f"extraneous key [{extra[0]}] is not permitted" if bedrock
                      else f"{extra[0]}: Extra inputs are not permitted")
    if bedrock:
        version = body.get("anthropic_version")
        accepted = {BEDROCK_VERSION} | ({BEDROCK_NEW_VERSION} if model.accepts_new_bedrock_version else set())
        if version not in accepted:
            raise Invalid(f"invalid anthropic_version {version!r}: this model accepts {BEDROCK_VERSION!r}")
    _check_max_tokens(body.get("max_tokens"), model)
    _check_messages(body.get("messages"))
    _check_system(body.get("system"))
    names = _check_tools(body.get("tools"))
    _check_tool_choice(body.get("tool_choice"), names)
    breakpoints = count_breakpoints(body)
    if breakpoints > MAX_CACHE_BREAKPOINTS:
        raise Invalid(f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
                      f"Found {breakpoints}.")


def count_breakpoints(body: dict[str, Any]) -> int:
    count = sum(1 for tool in body.get("tools") or [] if isinstance(tool, dict) and "cache_control" in tool)
    system = body.get("system")
    count += sum(1 for block in system if isinstance(block, dict) and "cache_control" in block) \
        if isinstance(system, list) else 0
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(1 for block in content if isinstance(block, dict) and "cache_control" in block)
    return count


def _check_max_tokens(value: Any, model: Model) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise Invalid("max_tokens: must be an integer of at least 1")
    if value > model.max_output:
        raise Invalid(f"max_tokens: {value} > {model.max_output}, which is the maximum allowed number of output "
                      f"tokens for {model.family}")


def _check_cache_control(block: dict[str, Any], where: str) -> None:
    control = block.get("cache_control")
    if control is None:
        return
    if not isinstance(control, dict) or control.get("type") != "ephemeral" or control.get("ttl", "5m") not in (
            "5m", "1h"):
        raise Invalid(f"{where}.cache_control: expected {{'type': 'ephemeral'}}")


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise Invalid("messages: at least one message is required")
    for index, message in enumerate(messages):
        where = f"messages.{index}"
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise Invalid(f"{where}.role: must be 'user' or 'assistant'")
        if index == 0 and message["role"] != "user":
            raise Invalid("messages: the first message must use the user role")
        content = message.get("content")
        if isinstance(content, str):
            if not content:
                raise Invalid(f"{where}.content: must not be empty")
            continue
        if not isinstance(content, list) or not content:
            raise Invalid(f"{where}.content: must be a string or a non-empty list of blocks")
        for position, block in enumerate(content):
            if not isinstance(block, dict) or "type" not in block:
                raise Invalid(f"{where}.content.{position}: must be a content block")
            if block["type"] == "text" and not (isinstance(block.get("text"), str) and block["text"]):
                raise Invalid(f"{where}.content.{position}.text: text content blocks must be non-empty")
            _check_cache_control(block, f"{where}.content.{position}")


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise Invalid("system: must be a string or a list of text blocks")
    for position, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            raise Invalid(f"system.{position}: must be a text block")
        if not block["text"]:
            raise Invalid(f"system.{position}.text: text content blocks must be non-empty")
        _check_cache_control(block, f"system.{position}")


def _check_tools(tools: Any) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise Invalid("tools: must be a list")
    names: list[str] = []
    for position, tool in enumerate(tools):
        if not isinstance(tool, dict) or not _TOOL_NAME.match(str(tool.get("name", ""))):
            raise Invalid(f"tools.{position}.name: must match ^[a-zA-Z0-9_-]{{1,128}}$")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise Invalid(f"tools.{position}.input_schema: must be a JSON schema of type 'object'")
        if tool["name"] in names:
            raise Invalid(f"tools: tool names must be unique ({tool['name']!r} repeats)")
        _check_cache_control(tool, f"tools.{position}")
        names.append(tool["name"])
    return names


def _check_tool_choice(choice: Any, names: list[str]) -> None:
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        raise Invalid("tool_choice.type: must be one of 'auto', 'any', 'tool', 'none'")
    if choice["type"] in ("any", "tool") and not names:
        raise Invalid("tool_choice: requires tools to be provided")
    if choice["type"] == "tool" and choice.get("name") not in names:
        raise Invalid(f"tool_choice.name: no tool named {choice.get('name')!r}")
    if "disable_parallel_tool_use" in choice and not isinstance(choice["disable_parallel_tool_use"], bool):
        raise Invalid("tool_choice.disable_parallel_tool_use: must be a boolean")
