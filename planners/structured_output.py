"""How a structured reply is asked of a model on an OpenAI-compatible server, in each mode: the
contract the gateway (planners/openai_client.py) writes and a server (or the test fake) reads.

- `json_schema`: response_format of type json_schema carries the reply schema;
- `tools`: one function named REPLY_FUNCTION whose parameters are the schema;
- `json`: the schema is written at the end of the system prompt, after SCHEMA_MARKER, on one line.
The system prompt ends with the mode's instruction (MODE_INSTRUCTIONS, or the marker and schema).
"""

from __future__ import annotations

import json
from typing import Any, Literal

StructuredOutput = Literal["json_schema", "tools", "json"]
REPLY_FUNCTION = "submit_answer"
SCHEMA_MARKER = "Answer with one JSON object alone (no prose, no code fence) that matches this JSON Schema:"
MODE_INSTRUCTIONS: dict[str, str] = {
    "json_schema": "Answer with the JSON object alone: no prose, no code fence.",
    "tools": f"Answer by calling the function {REPLY_FUNCTION} once, its arguments being the JSON object "
             "described above.",
}


def system_prompt(system: str, schema: dict[str, Any] | None, mode: StructuredOutput | None) -> str:
    """The product's system prompt with the mode's last paragraph (none for an unstructured call)."""
    if schema is None or mode is None:
        return system
    if mode == "json":
        return f"{system}\n\n{SCHEMA_MARKER}\n{json.dumps(schema, separators=(',', ':'))}"
    return f"{system}\n\n{MODE_INSTRUCTIONS[mode]}"
