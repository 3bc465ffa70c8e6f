"""Reading a request as a model reads it: the prompt's text structure, nothing of the product's code.

The simulator never imports the compiler: what it knows of a call is what the request carries over
the wire (the system prompt, the user message, the tool schema). These helpers read the shapes the
prompts publish: `## Heading` parts, `- item` lines with indented sub-lines, and `key=value` pairs
whose values are JSON when they start like JSON. A request that does not have the shape its own
system prompt announces raises `Confused`: the brain then answers as a model that could not follow
the request would (a reply the compiler cannot use), so a prompt change that breaks its own
contract fails a test instead of being papered over.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

_DECODER = json.JSONDecoder()
_HEADING = re.compile(r"^## .+$", re.MULTILINE)


class Confused(Exception):
    """The request breaks the contract its own prompt states; the message says where."""


def fields(line: str) -> dict[str, Any]:
    """`key=value` pairs of one prompt line; a value is JSON when it starts like JSON, else a bare word."""
    out: dict[str, Any] = {}
    index = 0
    while index < len(line):
        while index < len(line) and line[index] == " ":
            index += 1
        equals = line.find("=", index)
        if equals < 0:
            break
        key = line[index:equals].split(" ")[-1]
        start = equals + 1
        if start < len(line) and line[start] in '"[{':
            try:
                value, index = _DECODER.raw_decode(line, start)
            except json.JSONDecodeError as error:
                raise Confused(f"an unreadable value of {key!r}: {error.msg}") from None
        else:
            end = line.find(" ", start)
            end = len(line) if end < 0 else end
            value, index = line[start:end], end
        out[key] = value
    return out


def parts(text: str) -> dict[str, str]:
    """The text's `## Heading` parts, by heading (without the "## "), each the text under it."""
    starts = [(m.start(), m.group(0)) for m in _HEADING.finditer(text)]
    out: dict[str, str] = {}
    for i, (start, heading) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        out[heading[3:].strip()] = text[start + len(heading):end]
    return out


def items(body: str) -> Iterator[tuple[str, list[str]]]:
    """Each `- ...` line of a part with the indented lines under it (stripped)."""
    head: str | None = None
    rest: list[str] = []
    for line in body.splitlines():
        if line.startswith("- "):
            if head is not None:
                yield head, rest
            head, rest = line[2:], []
        elif line.startswith("  ") and head is not None:
            rest.append(line.strip())
    if head is not None:
        yield head, rest


def between(text: str, start: str, end: str) -> str | None:
    """The text after `start` up to `end` (or the end of the text); None when `start` is absent."""
    head = text.find(start)
    if head < 0:
        return None
    head += len(start)
    tail = text.find(end, head)
    return text[head:tail if tail >= 0 else len(text)]


def user_text(messages: Any) -> str:
    """The last user message's text, whether a string or a list of text blocks."""
    if not isinstance(messages, list) or not messages:
        return ""
    content = messages[-1].get("content") if isinstance(messages[-1], dict) else ""
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or [] if isinstance(block, dict)
                     and block.get("type") == "text")


def system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(block.get("text", "") for block in system if isinstance(block, dict))
    return ""


def fold(text: str) -> str:
    """A name as a reader compares names: case, accents and punctuation aside."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join("".join(ch if ch.isalnum() or ch in "'" else " " for ch in plain).split())


def kebab(title: str) -> str:
    """A title in lowercase kebab-case, as the prompts ask slugs to be written."""
    return "-".join(fold(title).replace("'", "").split())
