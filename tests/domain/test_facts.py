"""Facts that change: which lines the offline rules read as stating (or ending) one value of an
attribute, which pairs they never confuse, and which claim holds when."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from domain.context import CandidateFact, CandidatePage, CandidateSection, MemoryRecord, PlannerContext
from domain.fact_rules import ATTRIBUTES, FAVOURITE_MUST_NOT, GENERIC_MUST_NOT
from domain.fact_validity import DatedClaim, holds_at, standings
from domain.facts import confusable, fact_of, replaces, rivals
from evals.fact_changes import generate
from planners.scripted.leaf_plan import scripted_plan

CAROLINE = ["Caroline"]

# ------------------------------------------------------------------ the probes


@pytest.mark.parametrize(("newer", "older"), [
    ("Caroline joined a support group.", "Caroline joined a pottery class."),
    ("Caroline became a mentor.", "Caroline became a volunteer."),
])
def test_a_shared_verb_alone_never_retires_a_true_fact(newer: str, older: str) -> None:
    assert not rivals(newer, older, CAROLINE)
    # kept both current, and named as a pair to look at
    assert confusable(newer, older, CAROLINE)


@pytest.mark.parametrize(("newer", "older"), [
    ("Caroline no longer lives in Denver.", "Caroline lives in Denver."),
    ("Caroline quit her job at Acme.", "Caroline works at Acme."),
    ("Caroline left Acme for Globex.", "Caroline works at Acme."),
    ("Caroline's home is in Boston now.", "Caroline lives in Denver."),
    ("Caroline moved out of Denver.", "Caroline lives in Denver."),
    ("Her relationship with Sam is over.", "Caroline is dating Sam."),
])
def test_negated_ending_and_possessive_forms_replace_the_value_they_name(newer: str, older: str) -> None:
    assert replaces(f"- 2026-05-01: {newer}", f"- 2025-01-01: {older}", CAROLINE), (fact_of(newer), fact_of(older))
    # the holder of "no longer lives in" is Caroline, not "caroline no longer"
    fact = fact_of(newer)
    assert fact is not None and fact.holder in ("caroline", "her")
    if fact.value is None:  # an ending replaces only the value it names
        other = older.replace("Denver", "Austin").replace("Acme", "Initech").replace("Sam", "Noah")
        assert not replaces(newer, other, CAROLINE)


def test_a_status_is_a_fact() -> None:
    fact = fact_of("The project is done.")
    assert fact is not None and (fact.attribute, fact.value) == ("status", "done")
    assert replaces("The project is done.", "The project is on hold.", ["The project"])
    assert not replaces("The project is done.", "The project is done.", ["The project"])


def test_a_value_said_again_after_an_ending_replaces_the_ending() -> None:
    assert replaces("Caroline lives in Denver.", "Caroline no longer lives in Denver.", CAROLINE)
    assert not replaces("Caroline lives in Boston.", "Caroline no longer lives in Denver.", CAROLINE)


# ------------------------------------------------------------------ the rules' own must-not pairs

MUST_NOT = [pair for rule in ATTRIBUTES for pair in rule.must_not] + list(FAVOURITE_MUST_NOT) + list(GENERIC_MUST_NOT)


def test_every_attribute_has_must_not_pairs_beside_it() -> None:
    assert all(rule.must_not for rule in ATTRIBUTES), [rule.name for rule in ATTRIBUTES if not rule.must_not]


@pytest.mark.parametrize(("line", "other"), MUST_NOT)
def test_must_not_pairs_never_replace_each_other(line: str, other: str) -> None:
    assert not rivals(f"- 2026-02-01: {line}", f"- 2025-02-01: {other}", CAROLINE)


# ------------------------------------------------------------------ generated families


@pytest.mark.parametrize("seed", [7001, 7002, 7003])
def test_generated_lives_offline_catch_changes_and_retire_no_true_fact(seed: int) -> None:
    """The eval's generator (which shares no phrasing with the rules): consecutive values of one
    attribute are rivals; accumulating facts and a changing value beside them never are."""
    lives = generate(seed, people=10)
    changes = caught = 0
    for chain in lives.chains:
        for older, newer in zip(chain.statements, chain.statements[1:], strict=False):
            if older.value is not None and older.value == newer.value:
                continue
            changes += 1
            caught += rivals(newer.text, older.text, [chain.holder])
    retired = [(a.text, b.text) for a, b in lives.must_not_pairs() if rivals(b.text, a.text, [a.holder])]
    assert retired == []
    assert caught / changes >= 0.8, (caught, changes)


@pytest.mark.parametrize("seed", range(6))
def test_composed_holders_and_values_never_cross(seed: int) -> None:
    """A stated value of one holder never replaces another holder's, nor another attribute's."""
    rng = random.Random(seed)
    holder, stranger = rng.sample(["Alice Moreau", "Bruno Costa", "Chen Wei", "Dara Njoku"], 2)
    lines = {"residence": f"{holder} lives in {rng.choice(['Austin', 'Porto', 'Kyoto'])}.",
             "employer": f"{holder} works at {rng.choice(['Acme', 'Globex', 'Initech'])}.",
             "partner": f"{holder} is married to {rng.choice(['Sam', 'Robin'])}.",
             "phone": f"{holder}'s phone number is 555-01{rng.randint(10, 99)}."}
    kind, other_kind = rng.sample(sorted(lines), 2)
    assert not rivals(lines[kind], lines[other_kind], [holder])
    assert not rivals(lines[kind].replace(holder, stranger), lines[kind].replace("5", "6").replace("Austin", "Lima")
                      .replace("Porto", "Lima").replace("Kyoto", "Lima").replace("Acme", "Hooli")
                      .replace("Globex", "Hooli").replace("Initech", "Hooli").replace("Sam", "Jo")
                      .replace("Robin", "Jo"), [holder])


@pytest.mark.parametrize("line", [
    "- 2026-03-01: Lunch at Franklin Barbecue with Lena.",
    "Alice loves Denver in the spring.",
    "- 3 memories, 2026-01-05 to 2026-06-01.",
    "Visited 4 times.",
    "The standup was fun.",
    "Lunch with Sam, who lives in Denver.",
])
def test_lines_that_state_no_single_valued_fact(line: str) -> None:
    assert fact_of(line) is None


# ------------------------------------------------------------------ which claim holds when


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
    ordered = sorted(claims, key=lambda c: c.valid_from or _at(0))
    assert result[ordered[-1].id].validity == "current"
    for older, newer in zip(ordered, ordered[1:], strict=False):
        assert result[older.id].validity == "superseded"
        assert result[older.id].valid_to == newer.valid_from and result[older.id].superseded_by == newer.id
        moment = (older.valid_from or _at(0)) + ((newer.valid_from or _at(0)) - (older.valid_from or _at(0))) / 2
        assert holds_at(result[older.id].intervals, moment)
        assert not holds_at(result[newer.id].intervals, moment)


@pytest.mark.parametrize("seed", range(12))
def test_every_assertion_opens_an_interval_and_as_of_agrees_at_every_date(seed: int) -> None:
    """Values asserted at random moments, some of them again after another replaced them: at every
    moment the value asserted last by then is the one that holds, and only it."""
    rng = random.Random(seed)
    values = [f"k{n}" for n in range(rng.randint(2, 4))]
    days = sorted(rng.sample(range(1, 400), rng.randint(3, 8)))
    said = [(day, rng.choice(values)) for day in days]
    claims = [DatedClaim(id=f"id-{key}", key=key, valid_from=min(_at(d) for d, k in said if k == key),
                         asserted=tuple(_at(d) for d, k in said if k == key)) for key in {k for _, k in said}]
    keys = [claim.key for claim in claims]
    result = standings(claims, list(zip(keys, keys[1:], strict=False)))
    for day in range(0, 401):
        moment = _at(day) + timedelta(hours=1)
        expected = next((k for d, k in reversed(said) if d <= day), None)
        holding = {c.key for c in claims if holds_at(result[c.id].intervals, moment)}
        assert holding == ({expected} if expected else set()), (day, said, result)
    last = said[-1][1]
    assert result[f"id-{last}"].validity == "current"
    assert all(result[c.id].validity == "superseded" for c in claims if c.key != last)


def test_the_value_that_comes_back_holds_again() -> None:
    denver = DatedClaim("d", "denver", _at(0), (_at(0), _at(800)))
    boston = DatedClaim("b", "boston", _at(400), (_at(400),))
    result = standings([denver, boston], [("boston", "denver")])
    assert result["d"].validity == "current" and result["d"].intervals == ((_at(0), _at(400)), (_at(800), None))
    assert result["b"].validity == "superseded" and result["b"].valid_to == _at(800)


def test_conflicting_claims_of_one_moment_are_disputed_and_unmarked_claims_stay_current() -> None:
    claims = [DatedClaim("a", "ka", _at(10)), DatedClaim("b", "kb", _at(10)), DatedClaim("c", "kc", _at(3)),
              DatedClaim("d", "kd", _at(1))]
    result = standings(claims, [("ka", "kb"), ("kb", "kc")])
    assert result["a"].validity == result["b"].validity == "disputed"
    assert result["c"].validity == "superseded" and result["c"].valid_to == _at(10)
    assert result["d"].validity == "current"  # no mark: not part of any fact that changed
    undated = standings([DatedClaim("x", "kx", None), DatedClaim("y", "ky", _at(2))], [("kx", "ky")])
    assert undated["x"].validity == "disputed" and undated["y"].validity == "disputed"


# ------------------------------------------------------------------ the contract and the scripted planner


def test_the_compact_contract_reads_supersede_pairs_both_ways_and_drops_what_it_cannot_read() -> None:
    from planners.compact_plan import CompactPlan, to_plan

    compact = CompactPlan.model_validate({"updates": [{"page": "p1", "sections": [{
        "slug": "notes", "lines": ["@m1", "- Alice now works at Globex.", "@m2"],
        "supersede": [["@m1", "f1", "moved"], ["- Alice now works at Globex.", "f2"], ["f3", "@m2", "older"],
                      ["@m1", "f9"], ["nope", "f1"], "not a pair", ["@m1"], [3, 4]]}]}],
        "new_pages": [], "held": [], "promotions": []})
    plan, _ = to_plan(compact, {"m1": "- 2026-06-01: Alice moved to Denver.", "m2": "- 2024-01-01: Alice is vegan."},
                      {"p1": "entity/alice"}, {},
                      facts={"f1": "- 2026-01-05: Alice lives in Austin.", "f2": "- 2026-01-05: Alice works at Acme.",
                             "f3": "- 2025-01-05: Alice is no longer vegan."})
    lines = {line.text: line for line in plan.pageUpdates[0].sections[0].line_sources}
    assert lines["- 2026-06-01: Alice moved to Denver."].supersedes == ["- 2026-01-05: Alice lives in Austin."]
    assert lines["- 2026-06-01: Alice moved to Denver."].reasons == {"- 2026-01-05: Alice lives in Austin.": "moved"}
    assert lines["- Alice now works at Globex."].supersedes == ["- 2026-01-05: Alice works at Acme."]
    assert lines["- 2024-01-01: Alice is vegan."].superseded_by == ["- 2025-01-05: Alice is no longer vegan."]


@pytest.mark.parametrize("seed", range(8))
def test_the_scripted_planner_marks_in_the_direction_of_the_dates(seed: int) -> None:
    rng = random.Random(seed)
    name = rng.choice(["Alice Moreau", "Bruno Costa"])
    stored_text, content = rng.choice([
        (f"{name} lives in Austin.", f"{name} moved to Denver."),
        (f"{name} works at Acme.", f"{name} left Acme for Globex."),
        (f"{name} is dating Sam.", f"{name} broke up with Sam."),
        (f"{name} works at Acme.", f"{name} no longer works at Acme."),
    ])
    stored = f"- 2026-03-01: {stored_text}"
    day = rng.choice([datetime(2025, 11, 2, tzinfo=UTC), datetime(2026, 8, 9, tzinfo=UTC)])
    page = CandidatePage(id=uuid.uuid4(), type="entity", slug=name.lower().replace(" ", "-"), title=name,
                         aliases=[name.lower()], sections=[CandidateSection(slug="notes", heading="Notes", body_md="")],
                         facts=[CandidateFact(text=stored, since=datetime(2026, 3, 1, tzinfo=UTC)),
                                CandidateFact(text=f"- 2026-02-01: {name} likes tea.")])
    memory = MemoryRecord(id=uuid.uuid4(), content=content, created_at=day, updated_at=day,
                          metadata={"entities": [{"name": name, "type": "entity", "kind": "person"}]})
    plan = scripted_plan(PlannerContext(tenant_id="t", owner_id="o", memories=[memory], candidate_pages=[page],
                                        open_mentions=[]))
    [update] = plan.pageUpdates
    line = f"- {day.date().isoformat()}: {content}"
    marked = {entry.text: (entry.supersedes, entry.superseded_by) for section in update.sections
              for entry in section.line_sources if entry.supersedes or entry.superseded_by}
    if day.year == 2026:  # the new memory is the newer: it replaces the stored line
        assert marked == {line: ([stored], [])}, marked
    elif "moved to" in content:  # the stored line is the newer: it replaces the new memory's line
        assert marked == {line: ([], [stored])}, marked
    else:  # an ending dated before the value it ends is no replacement either way
        assert marked in ({}, {line: ([], [stored])}), marked


def test_a_summary_line_and_its_dated_note_are_one_assertion_not_rival_values() -> None:
    """A page's overview line and the dated note stating the same value, both marked as replacing the
    older value, hold together: the same statement at the same moment is no dispute."""
    old, new = datetime(2020, 1, 11, tzinfo=UTC), datetime(2020, 7, 15, tzinfo=UTC)
    claims = [DatedClaim("hawks", "2020-01-11 she plays for the hawks", old, (old,)),
              DatedClaim("lead", "caroline reyes now plays for the comets", new, (new,)),
              DatedClaim("note", "2020-07-15 caroline reyes now plays for the comets", new, (new,))]
    marks = [("caroline reyes now plays for the comets", "2020-01-11 she plays for the hawks"),
             ("2020-07-15 caroline reyes now plays for the comets", "2020-01-11 she plays for the hawks")]
    found = standings(claims, marks)
    assert (found["lead"].validity, found["note"].validity, found["hawks"].validity) == (
        "current", "current", "superseded")


@pytest.mark.parametrize("seed", range(4))
def test_a_rule_is_skipped_by_its_anchor_only_when_it_could_not_have_matched(seed: int) -> None:
    """Every rule's phrasings composed with holders, adverbs, values and endings at random, plus the
    sample's lines: a rule whose anchor words are absent never matches, so reading a line with the
    anchors finds what trying every rule finds."""
    from dataclasses import replace

    import domain.facts as facts
    from sample.corpus import generate_sample

    rng = random.Random(seed)
    holders = ["Caroline", "She", "My sister", "Dr. Kim", "the book club", "Mel and Jon", "He", "Our team"]
    values = ["Denver", "vegan", "3pm", "Globex Corp", "a nurse", "555-123-4567", "blue", "42", "done"]
    lines = [row["content"] for row in generate_sample(300, seed=seed)]
    for rule in ATTRIBUTES:
        for phrasing in (*rule.verbs, *rule.changes, *rule.endings):
            filled = (phrasing.replace("{p}", rng.choice(["her", "his", "their", "my"]))
                      .replace("{old}", rng.choice(values)).replace("{v}", rng.choice(values)))
            lines.append(f"{rng.choice(holders)} {rng.choice(['', 'now ', 'no longer ', 'recently ', 'has '])}"
                         f"{filled} {rng.choice(values)}{rng.choice(['.', ' now.', ' since May.', ', and more.'])}")
        for noun in rule.nouns:
            lines.append(f"{rng.choice(holders)}'s {rng.choice(['', 'new '])}{noun} is {rng.choice(values)}.")
    unanchored = (tuple(replace(p, anchor=None) for p in facts._PATTERNS),
                  tuple(replace(p, anchor=None) for p in facts._GENERIC))
    statements = [facts.statement(line) for line in lines]
    with_anchors = [facts._fact.__wrapped__(text) for text in statements]
    anchored = facts._PATTERNS, facts._GENERIC
    facts._PATTERNS, facts._GENERIC = unanchored
    try:
        every_rule = [facts._fact.__wrapped__(text) for text in statements]
    finally:
        facts._PATTERNS, facts._GENERIC = anchored

    assert sum(fact is not None for fact in every_rule) >= len(ATTRIBUTES)  # the lines state facts
    assert with_anchors == every_rule
