"""Facts that change: which lines state a single-valued attribute, and which claim holds when."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from domain.fact_validity import DatedClaim, holds_at, standings
from domain.facts import fact_of, replaces

# Each attribute kind: templates stating a value of it ({h}: the holder, {v}: the value), and values.
KINDS = {
    "residence": (["{h} lives in {v}.", "{h} moved to {v}.", "{h} relocated to {v} last week.",
                   "{h} moved from Lisbon to {v}.", "{h} is now based in {v}."],
                  ["Austin", "Denver", "New York", "Porto", "Kyoto"]),
    "employer": (["{h} works at {v}.", "{h} joined {v} as an engineer.", "{h} started at {v}.",
                  "{h} took a new job at {v}."],
                 ["Acme", "Globex", "Initech", "Umbrella Labs"]),
    "role": (["{h} works as {v}.", "{h} was promoted to {v}.", "{h} became {v}."],
             ["team lead", "director", "staff engineer"]),
    "schedule": (["{h} moved to {v}.", "{h} is now at {v}.", "{h} was rescheduled to {v}.",
                  "{h} starts at {v}."],
                 ["2pm", "3pm", "9:30 am", "Tuesdays"]),
    "status": (["{h} is on hold.", "{h} is {v}.", "{h} was marked as {v}.", "{h} status changed to {v}."],
               ["done", "cancelled", "active", "blocked"]),
    "partner": (["{h} got married to {v}.", "{h} is dating {v}."], ["Sam", "Robin"]),
}
HOLDERS = {"schedule": ["The standup", "The weekly sync"], "status": ["The project", "The migration"]}
PEOPLE = ["Alice", "Bruno Costa", "She"]


def _line(template: str, holder: str, value: str, day: str | None = None) -> str:
    text = template.format(h=holder, v=value)
    return f"- {day}: {text}" if day else text


@pytest.mark.parametrize("seed", range(12))
def test_generated_lines_of_one_attribute_replace_each_other_and_other_attributes_do_not(seed: int) -> None:
    rng = random.Random(seed)
    kind = rng.choice(sorted(KINDS))
    templates, values = KINDS[kind]
    holder = rng.choice(HOLDERS.get(kind, PEOPLE))
    first, second = rng.sample(values, 2)
    old_template, new_template = rng.choice(templates), rng.choice(templates)
    if "on hold" in old_template:
        first = "on hold"
    if "on hold" in new_template:
        second = "on hold"
    if first == second:
        return
    old = _line(old_template, holder, first, "2026-01-05")
    new = _line(new_template, holder, second, "2026-06-01")
    fact = fact_of(new)
    assert fact is not None and fact.attribute == kind, (new, fact)
    assert replaces(new, old, [holder]) and replaces(old, new, [holder])
    # the same value said again corroborates, it does not replace
    assert not replaces(_line(old_template, holder, first, "2026-03-01"), old, [holder])
    # another attribute of the same holder never replaces this one
    other_kind = rng.choice([k for k in sorted(KINDS) if k != kind and k not in HOLDERS and kind not in HOLDERS])\
        if kind not in HOLDERS else None
    if other_kind is not None:
        other_templates, other_values = KINDS[other_kind]
        other = _line(rng.choice(other_templates), holder, rng.choice(other_values))
        assert not replaces(other, new, [holder])
    # another holder's value never replaces this one
    stranger = "Zed Quill" if kind not in HOLDERS else "The offsite"
    assert not replaces(_line(new_template, stranger, second), old, [holder])


@pytest.mark.parametrize("line", [
    "- 2026-03-01: Lunch at Franklin Barbecue with Lena.",
    "Alice loves Denver in the spring.",
    "- 3 memories, 2026-01-05 to 2026-06-01.",
    "Visited 4 times.",
    "The standup was fun.",
])
def test_lines_that_state_no_single_valued_fact(line: str) -> None:
    assert fact_of(line) is None


def _at(day: int) -> datetime:
    return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=day)


@pytest.mark.parametrize("seed", range(10))
def test_the_latest_claim_holds_whatever_order_the_marks_and_claims_come_in(seed: int) -> None:
    rng = random.Random(seed)
    days = rng.sample(range(1, 300), rng.randint(2, 5))
    claims = [DatedClaim(id=f"c{n}", key=f"k{n}", valid_from=_at(day)) for n, day in enumerate(days)]
    marks = [(a.key, b.key) for a, b in zip(claims, claims[1:], strict=False)]
    rng.shuffle(claims)
    rng.shuffle(marks)
    result = standings(claims, [tuple(reversed(m)) if rng.random() < 0.5 else m for m in marks])
    ordered = sorted(claims, key=lambda c: c.valid_from)
    assert result[ordered[-1].id].validity == "current"
    for older, newer in zip(ordered, ordered[1:], strict=False):
        assert result[older.id].validity == "superseded"
        assert result[older.id].valid_to == newer.valid_from and result[older.id].superseded_by == newer.id
        # as of a moment between the two, the older one held and the newer had not begun
        moment = older.valid_from + (newer.valid_from - older.valid_from) / 2
        assert holds_at(result[older.id].intervals, moment)
        assert not holds_at(result[newer.id].intervals, moment)


def test_conflicting_claims_of_one_moment_are_disputed_and_unmarked_claims_stay_current() -> None:
    claims = [DatedClaim("a", "ka", _at(10)), DatedClaim("b", "kb", _at(10)), DatedClaim("c", "kc", _at(3)),
              DatedClaim("d", "kd", _at(1))]
    result = standings(claims, [("ka", "kb"), ("kb", "kc")])
    assert result["a"].validity == result["b"].validity == "disputed"
    assert result["c"].validity == "superseded" and result["c"].valid_to == _at(10)
    assert result["d"].validity == "current"  # no mark: not part of any fact that changed
    undated = standings([DatedClaim("x", "kx", None), DatedClaim("y", "ky", _at(2))], [("kx", "ky")])
    assert undated["x"].validity == "disputed" and undated["y"].validity == "disputed"


def test_the_compact_contract_reads_supersede_pairs_and_drops_what_it_cannot_read() -> None:
    from planners.compact_plan import CompactPlan, to_plan

    compact = CompactPlan.model_validate({"updates": [{"page": "p1", "sections": [{
        "slug": "notes", "lines": ["@m1", "- Alice now works at Globex."],
        "supersede": [["@m1", "f1"], ["- Alice now works at Globex.", "f2"], ["@m1", "f9"], ["nope", "f1"],
                      "not a pair", ["@m1"], [3, 4]]}]}], "new_pages": [], "held": [], "promotions": []})
    plan, _ = to_plan(compact, {"m1": "- 2026-06-01: Alice moved to Denver."}, {"p1": "entity/alice"}, {},
                      facts={"f1": "- 2026-01-05: Alice lives in Austin.", "f2": "- 2026-01-05: Alice works at Acme."})
    marks = {line.text: line.supersedes for line in plan.pageUpdates[0].sections[0].line_sources}
    assert marks == {"- 2026-06-01: Alice moved to Denver.": ["- 2026-01-05: Alice lives in Austin."],
                     "- Alice now works at Globex.": ["- 2026-01-05: Alice works at Acme."]}


@pytest.mark.parametrize("seed", range(8))
def test_the_scripted_planner_marks_the_shown_fact_a_new_memory_replaces_whatever_their_dates(seed: int) -> None:
    import uuid

    from domain.context import CandidateFact, CandidatePage, CandidateSection, MemoryRecord, PlannerContext
    from planners.scripted.leaf_plan import scripted_plan

    rng = random.Random(seed)
    kind = rng.choice(["residence", "employer", "role", "partner"])
    templates, values = KINDS[kind]
    old_value, new_value = rng.sample(values, 2)
    name = rng.choice(["Alice Moreau", "Bruno Costa"])
    stored = _line(rng.choice(templates), name, old_value, "2026-03-01")
    # the new memory happened before or after the stored fact: the mark is the same either way
    day = rng.choice([datetime(2025, 11, 2, tzinfo=UTC), datetime(2026, 8, 9, tzinfo=UTC)])
    content = _line(rng.choice(templates), name, new_value)
    page = CandidatePage(id=uuid.uuid4(), type="entity", slug=name.lower().replace(" ", "-"), title=name,
                         aliases=[name.lower()], sections=[CandidateSection(slug="notes", heading="Notes", body_md="")],
                         facts=[CandidateFact(text=stored, since=datetime(2026, 3, 1, tzinfo=UTC)),
                                CandidateFact(text=f"- 2026-02-01: {name} likes tea.")])
    memory = MemoryRecord(id=uuid.uuid4(), content=content, created_at=day, updated_at=day,
                          metadata={"entities": [{"name": name, "type": "entity", "kind": "person"}]})
    plan = scripted_plan(PlannerContext(tenant_id="t", owner_id="o", memories=[memory], candidate_pages=[page],
                                        open_mentions=[]))
    [update] = plan.pageUpdates
    marked = {line.text: line.supersedes for section in update.sections for line in section.line_sources
              if line.supersedes}
    assert marked == {f"- {day.date().isoformat()}: {content}": [stored]}, (content, stored, marked)
