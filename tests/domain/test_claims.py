"""The grounding rule: a line's dates, numbers and names must be in what vouches for them.

Grounding is tested on generated memories (seeded, randomly composed names, places and numbers):
a line built only from a memory's own terms passes, and the same line with one name or number that
no cited memory holds fails, naming that term. The statuses (quoted, derived, verified, unverified)
and confidence are tested in test_claim_status.py.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from domain.attribution import KnownClaim, attribute_body, dated_line_sources
from domain.claim_text import claim_key
from domain.evidence import evidence_of
from domain.grounding import APPLY_RULE, GroundingRule, supporting, ungrounded
from domain.resolved_plan import ProposedClaim

FIRST = ["Lena", "Priya", "Tomasz", "Aiko", "Mateo", "Ruth", "Chef João", "Dr. Okafor", "Ingrid", "Kwame"]
PLACES = ["Uchi", "Café de Flore", "Barton Springs Pool", "Hôtel de Buci", "Contramar", "Jardim da Estrela"]
INVENTED = ["Bartholomew", "Zanzibar", "Quixote", "Vespertine", "Okonkwo", "Ravenholt"]
DAY0 = datetime(2026, 1, 5, 12, tzinfo=UTC)


def unsupported(line: str, evidence, page_names=()) -> list[str]:
    return ungrounded(line, evidence, page_names, APPLY_RULE)


def _memory(rng: random.Random, n: int) -> tuple[str, str, datetime]:
    person, place = rng.choice(FIRST), rng.choice(PLACES)
    minutes = rng.randint(2, 95)
    text = f"Eric met {person} at {place} and waited {minutes} minutes for a table."
    return f"m{n}", text, DAY0 + timedelta(days=rng.randint(0, 300))


@pytest.mark.parametrize("seed", range(40))
def test_a_line_from_its_memory_passes_and_one_invented_term_fails(seed: int) -> None:
    rng = random.Random(seed)
    memories = [_memory(rng, n) for n in range(rng.randint(1, 4))]
    evidence = [evidence_of(mid, text, {}, when) for mid, text, when in memories]
    mid, text, when = rng.choice(memories)
    honest = f"- {when.date().isoformat()}: {text}"
    assert unsupported(honest, evidence) == []
    assert dated_line_sources(honest, evidence) == [e.memory_id for e in evidence if e.memory_id == mid or (
        when.date().isoformat() in e.dates and claim_key(text) in e.text)]
    invented = rng.choice(INVENTED)
    while any(invented.lower() in t.lower() for _, t, _ in memories):
        invented = rng.choice(INVENTED)
    lying = rng.choice([
        honest.replace(" and waited", f" and {invented} and waited"),
        f"- Eric met {invented} for the {rng.randint(2, 9)} o'clock table.",
        f"- Chef {invented} joined Eric for the table.",
        honest.replace(" minutes", "7 minutes"),
    ])
    missing = unsupported(lying, evidence)
    assert missing, lying


def test_the_page_own_names_and_function_words_ground_a_line() -> None:
    evidence = [evidence_of("m1", "Went swimming in the morning.", {}, DAY0)]
    assert unsupported("A person who swims at Barton Springs.", evidence, ["Barton Springs Pool"]) == []
    assert unsupported("A person who swims at Barton Springs.", evidence) == ["barton", "springs"]
    # a rule that does not count the page's names says so
    no_names = GroundingRule(caller="test", page_names=False)
    assert ungrounded("A person who swims at Barton Springs.", evidence, ["Barton Springs Pool"], no_names) \
        == ["barton", "springs"]


def test_metadata_and_accents_count_as_evidence() -> None:
    evidence = [evidence_of("m1", "Dinner with chef joao.", {"place": {"city": "Austin, TX"}}, DAY0)]
    assert unsupported("Dinner with Chef João in Austin.", evidence) == []


def test_figures_of_a_summary_line_are_recounted_from_its_memories() -> None:
    days = [DAY0, DAY0 + timedelta(days=2), DAY0 + timedelta(days=33)]
    evidence = [evidence_of(f"m{n}", f"Lunch with **Lena** number {n}.", {}, day) for n, day in enumerate(days)]
    assert unsupported("- Visited 3 times, 2026-01-05 to 2026-02-07.", evidence) == []
    assert unsupported("- By month: 2026-01 (2), 2026-02 (1).", evidence) == []
    assert unsupported("- Most mentioned: **Lena** (3).", evidence) == []
    assert unsupported("- Visited 4 times, 2026-01-05 to 2026-02-07.", evidence) == ["4"]
    assert unsupported("- By month: 2026-01 (5).", evidence) == ["5"]
    assert unsupported("- Latest: 2026-03-01.", evidence) == ["2026-03-01"]
    no_recounts = GroundingRule(caller="test", recounts=False)
    assert ungrounded("- Visited 3 times, 2026-01-05 to 2026-02-07.", evidence, (), no_recounts) == ["3"]


def test_a_count_of_lines_folded_passes_only_under_the_writers_allowance() -> None:
    evidence = [evidence_of("m1", "Lunch at Uchi.", {}, DAY0)]
    line = "- Earlier: 6 notes on lunch."
    assert unsupported(line, evidence) == ["6"]
    assert ungrounded(line, evidence, (), GroundingRule(caller="writer", lines_shown=6)) == []
    assert ungrounded(line, evidence, (), GroundingRule(caller="writer", lines_shown=5)) == ["6"]


def test_a_fold_of_lines_cites_the_union_of_the_memories_it_draws_on() -> None:
    sources = [evidence_of("m1", "Eric had tacos with Lena at Contramar.", {}, DAY0),
               evidence_of("m2", "Eric had mezcal with Mateo at Contramar.", {}, DAY0 + timedelta(days=3)),
               evidence_of("m3", "Eric swam at Barton Springs Pool.", {}, DAY0 + timedelta(days=5))]
    known = {claim_key("- 2026-01-05: Eric had tacos with Lena at Contramar."): KnownClaim(("m1",), "quoted", "fact"),
             claim_key("- 2026-01-08: Eric had mezcal with Mateo at Contramar."): KnownClaim(("m2",), "quoted", "fact")}
    claims = attribute_body("- Eric ate at Contramar with Lena and with Mateo.", sources, {}, known)
    assert [(c.kind, c.refs, c.status) for c in claims] == [("fact", ("m1", "m2"), "unverified")]
    assert supporting("- Eric swam.", sources) == ["m1", "m2", "m3"]  # no term: every memory


def test_a_line_proposed_again_with_a_new_memory_unions_its_citations() -> None:
    line = "- Contramar serves tuna tostadas."
    sources = [evidence_of("m1", "Tuna tostadas at Contramar.", {}, DAY0),
               evidence_of("m2", "Contramar: the tuna tostadas again.", {}, DAY0 + timedelta(days=9))]
    claims = attribute_body(line, sources, {claim_key(line): ProposedClaim(refs=["m2"], judged_by=["m2"])},
                            {claim_key(line): KnownClaim(("m1",), "verified", "fact", judged_by=("m1",))})
    assert claims[0].refs == ("m2", "m1") and claims[0].status == "verified" and claims[0].support.count == 2


def test_a_sentence_opening_word_is_grammar_unless_a_name_of_several_words_starts_there() -> None:
    evidence = [evidence_of("m1", "Eric waited an hour at Uchi.", {}, DAY0)]
    assert unsupported("Notes on Uchi. Waited an hour.", evidence) == []
    assert unsupported("Chef Ignatius waited.", evidence) == ["chef", "ignatius"]
    assert "ignatius" in unsupported("- 2026-01-05: Met Ignatius at Uchi.", evidence)
    # A one-word name opening a sentence is a name when it reads as one alone (a rare word, a first
    # name: domain/name_words.py), and is checked like any other; an ordinary word is grammar.
    assert unsupported("Ignatius waited at Uchi.", evidence) == ["ignatius"]
    assert unsupported("John waited at Uchi.", evidence) == ["john"]
    assert unsupported("Eric waited at Uchi.", evidence) == []


def test_a_plan_line_apply_stores_made_safe_keeps_its_own_citations_and_a_count_of_folds_is_no_fact() -> None:
    from domain.markup import safe_markdown
    from domain.plan import LineSources, NewPage, NewSection, Plan
    from domain.plan_claims import proposed_claims

    line = '- 2026-01-05: Took Beatrice to Elephant Room <img src=x onerror=alert(1)>.'
    sources = [evidence_of("m1", "Took Beatrice to Elephant Room <img src=x onerror=alert(1)>.", {}, DAY0),
               evidence_of("m2", "Took Dr. Whitfield to Elephant Room; live music <img src=x>.", {}, DAY0)]
    plan = Plan(pageUpdates=[], unresolvedMentions=[], promotions=[], newPages=[NewPage(
        type="entity", slug="elephant-room", title="Elephant Room", sections=[NewSection(
            slug="notes", body_md=line, line_sources=[LineSources(text=line, refs=["m1"], status="quoted")])])])
    stored = safe_markdown(line)
    assert stored != line and claim_key(stored) != claim_key(line)  # the key apply meets is another
    known = {claim_key("- 2026-01-09: Took Dr. Whitfield to Elephant Room; live music."): KnownClaim(("m2",), "quoted",
                                                                                                 "fact")}
    claims = attribute_body(stored, sources, proposed_claims(plan), known, ["Elephant Room"])
    assert [(c.kind, c.refs) for c in claims] == [("fact", ("m1",))]  # not the fold's m2, which lacks Beatrice
    # A count of folded lines is no fact of the lines it folds, nor a recount: nothing checked it.
    fold = "- Earlier: 16 notes, the latest: Took Dr. Whitfield to Elephant Room; live music."
    [folded] = attribute_body(fold, sources, {}, known, ["Elephant Room"])
    assert (folded.status, folded.support.count) == ("unverified", 0)
