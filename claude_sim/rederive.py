"""The simulator's answer to a re-derivation call (planners/rederive.py): the prompt read back into
its task, each marked line answered by the offline rule (kept when its memories hold all of its
words, else their own dated lines)."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from domain.evidence import evidence_of
from domain.forget import RederiveLine, RederiveMemory, RederiveTask, offline_replacement
from planners.memory_text import first_sentence

_LINE = re.compile(r"^([ *])(\d+)\| (.*)$")
_MEMORY = re.compile(r"^(r\d+) \[([^\]]+)\] (.*)$")
_RESTS_ON = re.compile(r"^line (\d+): (.*)$")


def rederived_lines(user: str) -> dict[str, Any]:
    head, _, rest = user.partition("## Memories\n")
    shown, _, rests_on = rest.partition("## What each marked line rests on\n")
    lines: list[RederiveLine] = []
    for row in head.partition("## Section\n")[2].splitlines():
        match = _LINE.match(row)
        if match:
            lines.append(RederiveLine(text=match.group(3), redo=match.group(1) == "*"))
    memories = []
    for row in shown.splitlines():
        if match := _MEMORY.match(row):
            memories.append(RederiveMemory(id=match.group(1), content=match.group(3),
                                           day=None if match.group(2) == "undated" else match.group(2)))
    for row in rests_on.splitlines():
        if match := _RESTS_ON.match(row):
            handles = match.group(2).split(" (", 1)[0]  # "(the latest 12 of 40 memories, …)" is not a handle
            lines[int(match.group(1)) - 1].memory_ids = [h.strip() for h in handles.split(",") if h.strip()]
    title = re.search(r"^Page: (.*?)  \(type: ", user, re.MULTILINE)
    task = RederiveTask(section_id="", page_title=title.group(1) if title else "", page_type="", slug="", heading="",
                        lines=lines, memories=memories)
    evidence = {m.id: evidence_of(m.id, m.content, {}, date.fromisoformat(m.day) if m.day else None)
                for m in memories}
    quote = {m.id: first_sentence(m.content) for m in memories}
    return {"rederived": [{"line": number, "text": offline_replacement(line, task, evidence, quote)}
                          for number, line in enumerate(lines, 1) if line.redo]}
