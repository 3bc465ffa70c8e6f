"""The section writer's edit protocol: ranged edits, and the condense-only prompt of an additive update."""

from __future__ import annotations

from claude_sim.writing import written_section
from domain.pricing import TokenUsage
from domain.resolved_plan import SectionTask
from planners.claude_client import ModelReply
from planners.claude_planner import ClaudePlanner
from planners.prompts import (
    ALREADY_APPENDED,
    NO_SOURCES_NEEDED,
    SECTION_WRITER_SYSTEM,
    build_section_writer_prompt,
)
from planners.section_edits import SECTION_BUDGET_CHARS, SectionEdits, append_lines, apply_edits
from planners.section_fold import FOLD_TARGET_SHARE


def test_a_ranged_delete_or_replace_covers_its_lines_and_stops_at_the_body() -> None:
    body = "\n".join(f"- line {n}" for n in range(1, 8))
    edits = SectionEdits.model_validate({"edits": [
        {"op": "replace", "line": 1, "text": "- Earlier: 3 notes.", "to": 3},
        {"op": "delete", "line": 5, "to": 99},
        {"op": "insert", "line": 4, "text": "- new"}]})
    assert apply_edits(body, edits) == "- Earlier: 3 notes.\n- line 4\n- new"


def test_an_additive_update_past_the_budget_is_only_condensed_down_to_half_the_budget() -> None:
    existing = "\n".join(f"- 2026-01-{n:02d}: Coffee at the corner cafe, a flat white and a long chat." for n in range(1, 29))
    appended = append_lines(existing, "- 2026-02-01: Dinner at the new ramen place.")
    prompt = build_section_writer_prompt("Lena", "entity", "notes", "Notes", appended, "- 2026-02-01: ...",
                                         ["Dinner at the new ramen place."], budget_chars=2_000, appended=True)
    assert ALREADY_APPENDED in prompt and NO_SOURCES_NEEDED in prompt and "Dinner at the new" in prompt
    assert "- 2026-02-01: ..." not in prompt  # the proposal is in the body, not shown again

    edits = SectionEdits.model_validate(written_section(SECTION_WRITER_SYSTEM, prompt))
    assert all(e.op != "insert" for e in edits.edits)  # no proposed line retyped
    body = apply_edits(appended, edits)
    assert len(body) <= 1_000 and body.endswith("Dinner at the new ramen place.")
    # The lines that repeat one another went, not what they say: the coffee is still on the page.
    assert "Coffee at the corner cafe, a flat white and a long chat." in body


class _Writer:
    """A model client standing in for the section writer: it counts calls and keeps the body it is shown."""

    price = None  # priced as Claude, by model id

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def complete(self, *, user: str, **_: object) -> ModelReply:
        self.prompts.append(user)
        return ModelReply(text='{"edits": []}', stop_reason="end_turn", usage=TokenUsage(input_tokens=10, output_tokens=3),
                          model="claude-haiku-4-5")


def _task(existing: str, proposed: str) -> SectionTask:
    return SectionTask(page_id="p", page_title="Uchi", page_type="entity", slug="notes", heading="Notes",
                       existing_body=existing, proposed_body=proposed, additive=True)


async def test_a_section_past_its_budget_of_dated_lines_is_folded_in_code_without_a_model_call() -> None:
    existing = "\n".join(f"- 2026-01-{n:02d}: Lunch at Uchi, the omakase and a long chat with Lena about work."
                         for n in range(1, 32))
    client = _Writer()
    reply = await ClaudePlanner(client).write_section(  # type: ignore[arg-type]
        _task(existing, "- 2026-02-01: Dinner at Uchi."), [], "claude-haiku-4-5")
    assert client.prompts == [] and reply.derived and reply.usage.cost_usd == 0
    assert len(reply.body) <= SECTION_BUDGET_CHARS * FOLD_TARGET_SHARE
    assert reply.body.startswith("- Earlier: ") and reply.body.endswith("- 2026-02-01: Dinner at Uchi.")


async def test_a_section_past_its_budget_of_prose_is_condensed_by_the_writer() -> None:
    existing = "\n".join(f"Lena likes the omakase at Uchi, and the long chats about work, remark {n}."
                         for n in range(40))
    client = _Writer()
    reply = await ClaudePlanner(client).write_section(  # type: ignore[arg-type]
        _task(existing, "- 2026-02-01: Dinner at Uchi."), [], "claude-haiku-4-5")
    assert len(client.prompts) == 1 and ALREADY_APPENDED in client.prompts[0] and not reply.derived
