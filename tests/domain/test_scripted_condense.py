"""Condensed sections (planners/scripted/condense.py) and the scripted writer that rebuilds them."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from domain.context import MemoryRecord
from domain.resolved_plan import SectionTask
from planners.scripted.condense import condensed_body, log_body, visits_body
from planners.scripted.leaf_plan import scripted_rewrite_section, scripted_write_section

BASE = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
RETAINED = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)  # long after the memories happened


def memory(n: int, content: str, day: int, **metadata: Any) -> MemoryRecord:
    # updated_at is the retain time, the same for all: dates must come from created_at.
    return MemoryRecord(id=uuid.UUID(int=n), content=content, metadata=metadata,
                        created_at=BASE + timedelta(days=day), updated_at=RETAINED)


def at(place: str, city: str = "Austin") -> dict[str, Any]:
    return {"place": {"name": place, "city": city},
            "entities": [{"name": place, "type": "entity", "kind": "restaurant"}]}


def with_person(name: str, place: str) -> dict[str, Any]:
    meta = at(place)
    meta["entities"] = [*meta["entities"], {"name": name, "type": "entity", "kind": "person"}]
    return meta


def franklin_memories() -> list[MemoryRecord]:
    return [
        memory(1, "Dinner at Franklin Barbecue.", 0, **at("Franklin Barbecue")),
        memory(2, "Brisket at Franklin Barbecue with Lena. It was great.", 3, **with_person("Lena", "Franklin Barbecue")),
        memory(3, "Dinner at Franklin Barbecue.", 20, **at("franklin barbecue")),
        memory(4, "Ribs at Franklin Barbecue with Lena.", 35, **with_person("Lena", "Franklin Barbecue")),
        memory(5, "Dinner at Franklin Barbecue.", 41, **at("Franklin Barbecue")),
        memory(6, "Turkey at Franklin Barbecue.", 50, **at("Franklin Barbecue")),
        memory(7, "Sausage at Franklin Barbecue.", 51, **at("Franklin Barbecue")),
        memory(8, "Pulled pork at Franklin Barbecue.", 52, **at("Franklin Barbecue")),
        memory(9, "Beans at Franklin Barbecue.", 52, **at("Franklin Barbecue")),
    ]


def test_a_log_section_says_how_many_what_recurs_and_what_its_memories_say() -> None:
    body = condensed_body("entity", "notes", "Franklin Barbecue", franklin_memories())

    assert body == (
        "- 9 memories, 2026-03-01 to 2026-04-22.\n"
        "- Often together with: **Lena** (2).\n"
        "- 2026-04-22: Beans at Franklin Barbecue.\n"
        "- 2026-04-22: Pulled pork at Franklin Barbecue.\n"
        "- 2026-04-21: Sausage at Franklin Barbecue.\n"
        "- 2026-04-20: Turkey at Franklin Barbecue.\n"
        "- Dinner at Franklin Barbecue. (3 times, 2026-03-01 to 2026-04-11)\n"
        "- 2026-03-04: Brisket at Franklin Barbecue with Lena."
    )
    # The page itself, in any spelling, is not something it is "together with".
    assert "**Franklin Barbecue**" not in body and "**franklin barbecue**" not in body
    # "Ribs … with Lena" is not "Brisket … with Lena": lines that differ in a thing are never merged.
    assert "(2 times" not in body


def test_the_body_is_a_function_of_the_set_of_memories() -> None:
    memories = franklin_memories()
    shuffled = memories[:]
    random.Random(3).shuffle(shuffled)

    expected = condensed_body("entity", "notes", "Franklin Barbecue", memories)

    assert condensed_body("entity", "notes", "Franklin Barbecue", shuffled) == expected
    assert condensed_body("entity", "notes", "Franklin Barbecue", memories + memories[:4]) == expected


def test_a_city_page_leads_each_line_with_its_place_in_its_best_attested_spelling() -> None:
    memories = [memory(1, "Dinner at franklin barbecue.", 0, **at("franklin barbecue")),
                memory(2, "Lunch at Franklin Barbecue.", 1, **at("Franklin Barbecue")),
                memory(3, "Tacos at Veracruz.", 2, **at("Veracruz"))]

    body = condensed_body("topic", "highlights", "Austin", memories)

    assert body == ("- 3 memories, 2026-03-01 to 2026-03-03.\n"
                    "- Most mentioned: **Franklin Barbecue** (2).\n"
                    "- 2026-03-03: **Veracruz**: Tacos at Veracruz.\n"
                    "- 2026-03-02: **Franklin Barbecue**: Lunch at Franklin Barbecue.\n"
                    "- 2026-03-01: **Franklin Barbecue**: Dinner at franklin barbecue.")


def test_no_line_repeats_and_the_newest_stay() -> None:
    memories = [memory(n, "Dinner at Uchi." if n % 2 else f"Course {n} at Uchi.", n // 3, **at("Uchi"))
                for n in range(1, 30)]

    body = log_body(memories, "Uchi")
    lines = body.splitlines()

    assert len(lines) == len(set(lines))
    # The fifteen dinners are one line that counts them; the courses differ by their number, never merged.
    assert "- Dinner at Uchi. (15 times, 2026-03-01 to 2026-03-10)" in lines
    assert "- 2026-03-10: Course 28 at Uchi." in lines
    assert not any("Course" in line and "times" in line for line in lines)


def test_memories_saying_the_same_make_one_line_that_counts_them() -> None:
    memories = [memory(1, "Coffee.", 0, **at("Jo's")), memory(2, "Coffee.", 0, **at("Jo's")),
                memory(3, "Tea.", 1, **at("Jo's")), memory(4, "Tea.", 2, **at("Jo's")),
                memory(5, "Cake.", 3, **at("Jo's")), memory(6, "Cake.", 4, **at("Jo's")),
                memory(7, "Soup.", 5, **at("Jo's")), memory(8, "Soup.", 5, **at("Jo's"))]

    assert log_body(memories, "Jo's") == ("- 8 memories, 2026-03-01 to 2026-03-06.\n"
                                          "- Soup. (2 times, on 2026-03-06)\n"
                                          "- Cake. (2 times, 2026-03-04 to 2026-03-05)\n"
                                          "- Tea. (2 times, 2026-03-02 to 2026-03-03)\n"
                                          "- Coffee. (2 times, on 2026-03-01)")


def test_visits_are_counted_by_month_with_the_latest_days() -> None:
    memories = [memory(n, "Visit.", day, **at("Uchi")) for n, day in enumerate([0, 1, 1, 40, 41], start=1)]

    assert visits_body(memories) == ("- Visited 5 times, 2026-03-01 to 2026-04-11.\n"
                                     "- By month: 2026-03 (3), 2026-04 (2).\n"
                                     "- Latest: 2026-04-11, 2026-04-10, 2026-03-02 (2).")
    assert visits_body(memories[:1]) == "- Visited once, on 2026-03-01."
    assert visits_body(memories[1:3]) == "- Visited 2 times, all on 2026-03-02.\n- Latest: 2026-03-02 (2)."


def test_dates_are_when_memories_happened_not_when_they_were_retained() -> None:
    memories = [memory(1, "Visit.", 0, **at("Uchi")), memory(2, "Visit.", 9, **at("Uchi"))]

    assert "2026-11-23" not in visits_body(memories) + log_body(memories, "Uchi")
    assert visits_body(memories).startswith("- Visited 2 times, 2026-03-01 to 2026-03-10.")


def test_a_rationale_counts_and_dates_the_reasons_given() -> None:
    memories = [memory(1, "Sold the car because parking is impossible.", 0),
                memory(2, "No car now, because parking is impossible.", 5),
                memory(3, "The car is gone.", 6)]

    assert condensed_body("decision", "rationale", "Sell the car", memories) == (
        "- 3 memories, 2026-03-01 to 2026-03-07.\n"
        "- Because parking is impossible. (2 times, 2026-03-01 to 2026-03-06)"
    )


def task(slug: str, *, page_type: str = "entity", existing: str | None = None, proposed: str = "- 1 new memory.",
         title: str = "Franklin Barbecue") -> SectionTask:
    return SectionTask(page_id=str(uuid.UUID(int=99)), page_title=title, page_type=page_type, slug=slug,
                       heading=slug.title(), existing_body=existing, proposed_body=proposed)


def test_the_writer_rebuilds_a_log_from_every_memory_it_cites() -> None:
    memories = franklin_memories()
    stored = condensed_body("entity", "notes", "Franklin Barbecue", memories[:5])

    rewritten = scripted_rewrite_section(task("notes", existing=stored), memories)

    assert rewritten == condensed_body("entity", "notes", "Franklin Barbecue", memories)
    # Rewriting again with nothing new changes nothing.
    assert scripted_rewrite_section(task("notes", existing=rewritten), memories) == rewritten


def test_the_writer_keeps_a_summary_and_merges_sections_it_does_not_condense() -> None:
    assert scripted_rewrite_section(task("overview", existing="Restaurant in Austin, TX.",
                                         proposed="Restaurant in Austin."), franklin_memories()) \
        == "Restaurant in Austin, TX."
    assert scripted_rewrite_section(task("menu", existing="- Brisket.", proposed="- Ribs."), franklin_memories()) \
        == "- Brisket.\n- Ribs."


def test_the_line_merge_compares_lines_before_linkification() -> None:
    stored = "- [**Franklin Barbecue**](/wiki/entity/franklin-barbecue): Dinner at Franklin Barbecue."

    assert scripted_write_section(stored, "- **Franklin Barbecue**: Dinner at Franklin Barbecue.") == stored
