"""The section writer's edit protocol and each section's size budget.

A section is never regenerated whole. An update that only adds lines (the plan's `mode: "add"`) is
appended in code, without a model call, while the section stays within SECTION_BUDGET_CHARS. The
writer is called for a rewrite (a line is wrong or superseded) or when an append would pass the
budget; it answers with edits to the numbered lines of the existing body (replace / insert /
delete), so its output is the size of the change, not of the section. Past the budget it condenses:
older detail folds into summary lines, unless the lines to fold are dated ones, which the compiler
folds itself (planners/section_fold.py). Provenance is section-level, so the memories behind folded
lines stay cited by the section.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from domain.guards import JsonResponseError, parse_json_response
from domain.reply_errors import reply_problem

# About 600 tokens: what a reader takes in at a glance, and what keeps a writer call's prompt and
# output flat however many visits a section has collected.
SECTION_BUDGET_CHARS = 2_400


class LineEdit(BaseModel):
    op: Literal["replace", "insert", "delete"]
    line: int = Field(ge=0)  # 1-based line of the existing body; insert after it (0: at the top)
    text: str = ""
    # A replace or delete of lines line..to (a condensing writer folds a run of lines in one edit).
    to: int | None = Field(None, ge=0)


class SectionEdits(BaseModel):
    edits: list[LineEdit] = Field(default_factory=list)


def numbered(body: str | None) -> str:
    lines = (body or "").strip().splitlines()
    return "\n".join(f"{n}| {line}" for n, line in enumerate(lines, 1))


def append_lines(existing_body: str | None, proposed_body: str) -> str:
    """The existing lines, then the proposed lines not already there (compared stripped)."""
    existing = (existing_body or "").strip().splitlines()
    present = {line.strip() for line in existing if line.strip()}
    added: list[str] = []
    for line in proposed_body.splitlines():
        if line.strip() and line.strip() not in present:
            present.add(line.strip())
            added.append(line.strip())
    return "\n".join([*existing, *added]).strip()


def parse_edits(reply_text: str) -> SectionEdits:
    try:
        return SectionEdits.model_validate(parse_json_response(reply_text))
    except (JsonResponseError, json.JSONDecodeError, ValueError, ValidationError) as error:
        raise ValueError(f"writer reply is not edits: {reply_problem(error, SectionEdits)}") from None


def apply_edits(existing_body: str | None, edits: SectionEdits) -> str:
    """The body with the edits applied; line numbers always refer to the existing body, so edits
    commute. An edit naming a line the body does not have is ignored."""
    lines = (existing_body or "").strip().splitlines()
    replaced: dict[int, str | None] = {}
    inserted: dict[int, list[str]] = {}
    for edit in edits.edits:
        if edit.op == "insert" and edit.line <= len(lines):
            inserted.setdefault(edit.line, []).extend(t for t in edit.text.splitlines() if t.strip())
        elif 1 <= edit.line <= len(lines):
            replaced[edit.line] = edit.text if edit.op == "replace" else None
            for n in range(edit.line + 1, min(edit.to or 0, len(lines)) + 1):
                replaced[n] = None  # the rest of the range: folded into the first line, or deleted
    out: list[str] = list(inserted.get(0, []))
    for n, line in enumerate(lines, 1):
        kept = replaced.get(n, line)
        if kept is not None and kept.strip():
            out.extend(kept.splitlines())
        out.extend(inserted.get(n, []))
    return "\n".join(out).strip()
