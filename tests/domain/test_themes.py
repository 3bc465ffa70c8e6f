"""The themes of a person's page (planners/scripted/themes.py)."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from domain.context import MemoryRecord
from planners.scripted.condense import condensed_body, linked_size
from planners.scripted.themes import THEME_SLUGS, THEMED_FROM, is_themed, log_groups, theme_of
from planners.section_edits import SECTION_BUDGET_CHARS

BASE = datetime(2025, 1, 1, tzinfo=UTC)
_ABOUT = {
    "work": ["got a promotion at the office", "asked the boss for a raise", "started a new job at a company"],
    "pets": ["took the puppy to the vet", "adopted a kitten", "walked the dog in the rain"],
    "health": ["went to the doctor about an injury", "started running at the gym", "felt stress and slept badly"],
}


def _memory(n: int, text: str) -> MemoryRecord:
    return MemoryRecord(id=uuid.UUID(int=n + 1), content=text, metadata={}, created_at=BASE + timedelta(days=n),
                        updated_at=BASE)


def test_a_memory_goes_to_the_theme_it_is_about_by_meaning_and_the_same_one_every_time() -> None:
    for slug, phrases in _ABOUT.items():
        for phrase in phrases:
            assert theme_of(f"Ines {phrase}.") == slug
    assert theme_of("") is None


def test_a_page_is_themed_once_it_has_enough_memories_or_theme_sections_already() -> None:
    assert not is_themed([], THEMED_FROM - 1)
    assert is_themed([], THEMED_FROM)
    assert is_themed([("notes", f"- {THEMED_FROM - 3} memories, 2025-01-01 to 2025-03-01.\n- …")], 3)
    assert not is_themed([("notes", f"- {THEMED_FROM - 3} memories, 2025-01-01 to 2025-03-01.")], 2)
    assert is_themed([("notes", "- 2 memories, on 2025-01-01."), ("pets", "- …")], 1)


@pytest.mark.parametrize("seed", range(4))
def test_a_themed_page_splits_its_memories_into_bounded_sections_citing_each_memory_once(seed: int) -> None:
    rng = random.Random(seed)
    name = rng.choice(["Ines", "Tomasz", "Keoni", "Amara"])
    texts = [f"{name} {rng.choice(_ABOUT[rng.choice(sorted(_ABOUT))])} on day {n}." for n in range(150)]
    memories = [_memory(n, text) for n, text in enumerate(texts)]

    groups = log_groups(memories, "notes", person=True)

    assert sorted(m.id for _, group in groups for m in group) == sorted(m.id for m in memories)
    assert {slug for slug, _ in groups} <= THEME_SLUGS | {"notes"}
    for slug, group in groups:
        body = condensed_body("entity", slug, name, group) or ""
        assert body and sum(linked_size(line) + 1 for line in body.splitlines()) <= SECTION_BUDGET_CHARS
    assert log_groups(memories, "notes", person=False) == [("notes", memories)]


def test_a_theme_section_of_one_memory_says_it() -> None:
    memory = _memory(0, "Keoni moved into a house by the harbour with a garden for the kids and a shed for tools.")

    assert condensed_body("entity", "home", "Keoni", [memory]) == (
        "- 2025-01-01: Keoni moved into a house by the harbour with a garden for the kids and a shed for tools.")
