"""The section writer's own lines are held to the grounding rule (domain/writer_grounding.py,
activities/writer_gate.py).

Generated sections (seeded, randomly composed names, places, days and figures): the lines a writer
keeps, the folds it writes from the names and days it was shown and the count of lines it folds
all stay; the same folds with one name, date or figure that nothing shown holds are dropped and
named in the reason.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

from activities.writer_gate import checked_draft
from domain.context import MemoryRecord
from domain.evidence import evidence_of
from domain.resolved_plan import SectionTask
from domain.writer_grounding import check_written_body

SYLLABLES = ["ka", "lo", "mi", "ren", "sa", "tu", "vel", "dor", "an", "is", "or", "el"]
DAY0 = datetime(2026, 2, 1, tzinfo=UTC)


def name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)).title()


def section(rng: random.Random) -> tuple[list[str], list[str], set[str]]:
    """(lines shown to the writer, the names in them, every word shown)."""
    people = [name(rng) for _ in range(rng.randint(2, 4))]
    places = [name(rng) for _ in range(rng.randint(1, 3))]
    lines = []
    for _ in range(rng.randint(3, 9)):
        day = (DAY0 + timedelta(days=rng.randint(0, 300))).date().isoformat()
        lines.append(f"- {day}: Met **{rng.choice(people)}** at {rng.choice(places)} ({rng.randint(2, 9)} of us).")
    shown = [n for n in [*people, *places] if any(n in line for line in lines)]
    return lines, shown, {w.lower() for line in lines for w in line.split()}


def invented(rng: random.Random, shown_words: set[str]) -> str:
    while True:
        candidate = name(rng) + name(rng).lower()
        if candidate.lower() not in shown_words:
            return candidate


def test_generated_honest_folds_stay_and_folds_with_an_invented_term_go() -> None:
    for seed in range(200):
        rng = random.Random(seed)
        lines, names, words = section(rng)
        folded = rng.randint(2, len(lines))
        honest = [
            f"- Earlier: {folded} notes, the latest: {lines[-1][14:]}",
            f"- {rng.choice(names)} and {rng.choice(names)} met there often.",
            lines[0],  # kept as it was
        ]
        for line in honest:
            assert check_written_body(line, ["\n".join(lines)], [], ["Page"]).body == line, (seed, line)
        stranger = invented(rng, words)
        lies = {
            f"- {rng.choice(names)} met {stranger} there often.": stranger.lower(),
            f"- Earlier: {len(lines) + rng.randint(30, 900)} notes.": None,
            f"- Met {rng.choice(names)} on 2031-07-{rng.randint(10, 28)}.": "2031-07",
        }
        for line, term in lies.items():
            checked = check_written_body(line, ["\n".join(lines)], [], ["Page"])
            assert checked.body == "" and len(checked.rejected) == 1, (seed, line)
            assert "written by the section writer" in checked.rejected[0].reason
            if term:
                assert term in checked.rejected[0].reason, (seed, line, checked.rejected[0].reason)


def test_a_term_in_a_cited_memory_or_the_page_name_grounds_a_written_line() -> None:
    memory = evidence_of("m1", "Lunch with Oriane at Uchi, 14 of us.", {}, DAY0)
    body = "- Lunch with Oriane at Uchi: 14 of us.\n- Kepler Hall hosted it."
    checked = check_written_body(body, ["- 2026-02-01: Lunch at Uchi."], [memory], ["Kepler Hall"])
    assert checked.body == body and not checked.rejected


def test_a_draft_the_gate_empties_falls_back_to_the_shown_body_with_the_proposal_appended() -> None:
    memory = MemoryRecord(id=uuid.uuid4(), content="Brisket at Franklin with Lena.", metadata={}, created_at=DAY0,
                          updated_at=DAY0)
    task = SectionTask(page_id=str(uuid.uuid4()), page_title="Franklin Barbecue", page_type="entity", slug="visits",
                       heading="Visits", existing_body="- 2026-01-10: Ribs at Franklin.",
                       proposed_body="- 2026-02-01: Brisket at Franklin with Lena.", source_refs=[str(memory.id)])
    body, rejected = checked_draft(task, "- Franklin closed for good after Bramwell bought it.", [memory])
    assert body == "- 2026-01-10: Ribs at Franklin.\n- 2026-02-01: Brisket at Franklin with Lena."
    assert [r.stage for r in rejected] == ["grounding"] and "bramwell" in rejected[0].reason
    assert rejected[0].page_ref == task.page_id and rejected[0].cited == [str(memory.id)]
    kept, none = checked_draft(task, "- Ribs, then brisket with Lena, at Franklin.", [memory])
    assert kept == "- Ribs, then brisket with Lena, at Franklin." and none == []


COMMON_OPENERS = ["Waited", "Lunch", "Visited", "Dinner", "Tried", "Walked", "Coffee", "Notes", "Earlier", "Museum",
                  "Bought", "Met", "Booked", "Cooked", "Ordered", "Finally", "Later", "Ate", "Called", "Stayed"]


def test_generated_one_word_names_opening_a_sentence_are_checked_ordinary_openers_are_not() -> None:
    from domain.claim_terms import names_in
    from domain.grounding import GATE_RULE, ungrounded

    for seed in range(200):
        rng = random.Random(seed)
        known, stranger = name(rng), name(rng) + name(rng).lower()
        memory = evidence_of("m1", f"Dinner with {known} at the market, {rng.randint(2, 9)} stalls.", {}, DAY0)
        opener = rng.choice(COMMON_OPENERS)
        # a word that reads as a name alone is a term of the line like any name (domain/name_words.py),
        # not an opening left to the judge
        assert names_in(f"{stranger} cooked dinner.").openings == ()
        assert names_in("Waited at the market.").openings == ("waited",)
        # a rare word no memory holds opening a sentence (first, or after a full stop) is refused
        for line in (f"- {stranger} cooked dinner.", f"- {opener} at the market. {stranger} cooked."):
            assert ungrounded(line, [memory], ["Market"], GATE_RULE) == [stranger.lower()], (seed, line)
        # the same place taken by a name the memory or the page holds, or by an ordinary word, is not
        for line in (f"- {known} cooked dinner.", f"- {opener} at the market.", f"- {opener} with {known}.",
                     "- Market stalls again."):
            assert ungrounded(line, [memory], ["Market"], GATE_RULE) == [], (seed, line)
        # a writer's fold opening with an invented one-word name is dropped from its draft
        checked = check_written_body(f"- {stranger} joined every dinner.", [f"- 2026-02-01: Dinner with {known}."],
                                     [memory], ["Market"])
        assert checked.body == "" and stranger.lower() in checked.rejected[0].reason
