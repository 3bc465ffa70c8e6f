"""The simulator's brain: a stand-in for the model that answers each request from what the request
carries over the wire (the system prompt, the user message, the tool schema), as a careful model
following those instructions would. It imports nothing of the product: a prompt is read by the
contract it states (claude_sim/leaf_reading.py and the modules below), never parsed back with the
code that wrote it.

Two entry points, the only ones other code should call:

    kind_of(system, messages, tools) -> str
        which task a request is ("planner", "writer", "aggregation", "judge", "claim_judge",
        "rederive" or "other"), read from its tool schema and prompt; the server matches faults by it.

    answer(system, messages, tools=None, tool_choice=None, liar=None) -> Reply
        `system`, `messages`, `tools` and `tool_choice` as the Messages API takes them (a tool is
        {"name", "input_schema"}; another protocol converts to these first); the reply: `Reply.answer` is the forced tool's input (a dict) when `Reply.tool` is set, else
        the text of a text reply. `liar` (claude_sim/lies.py) makes its share of a leaf plan's lines
        lies and records each.

What each task answers is in its module: the leaf plan in claude_sim/leaf_planning.py, the section
writer and the re-deriver in claude_sim/writing.py, the aggregation planner and the merge judge in
claude_sim/hubs_and_pairs.py, the claim judge in claude_sim/judge.py (its request read and its reply
written by claude_sim/claim_judge_wire.py). A request that breaks the contract its own prompt states
(a part missing, a handle never defined, a reply tool that does not match the output shape) gets
what a model that cannot follow it gives: an empty tool input, or a text reply saying what it could
not follow. The compiler cannot use either, so such a prompt change fails the tests that compile.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from claude_sim import claim_judge_wire, hubs_and_pairs, judge, leaf_planning, supersession, writing
from claude_sim.leaf_reading import read_leaf
from claude_sim.lies import Liar, Lie
from claude_sim.reading import Confused, system_text, user_text


@dataclass
class Reply:
    kind: str
    answer: Any  # the tool input (a dict) when `tool` is set, else the reply's text
    tool: str | None = None
    confused: str = ""  # why the request could not be followed ("" when it could)
    lies: list[Lie] = field(default_factory=list)  # the lies this reply tells


def _schema(tools: Any) -> dict[str, Any]:
    if not isinstance(tools, list) or not tools or not isinstance(tools[0], dict):
        return {}
    schema = tools[0].get("input_schema")
    return schema if isinstance(schema, dict) else {}


def kind_of(system: Any, messages: Any, tools: Any) -> str:
    properties = _schema(tools).get("properties") or {}
    user = user_text(messages)
    if "held" in properties or "pageUpdates" in properties or "new_pages" in properties:
        return "planner"
    if "parentSectionUpdates" in properties:
        return "aggregation"
    if "decisions" in properties:
        return "judge"
    if "rederived" in properties:
        return "rederive"
    if claim_judge_wire.is_claim_judge(user, properties):
        return "claim_judge"
    if not tools and "## Planner's proposed body" in user:
        return "writer"
    return "other"


def leaf_memories(system: Any, messages: Any, tools: Any) -> list[str]:
    """The texts of the records a leaf plan request shows ([] when it is not one the brain can read)."""
    try:
        return [m.text for m in read_leaf(system_text(system), user_text(messages), _schema(tools)).memories]
    except Confused:
        return []


def answer(system: Any, messages: Any, tools: Any = None, tool_choice: Any = None, liar: Liar | None = None) -> Reply:
    kind = kind_of(system, messages, tools)
    forced = tool_choice.get("name") if isinstance(tool_choice, dict) else None
    if forced is None and isinstance(tools, list) and len(tools) == 1 and isinstance(tools[0], dict):
        forced = tools[0].get("name") if (tool_choice or {}).get("type") in ("any", "tool") else None
    prompt, user, schema = system_text(system), user_text(messages), _schema(tools)
    told: list[Lie] = []
    try:
        if kind == "planner":
            request = read_leaf(prompt, user, schema)
            value: Any = leaf_planning.plan(request)
            if request.conventions.supersede:
                # Which line replaces which: the simulator's own reading of the facts the prompt shows.
                value = supersession.mark_replacements(user, value)
            if liar is not None and liar.share > 0:
                before = len(liar.told)
                memories = {m.handle: (m.day, m.text) for m in request.memories}
                value = liar.lie(value, memories, user[:2000])
                told = liar.told[before:]
            value = leaf_planning.as_arrays(value, request.conventions)
        elif kind == "writer":
            value = writing.written_section(prompt, user)
        elif kind == "rederive":
            value = writing.rederived_lines(prompt, user)
        elif kind == "aggregation":
            value = hubs_and_pairs.aggregation_plan(prompt, user, schema)
        elif kind == "judge":
            value = hubs_and_pairs.judged_pairs(prompt, user)
        elif kind == "claim_judge":
            questions = claim_judge_wire.read_questions(user)
            findings = [judge.read(q.claim, q.memories, q.page, q.days) for q in questions]
            # The memories that each say the line whole, read one at a time.
            supporters = [[h for h, m, d in zip(q.handles, q.memories, q.days, strict=True)
                           if judge.read(q.claim, [m], q.page, [d]).supported] if f.supported else []
                          for q, f in zip(questions, findings, strict=True)]
            value = claim_judge_wire.reply(questions, supporters, findings)
        else:
            value = {} if forced else "Simulated reply."
    except (Confused, ValueError, KeyError, TypeError) as confused:
        # A value the contract's own shape does not allow (a count that is no number, a part that is
        # no list) leaves the model as lost as a part missing.
        text = f"I could not follow this request: {confused}"
        return Reply(kind=kind, answer={} if forced else text, tool=forced, confused=str(confused))
    if forced is None and not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False)
    return Reply(kind=kind, answer=value, tool=forced, lies=told)
