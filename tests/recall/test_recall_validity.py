"""recall and context honour claim validity: a fact that changed answers with its current value, the
older value only with an `as_of` before the change, a disputed value comes marked, and context never
shows a superseded claim. Cases are generated (seeded): holders, attributes and values composed at
random, each changed fact written as the compile leaves it (the old claim superseded until the new
one began)."""

from __future__ import annotations

import random
import uuid

from sqlalchemy import text

from app.context import context
from app.reads import ReadScope
from app.recall import recall
from tests.recall.wiki import OWNER, TENANT, day, entity, fact

SCOPE = ReadScope.of(TENANT, OWNER)

# attribute kind -> (the line stating a value, the question asking for it, values to pick from)
ATTRIBUTES = {
    "home": ("{who} lives in {value}.", "Where does {who} live?", ["Austin", "Denver", "Lisbon", "Oslo", "Kyoto"]),
    "employer": ("{who} works for {value}.", "Who does {who} work for?", ["Acme", "Globex", "Initech", "Umbrella"]),
    "role": ("{who} is the team's {value}.", "What is {who}'s role on the team?",
             ["designer", "treasurer", "captain", "coach"]),
    "meeting": ("{who}'s weekly meeting is at {value}.", "When is {who}'s weekly meeting?",
                ["9am", "11am", "2pm", "4pm"]),
    "status": ("{who}'s garden project is {value}.", "What state is {who}'s garden project in?",
               ["on hold", "in progress", "finished", "cancelled"]),
}
PEOPLE = ["Nadia Okafor", "Tomas Lind", "Priya Raman", "Hugo Marsh", "Ines Carvalho", "Oren Sato"]


async def mark(engine, claim_id: str, validity: str, valid_from: str, valid_to: str | None = None) -> None:
    """Set the validity the compile derives (store/claim_validity.py) on a claim written directly."""
    async with engine.begin() as conn:
        await conn.execute(text("""
            UPDATE wiki_section_claims SET validity = :validity, valid_from = :since, valid_to = :until
            WHERE id = :id
        """), {"id": uuid.UUID(claim_id), "validity": validity, "since": day(valid_from),
               "until": valid_to and day(valid_to)})


async def changed_fact(engine, rng: random.Random, who: str, kind: str) -> tuple[str, str, str, str]:
    """A page for `who` whose `kind` changed from an old value to a new one; returns the question,
    the old line, the new line and a day between the two."""
    line, question, values = ATTRIBUTES[kind]
    old_value, new_value = rng.sample(values, 2)
    old_day = f"2025-0{rng.randint(1, 4)}-1{rng.randint(0, 9)}"
    new_day = f"2026-0{rng.randint(5, 9)}-0{rng.randint(1, 9)}"
    page = await entity(engine, who, who.lower(), who.split()[0].lower())
    old_line, new_line = line.format(who=who, value=old_value), line.format(who=who, value=new_value)
    old = await fact(engine, page, old_line, when=old_day)
    new = await fact(engine, page, new_line, when=new_day)
    await mark(engine, old, "superseded", old_day, new_day)
    await mark(engine, new, "current", new_day)
    return question.format(who=who), old_line, new_line, "2025-12-31"


async def test_a_changed_fact_answers_its_current_value_and_the_old_one_only_as_of_before(engine):
    rng = random.Random(33)
    kinds = list(ATTRIBUTES)
    cases = [(who, rng.choice(kinds)) for who in rng.sample(PEOPLE, 4)]
    assert len({kind for _, kind in cases}) >= 3  # several attribute kinds in one wiki
    built = [await changed_fact(engine, rng, who, kind) for who, kind in cases]
    for question, old_line, new_line, between in built:
        now = await recall(engine, SCOPE, question)
        lines = [r.text for r in now.results]
        assert new_line in lines and old_line not in lines, (question, lines)
        answer = next(r for r in now.results if r.text == new_line)
        assert answer.validity == "current" and answer.valid_from is not None and answer.valid_to is None
        then = await recall(engine, SCOPE, question, as_of=between)
        lines = [r.text for r in then.results]
        assert old_line in lines and new_line not in lines, (question, between, lines)
        held = next(r for r in then.results if r.text == old_line)
        assert held.validity == "superseded" and held.valid_to is not None and held.valid_to > day(between)
        before_both = await recall(engine, SCOPE, question, as_of="2024-12-31")
        assert not {old_line, new_line} & {r.text for r in before_both.results}


async def test_rival_values_are_returned_marked_disputed(engine):
    page = await entity(engine, "Lena Fischer", "lena fischer")
    lines = ["Lena Fischer lives in Porto.", "Lena Fischer lives in Oslo."]
    for line in lines:
        await mark(engine, await fact(engine, page, line, when="2026-03-01"), "disputed", "2026-03-01")
    found = await recall(engine, SCOPE, "Where does Lena Fischer live?")
    assert {r.text: r.validity for r in found.results if r.text in lines} == dict.fromkeys(lines, "disputed")


async def test_context_never_shows_a_superseded_claim(engine):
    rng = random.Random(7)
    built = [await changed_fact(engine, rng, who, kind)
             for who, kind in zip(rng.sample(PEOPLE, 3), rng.sample(list(ATTRIBUTES), 3), strict=True)]
    found = await context(engine, SCOPE, max_tokens=4_000)
    shown = [r.text for r in found.results]
    for _, old_line, new_line, _ in built:
        assert new_line in shown and old_line not in shown, shown
    assert {r.validity for r in found.results} == {"current"}
