"""Where a leaf plan's tokens go: its prompt and its reply, part by part, from the simulator's calls.

The simulator counts a token per 4 UTF-8 bytes, so each part's bytes / 4 is its share of the billed
tokens. Prompt parts: the tool schema, the system prompt, and in the user message the memories
(handle and date, metadata, text), the candidate pages (head, title, summary, aliases, and their
sections' slug/heading and excerpt) and the open mentions (heads, sightings). Reply parts: the JSON
keys, the structure (brackets, commas, spacing), and each value by where it sits (section lines,
slugs, citations, link ends, ...).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from claude_sim.reading import fields

_PARTS = {"## Candidate pages already in this scope": "candidates",
          "## Open unresolved mentions in this scope": "mentions",
          "## Memory records in this batch": "memories"}


def _bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())


def _user(call) -> str:
    return "".join(block.get("text", "") for message in call.body.get("messages", [])
                   for block in (message.get("content") or []) if isinstance(block, dict))


def prompt_parts(user: str) -> Counter:
    out: Counter = Counter()
    part = "other"
    for line in user.splitlines():
        size = len(line.encode()) + 1
        if line.startswith("## "):
            part = _PARTS.get(line, "other")
            out["other"] += size
            continue
        stripped = line.strip()
        if part == "memories" and line.startswith("- "):
            f = fields(line)
            text = _bytes(f.get("text", "")) + 6
            metadata = _bytes(f["metadata"]) + 10 if "metadata" in f else 0
            out["memories: text"] += text
            out["memories: metadata"] += metadata
            out["memories: handle, date"] += size - text - metadata
        elif part == "candidates" and line.startswith("- "):
            f = fields(line)
            named = {key: _bytes(f[key]) + len(key) + 2 for key in ("title", "summary", "aliases") if key in f}
            for key, value in named.items():
                out[f"candidates: {key}"] += value
            out["candidates: handle, type, slug"] += size - sum(named.values())
        elif part == "candidates" and stripped.startswith("· "):
            excerpt = _bytes(fields(stripped[2:]).get("excerpt", "")) + 9
            out["candidates: section excerpts"] += excerpt
            out["candidates: section slug, heading"] += size - excerpt
        elif part == "mentions" and stripped.startswith("· sighting"):
            out["mentions: sightings"] += size
        elif part == "mentions" and line.startswith("- "):
            out["mentions: heads"] += size
        else:
            out["other"] += size
    return out


def reply_parts(reply: Any) -> Counter:
    out: Counter = Counter()

    def walk(value: Any, path: list[str]) -> None:
        if isinstance(value, dict):
            out["structure"] += 2 + 2 * max(len(value) - 1, 0)
            for key, item in value.items():
                out["keys"] += _bytes(key) + 2
                walk(item, [*path, key])
        elif isinstance(value, list):
            out["structure"] += 2 + 2 * max(len(value) - 1, 0)
            for item in value:
                walk(item, path)
        else:
            out[f"values: {'/'.join(path[-2:]) or 'top'}"] += _bytes(value)

    walk(reply, [])
    return out


def plan_token_parts(calls) -> dict[str, dict[str, int]]:
    """Mean tokens per leaf plan of each prompt and reply part (bytes / 4, rounded)."""
    plans = [call for call in calls if call.kind == "planner" and call.usage is not None and call.reply_text]
    if not plans:
        return {}
    prompt: Counter = Counter()
    reply: Counter = Counter()
    for call in plans:
        prompt["tools (schema)"] += _bytes(call.body.get("tools"))
        system = call.body.get("system")
        prompt["system"] += len((system if isinstance(system, str) else "".join(
            block.get("text", "") for block in system or [])).encode())
        prompt.update(prompt_parts(_user(call)))
        try:
            reply.update(reply_parts(json.loads(call.reply_text)))
        except json.JSONDecodeError:
            reply["unreadable"] += len(call.reply_text.encode())
    def per_plan(counter: Counter) -> dict[str, int]:
        return {k: round(v / len(plans) / 4) for k, v in counter.most_common() if round(v / len(plans) / 4)}
    return {"plans": len(plans), "prompt": per_plan(prompt), "reply": per_plan(reply)}




# ------------------------------------------------------------------ the before/after table

PROMPT_GROUPS = ("tools (schema)", "system", "memories: text", "memories: metadata", "memories: handle, date",
                 "candidates: section excerpts", "candidates: section slug, heading", "candidates: page heads",
                 "mentions: heads", "mentions: sightings", "other")
REPLY_GROUPS = ("section text", "keys", "structure", "citations", "links", "held names",
                "other values (slugs, titles, headings, summaries, handles)")


def _prompt_group(name: str) -> str:
    if name.startswith("candidates: ") and name not in PROMPT_GROUPS:
        return "candidates: page heads"
    return name if name in PROMPT_GROUPS else "other"


def _reply_group(name: str) -> str:
    if name in ("keys", "structure"):
        return name
    tail = name.removeprefix("values: ")
    if tail.endswith(("lines", "body_md")):
        return "section text"
    if tail.startswith(("links", "pageLinks")):
        return "links"
    if tail.startswith(("held", "unresolvedMentions")):
        return "held names"
    if tail.endswith(("refs", "source_ref")):
        return "citations"
    return REPLY_GROUPS[-1]


def grouped(parts: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Prompt and reply tokens per plan by the groups of the table."""
    prompt: Counter = Counter()
    reply: Counter = Counter()
    for name, value in parts.get("prompt", {}).items():
        prompt[_prompt_group(name)] += value
    for name, value in parts.get("reply", {}).items():
        reply[_reply_group(name)] += value
    return {"prompt": dict(prompt), "reply": dict(reply)}


def breakdown_lines(parts: dict | None) -> list[str]:
    """A markdown table: each prompt and reply part's tokens per leaf plan."""
    if not parts:
        return []
    now = grouped(parts)
    lines = ["| part of a leaf plan | tokens per plan |", "|---|---|"]
    for side, groups in (("prompt", PROMPT_GROUPS), ("reply", REPLY_GROUPS)):
        lines += [f"| {side}: {group} | {now[side][group]:,} |" for group in groups if now[side].get(group)]
        lines.append(f"| **{side} total** | **{sum(now[side].values()):,}** |")
    return lines
