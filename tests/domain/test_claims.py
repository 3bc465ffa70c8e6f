"""The claim rules: grounding, recounted figures, attribution of written lines, confidence, verdicts.

Grounding is tested on generated memories (seeded, randomly composed names, places and numbers):
a line built only from a memory's own terms passes, and the same line with one name or number that
no cited memory holds fails, naming that term.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from domain.claims import (
    ClaimQuestion,
    KnownClaim,
    attribute_body,
    claim_key,
    confidence,
    evidence_of,
    is_summary,
    is_verbatim,
    quoted_by,
    scripted_score,
    supporting,
    unsupported_terms,
    verdict,
)
from domain.resolved_plan import ProposedClaim

FIRST = ["Lena", "Priya", "Tomasz", "Aiko", "Mateo", "Ruth", "Chef João", "Dr. Okafor", "Ingrid", "Kwame"]
PLACES = ["Uchi", "Café de Flore", "Barton Springs Pool", "Hôtel de Buci", "Contramar", "Jardim da Estrela"]
INVENTED = ["Bartholomew", "Zanzibar", "Quixote", "Vespertine", "Okonkwo", "Ravenholt"]
DAY0 = datetime(2026, 1, 5, 12, tzinfo=UTC)


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
    assert unsupported_terms(honest, evidence) == []
    assert quoted_by(honest, evidence) == [e.memory_id for e in evidence if e.memory_id == mid or (
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
    missing = unsupported_terms(lying, evidence)
    assert missing, lying


def test_the_page_own_names_and_function_words_ground_a_line() -> None:
    evidence = [evidence_of("m1", "Went swimming in the morning.", {}, DAY0)]
    assert unsupported_terms("A person who swims at Barton Springs.", evidence, ["Barton Springs Pool"]) == []
    assert unsupported_terms("A person who swims at Barton Springs.", evidence) == ["barton", "springs"]


def test_metadata_and_accents_count_as_evidence() -> None:
    evidence = [evidence_of("m1", "Dinner with chef joao.", {"place": {"city": "Austin, TX"}}, DAY0)]
    assert unsupported_terms("Dinner with Chef João in Austin.", evidence) == []


def test_figures_of_a_summary_line_are_recounted_from_its_memories() -> None:
    days = [DAY0, DAY0 + timedelta(days=2), DAY0 + timedelta(days=33)]
    evidence = [evidence_of(f"m{n}", f"Lunch with **Lena** number {n}.", {}, day) for n, day in enumerate(days)]
    assert unsupported_terms("- Visited 3 times, 2026-01-05 to 2026-02-07.", evidence) == []
    assert unsupported_terms("- By month: 2026-01 (2), 2026-02 (1).", evidence) == []
    assert unsupported_terms("- Most mentioned: **Lena** (3).", evidence) == []
    assert unsupported_terms("- Visited 4 times, 2026-01-05 to 2026-02-07.", evidence) == ["4"]
    assert unsupported_terms("- By month: 2026-01 (5).", evidence) == ["5"]
    assert unsupported_terms("- Latest: 2026-03-01.", evidence) == ["2026-03-01"]


def test_confidence_follows_corroboration_and_the_judge_thresholds() -> None:
    assert [confidence(n) for n in range(6)] == [0.0, 0.7, 0.8, 0.9, 1.0, 1.0]
    assert verdict(0.6, 0.6, 0.6) == "verified"
    assert verdict(0.2, 0.3, 0.3) == "rejected"
    assert verdict(0.5, 0.3, 0.4) == "unverified"


def test_the_scripted_judge_scores_from_the_evidence() -> None:
    good = ClaimQuestion(key="1", text="Eric waited for a table at Uchi.", page="Uchi",
                         memories=["Eric waited twenty minutes for a table at Uchi."])
    bad = ClaimQuestion(key="2", text="Orchestral submarines rehearse beneath glaciers.", page="Uchi",
                        memories=["Eric waited twenty minutes for a table at Uchi."])
    assert scripted_score(good).verdict == "verified"
    assert scripted_score(bad).verdict == "rejected"


def test_a_fold_of_lines_cites_the_union_of_the_memories_it_draws_on() -> None:
    sources = [evidence_of("m1", "Eric had tacos with Lena at Contramar.", {}, DAY0),
               evidence_of("m2", "Eric had mezcal with Mateo at Contramar.", {}, DAY0 + timedelta(days=3)),
               evidence_of("m3", "Eric swam at Barton Springs Pool.", {}, DAY0 + timedelta(days=5))]
    known = {claim_key("- 2026-01-05: Eric had tacos with Lena at Contramar."): KnownClaim(("m1",), "verified", "fact"),
             claim_key("- 2026-01-08: Eric had mezcal with Mateo at Contramar."): KnownClaim(("m2",), "verified", "fact")}
    claims = attribute_body("- Eric ate at Contramar with Lena and with Mateo.", sources, {}, known)
    assert [(c.kind, c.refs) for c in claims] == [("fact", ("m1", "m2"))]
    assert supporting("- Eric swam.", sources) == ["m1", "m2", "m3"]  # no term: every memory


def test_a_line_proposed_again_with_a_new_memory_unions_its_citations() -> None:
    line = "- Contramar serves tuna tostadas."
    sources = [evidence_of("m1", "Tuna tostadas at Contramar.", {}, DAY0),
               evidence_of("m2", "Contramar: the tuna tostadas again.", {}, DAY0 + timedelta(days=9))]
    claims = attribute_body(line, sources, {claim_key(line): ProposedClaim(refs=["m2"], status="verified")},
                            {claim_key(line): KnownClaim(("m1",), "verified", "fact")})
    assert claims[0].refs == ("m2", "m1") and confidence(len(claims[0].refs)) == 0.8


def test_a_computed_line_no_memory_vouches_for_is_derived_and_cites_the_section() -> None:
    sources = [evidence_of("m1", "Lunch at Uchi.", {}, DAY0)]
    claims = attribute_body("- Often together with: **Sam** (1).", sources, {}, {})
    assert [(c.kind, c.refs) for c in claims] == [("derived", ("m1",))]


def test_a_line_of_recounted_figures_only_is_a_summary() -> None:
    evidence = [evidence_of(f"m{n}", f"Coffee number {n}.", {}, DAY0 + timedelta(days=n)) for n in range(3)]
    assert is_summary("- 3 new memories.", evidence)
    assert is_summary("- 3 memories, 2026-01-05 to 2026-01-07.", evidence)
    assert not is_summary("- 4 new memories.", evidence)  # not a recount
    assert not is_summary("- Lena brought 3 coffees.", evidence)  # a name: the judge decides


def test_a_line_made_only_of_its_memories_words_needs_no_judge() -> None:
    evidence = [evidence_of("m1", "Eric waited twenty minutes for a table at Uchi.", {"kind": "restaurant"}, DAY0)]
    assert is_verbatim("- Waited for a table at Uchi. (2 times, on 2026-01-05)", evidence)
    assert is_verbatim("Restaurant.", evidence)
    assert not is_verbatim("- Eric did not wait at Uchi.", evidence)  # "did", "not": a new statement


def test_the_judge_prompt_lists_each_memory_once() -> None:
    from planners.claim_judge_prompt import build_claim_judge_prompt, parse_claim_judge_reply

    shared = "Eric waited twenty minutes for a table at Uchi."
    prompt = build_claim_judge_prompt([
        ClaimQuestion(key="a", text="Long wait at Uchi.", page="Uchi", memories=[shared]),
        ClaimQuestion(key="b", text="Uchi is busy.", page="Uchi", memories=[shared, "Uchi was packed."])])
    assert prompt.user.count(shared) == 1 and "cites: m1, m2" in prompt.user
    scores = parse_claim_judge_reply('{"scores": [{"id": "c2", "accuracy": 0.9, "relevance": 1, "specificity": 0.5},'
                                     ' {"id": "c9", "accuracy": 1, "relevance": 1, "specificity": 1},'
                                     ' {"id": "c1", "accuracy": 7, "relevance": 1, "specificity": 1}]}', prompt.keys)
    assert [(s.key, s.verdict) for s in scores] == [("b", "verified")]  # unknown id and out-of-range dropped


def test_a_sentence_opening_word_is_grammar_unless_a_name_of_several_words_starts_there() -> None:
    evidence = [evidence_of("m1", "Eric waited an hour at Uchi.", {}, DAY0)]
    assert unsupported_terms("Notes on Uchi. Waited an hour.", evidence) == []
    assert unsupported_terms("Chef Ignatius waited.", evidence) == ["chef", "ignatius"]
    assert "ignatius" in unsupported_terms("- 2026-01-05: Met Ignatius at Uchi.", evidence)
    # A one-word name opening a sentence is a name when it reads as one alone (a rare word, a first
    # name: domain/name_words.py), and is checked like any other; an ordinary word is grammar.
    assert unsupported_terms("Ignatius waited at Uchi.", evidence) == ["ignatius"]
    assert unsupported_terms("John waited at Uchi.", evidence) == ["john"]
    assert unsupported_terms("Eric waited at Uchi.", evidence) == []
    assert scripted_score(ClaimQuestion(key="1", text="Ignatius waited at Uchi.", page="Uchi",
                                        memories=["Eric waited an hour at Uchi."])).accuracy < 1


def test_a_line_joining_its_memories_words_labels_or_recounts_needs_no_judge() -> None:
    metadata = {"entities": [{"name": "Uchi", "kind": "restaurant"}, {"name": "Lena", "kind": "person"}],
                "place": {"city": "Austin", "address": "801 S Lamar Blvd, Austin, TX 78704, USA"}}
    evidence = [evidence_of("m1", "Lunch at Uchi with Lena.", metadata, DAY0),
                evidence_of("m2", "Uchi again, with Lena.", metadata, DAY0 + timedelta(days=1))]
    assert is_verbatim("Restaurant in Austin, TX.", evidence)  # "in": a joining word
    assert is_verbatim("A person.", evidence)
    assert is_verbatim("Address: 801 S Lamar Blvd, Austin, TX 78704, USA.", evidence)  # a metadata key labels it
    assert is_verbatim("- Often together with: **Lena** (2), **Uchi** (2).", evidence)  # 2: a recount
    assert not is_verbatim("- Often together with: **Lena** (5), **Uchi** (2).", evidence)  # 5 is no recount
    assert not is_verbatim("Phone: 801 S Lamar Blvd.", evidence)  # no such key
    assert not is_verbatim("Restaurant not in Austin.", evidence)  # a negation is a statement
    assert not is_verbatim("The a of.", evidence)  # joining words alone say nothing
def test_a_plan_line_apply_stores_made_safe_keeps_its_own_citations_and_a_count_of_folds_is_no_fact() -> None:
    from domain.claims import proposed_claims
    from domain.markup import safe_markdown
    from domain.plan import LineSources, NewPage, NewSection, Plan

    line = '- 2026-01-05: Took Beatrice to Elephant Room <img src=x onerror=alert(1)>.'
    sources = [evidence_of("m1", "Took Beatrice to Elephant Room <img src=x onerror=alert(1)>.", {}, DAY0),
               evidence_of("m2", "Took Dr. Whitfield to Elephant Room; live music <img src=x>.", {}, DAY0)]
    plan = Plan(pageUpdates=[], unresolvedMentions=[], promotions=[], newPages=[NewPage(
        type="entity", slug="elephant-room", title="Elephant Room", sections=[NewSection(
            slug="notes", body_md=line, line_sources=[LineSources(text=line, refs=["m1"], status="verified")])])])
    stored = safe_markdown(line)
    assert stored != line and claim_key(stored) != claim_key(line)  # the key apply meets is another
    known = {claim_key("- 2026-01-09: Took Dr. Whitfield to Elephant Room; live music."): KnownClaim(("m2",), "verified",
                                                                                                 "fact")}
    claims = attribute_body(stored, sources, proposed_claims(plan), known, ["Elephant Room"])
    assert [(c.kind, c.refs) for c in claims] == [("fact", ("m1",))]  # not the fold's m2, which lacks Beatrice
    fold = "- Earlier: 16 notes, the latest: Took Dr. Whitfield to Elephant Room; live music."
    assert attribute_body(fold, sources, {}, known, ["Elephant Room"])[0].kind == "derived"
