"""Where the fake's answers come from: the Claude simulator, through ONE function.

`claude_answer` puts the question as the fake received it (the product's system prompt without the
structured-output paragraph the gateway adds, the first user message, the reply schema) to the Claude
simulator as a Messages API request, over loopback HTTP, and returns its answer: the forced tool's
input (a dict) or its text. So a compile through this fake gets the answers a compile through the
Claude simulator gets, whatever the simulator's brain does inside, and its lying mode, if set,
applies here too. This function is the fake's only dependency on the Claude simulator's answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from claude_sim import ClaudeSimulator

# The model the question is put to: any the Claude simulator serves (the answer does not depend on it).
CLAUDE_MODEL = "claude-haiku-4-5"
CLAUDE_MAX_OUTPUT = 64_000
ANSWER_TOOL = "submit_answer"


@dataclass
class ClaudeAnswer:
    answer: Any  # the tool input (dict), or the text
    cut: bool  # the simulator stopped at max_tokens: the answer is partial


async def claude_answer(claude: ClaudeSimulator, system: str, user: str, schema: dict[str, Any] | None,
                        max_tokens: int) -> ClaudeAnswer:
    body: dict[str, Any] = {"model": CLAUDE_MODEL, "max_tokens": min(max_tokens, CLAUDE_MAX_OUTPUT),
                            "system": system or "-", "messages": [{"role": "user", "content": user or "-"}]}
    if schema is not None:
        body["tools"] = [{"name": ANSWER_TOOL, "description": "Submit your answer.",
                          "input_schema": {**schema, "type": "object"}}]
        body["tool_choice"] = {"type": "tool", "name": ANSWER_TOOL}
    async with httpx.AsyncClient(timeout=300) as http:
        response = await http.post(f"{claude.base_url}/v1/messages", json=body, headers={
            "x-api-key": next(iter(claude.config.api_keys)), "anthropic-version": "2023-06-01"})
    response.raise_for_status()
    message = response.json()
    blocks = message.get("content") or []
    tool = next((block for block in blocks if block.get("type") == "tool_use"), None)
    answer: Any = tool["input"] if tool is not None else "".join(
        block.get("text", "") for block in blocks if block.get("type") == "text")
    return ClaudeAnswer(answer=answer, cut=message.get("stop_reason") == "max_tokens")
