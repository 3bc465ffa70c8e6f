"""The simulated section writer and re-deriver, read from their prompts.

Section writer: the prompt shows the body's numbered lines, the planner's proposed lines, the source
records and a budget in characters; the system prompt asks for edits ("replace", "insert",
"delete") to the numbered lines. The answer inserts the proposed lines the body lacks after its last
line; when the body would pass the budget it condenses, as the prompt asks: it first deletes the
lines the other lines already say (the most repeated first), then, if the body is still over half
the budget, folds the oldest lines left into one summary line (their count and the first words of the
latest). A condense-only call (the new lines already appended) only condenses.

Re-deriver: for each line marked `*`, the memories it still rests on are shown; the answer keeps the
line when they still say it (read by the simulated judge, claude_sim/judge.py), else writes it again
as the dated first sentence of each of them, and gives no line when none is left.
"""

from __future__ import annotations

import re
from typing import Any

from claude_sim.judge import read
from claude_sim.names import first_sentence
from claude_sim.reading import Confused, between

_BUDGET = re.compile(r"^Budget: (\d+) characters$", re.MULTILINE)
_NUMBERED = re.compile(r"^(\d+)\| (.*)$")


def _edits_contract(system: str) -> None:
    if '"edits"' not in system or not all(f'"{op}"' in system for op in ("replace", "insert", "delete")):
        raise Confused("the writer's system prompt states no edits contract")


def written_section(system: str, user: str) -> dict[str, Any]:
    _edits_contract(system)
    budget_match = _BUDGET.search(user)
    shown = between(user, "## Existing body\n", "\n\n## Planner's proposed body")
    proposed = between(user, "## Planner's proposed body\n", "\n\n## Source records")
    if budget_match is None or shown is None or proposed is None:
        raise Confused("the writer's request lacks its budget, its body or the planner's proposal")
    budget = int(budget_match.group(1))
    existing: list[str] = []
    if not shown.startswith("_(empty"):
        for number, row in enumerate(shown.splitlines(), 1):
            match = _NUMBERED.match(row)
            if match is None or int(match.group(1)) != number:
                raise Confused(f"the existing body's line {number} is not numbered as the contract says")
            existing.append(match.group(2))
    condense_only = proposed.startswith("_(")
    present = {line.strip() for line in existing}
    new = [] if condense_only else list(dict.fromkeys(
        line.strip() for line in proposed.splitlines() if line.strip() and line.strip() not in present))
    merged = existing + new
    target = budget // 2 - 120
    over = _size(merged, set()) > budget
    dropped = _repeated(merged, target) if over else set()
    remaining = [i for i in range(len(merged)) if i not in dropped]
    folded: list[int] = []
    while over and _size(merged, dropped | set(folded)) > target and len(folded) < len(remaining) - 1:
        # at least two lines go into one summary line (one line folded into one saves nothing)
        folded += remaining[len(folded):len(folded) + (2 if not folded else 1)]
    edits: list[dict[str, Any]] = []
    summary_at = next((i for i in folded if i < len(existing)), None)
    for i in range(len(existing)):
        if i == summary_at:
            edits.append({"op": "replace", "line": i + 1, "text": _summary_line([merged[j] for j in folded])})
        elif i in dropped or i in folded:
            edits.append({"op": "delete", "line": i + 1})
    if folded and summary_at is None:
        edits.append({"op": "insert", "line": 0, "text": _summary_line([merged[j] for j in folded])})
    kept_new = [merged[i] for i in range(len(existing), len(merged)) if i not in dropped and i not in folded]
    if kept_new:
        edits.append({"op": "insert", "line": len(existing), "text": "\n".join(kept_new)})
    return {"edits": edits}


_WORD = re.compile(r"[a-z][a-z'-]{3,}")


def _words(line: str) -> set[str]:
    return set(_WORD.findall(line.lower()))


def _size(lines: list[str], gone: set[int]) -> int:
    return len("\n".join(line for i, line in enumerate(lines) if i not in gone))


def _repeated(lines: list[str], target: int) -> set[int]:
    """As the prompt asks, the lines the other kept lines already say (at least half of their words
    of four letters or more), the most repeated first, until the body is down to `target`; a count
    line ("- 12 memories, …") is kept."""
    gone: set[int] = set()
    while _size(lines, gone) > target:
        best, share = None, 0.5
        for i, line in enumerate(lines):
            words = _words(line)
            if i in gone or not words or re.match(r"^- \d+ (?:new )?memor", line):
                continue
            others = set().union(*(_words(other) for j, other in enumerate(lines) if j != i and j not in gone))
            if len(words & others) / len(words) >= share:
                best, share = i, len(words & others) / len(words)
        if best is None:
            break
        gone.add(best)
    return gone


def _summary_line(lines: list[str]) -> str:
    latest = lines[-1].lstrip("-* ").split()
    return f"- Earlier: {len(lines)} notes, the latest: {' '.join(latest[:12])}"


_MARKED = re.compile(r"^([ *])(\d+)\| (.*)$")
_SUMMARY = re.compile(r"^- (\d+) (new )?memor(?:y|ies)(, .+)?\.$")
_SHOWN = re.compile(r"^(r\d+) \[([^\]]+)\] (.*)$")
_RESTS_ON = re.compile(r"^line (\d+): (.*)$")


def rederived_lines(system: str, user: str) -> dict[str, Any]:
    if "marked" not in system:
        raise Confused("the re-derivation's system prompt says nothing of marked lines")
    head, found, rest = user.partition("## Memories\n")
    shown, found_too, rests_on = rest.partition("## What each marked line rests on\n")
    if not found or not found_too:
        raise Confused("the re-derivation request lacks its memories or what each line rests on")
    lines: dict[int, tuple[bool, str]] = {}
    for row in head.partition("## Section\n")[2].splitlines():
        if match := _MARKED.match(row):
            lines[int(match.group(2))] = (match.group(1) == "*", match.group(3))
    memories: dict[str, tuple[str, str | None]] = {}
    for row in shown.splitlines():
        if match := _SHOWN.match(row):
            memories[match.group(1)] = (match.group(3), None if match.group(2) == "undated" else match.group(2))
    out = []
    for row in rests_on.splitlines():
        match = _RESTS_ON.match(row)
        if match is None:
            continue
        number = int(match.group(1))
        if number not in lines or not lines[number][0]:
            raise Confused(f"line {number} is not a marked line of the section")
        handles = [h.strip() for h in match.group(2).split(" (", 1)[0].split(",") if h.strip() in memories]
        text = lines[number][1]
        cited = [memories[h] for h in handles]
        summary = _SUMMARY.match(text)
        if summary and cited:
            # a count and span of the memories: recounted from those still there
            days = sorted(day for _, day in cited if day)
            span = "" if not days else f", on {days[0]}" if days[0] == days[-1] else f", {days[0]} to {days[-1]}"
            noun = f"{'new ' if summary.group(2) else ''}{'memory' if len(cited) == 1 else 'memories'}"
            out.append({"line": number, "text": [f"- {len(cited)} {noun}{span if summary.group(3) else ''}."]})
        elif cited and read(text, [m[0] for m in cited], days=[m[1] for m in cited]).supported:
            out.append({"line": number, "text": [text]})
        else:
            out.append({"line": number, "text": [f"- {day}: {first_sentence(content)}" if day else
                                                 f"- {first_sentence(content)}" for content, day in cited]})
    return {"rederived": out}
