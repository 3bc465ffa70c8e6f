"""What each kind of server accepts, as its documentation says (docs/local-models.md cites them).

- Ollama (0.5 and later): response_format json_schema (constrained by a grammar), tools; tool_choice
  is ignored, so a model may answer a tool request in text.
- vLLM: json_schema (xgrammar or guidance), tools with a named tool_choice (constrained too).
- LM Studio: json_schema, tools.
- llama.cpp's server: json_schema (a grammar from the schema), tools (with --jinja).
- "no-json-schema": a server that refuses response_format json_schema (older servers, some
  proxies) but calls tools; "plain": one that does neither (only the json answer in text works).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerProfile:
    name: str
    json_schema: bool = True
    tools: bool = True
    tool_choice: bool = True  # a named tool_choice is honoured (else the model may answer in text)
    context_tokens: int = 131_072  # the model's context window: prompt + max_tokens must fit
    usage_in_stream: bool = True  # stream_options.include_usage is honoured


PROFILES: dict[str, ServerProfile] = {profile.name: profile for profile in (
    ServerProfile("ollama", tool_choice=False),
    ServerProfile("vllm"),
    ServerProfile("lm-studio"),
    ServerProfile("llama-cpp"),
    ServerProfile("no-json-schema", json_schema=False),
    ServerProfile("plain", json_schema=False, tools=False),
)}
