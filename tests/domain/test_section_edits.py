"""The section writer's edit protocol: ranged edits, and the condense-only prompt of an additive update."""

from __future__ import annotations

from claude_sim.brain import written_section
from planners.prompts import ALREADY_APPENDED, NO_SOURCES_NEEDED, build_section_writer_prompt
from planners.section_edits import SectionEdits, append_lines, apply_edits


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

    edits = SectionEdits.model_validate(written_section(prompt))
    assert [e.op for e in edits.edits] == ["replace", "delete"]  # no proposed line retyped
    body = apply_edits(appended, edits)
    assert len(body) <= 1_000 and body.endswith("Dinner at the new ramen place.")
    assert body.startswith("- Earlier: ")
