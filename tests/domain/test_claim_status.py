"""Statuses that name the check, and a confidence that rests on the memories that each support a line.

The quote rule is tested on families of generated memories (seeded: random people, places, and
sentences built to drop something that matters: a negation, the subject of a clause, a "with X"
that changes who acted, a possessor, a condition, a reported speaker, an antecedent) against an
oracle of our own: a line is quoted exactly when its words, case and punctuation aside, are whole
consecutive sentences of one cited memory (one opening with a pronoun only at the memory's start),
and its date prefix, if any, is a day of that memory.
"""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta

import pytest

from domain.attribution import KnownClaim, attribute_body
from domain.claim_checks import check_line, derived_holds, quoted_in
from domain.claim_judge import ClaimQuestion, JudgedMemory
from domain.claim_text import claim_key
from domain.claims import STATUS_MEANINGS, STATUSES, Support, confidence, status_legend, status_of
from domain.evidence import evidence_of
from domain.grounding import GATE_RULE
from domain.resolved_plan import ProposedClaim

PEOPLE = ["Caroline", "Melanie", "Lena", "Tomasz", "Aiko", "Mateo", "Ruth", "Ingrid", "Kwame", "Priya"]
PLACES = ["the LGBTQ support group", "the pottery class", "Contramar", "the climbing gym", "Barton Springs Pool",
          "the farmers market", "the lake house"]
ACTS = ["went to", "painted a mural at", "volunteered at", "left early from", "brought cookies to"]
DAY0 = datetime(2026, 1, 5, 12, tzinfo=UTC)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def family(rng: random.Random) -> tuple[list[str], list[str]]:
    """One memory's sentences, and lines that drop what matters from it (each never a quote)."""
    a, b = rng.sample(PEOPLE, 2)
    place, act = rng.choice(PLACES), rng.choice(ACTS)
    kind = rng.randrange(7)
    if kind == 0:  # a "with X" that changes who acted
        sentences = [f"{a} went with {b} to {place}."]
        traps = [f"{b} went to {place}.", f"{b} to {place}.", f"{a} went with {b}."]
    elif kind == 1:  # a negation before the span
        sentences = [f"{a} did not say that {b} {act} {place}."]
        traps = [f"{b} {act} {place}.", f"{a} did say that {b} {act} {place}.", f"that {b} {act} {place}."]
    elif kind == 2:  # the subject of the clause (a possessor)
        sentences = [f"{a}'s sister {act} {place}."]
        traps = [f"sister {act} {place}.", f"{a} {act} {place}."]
    elif kind == 3:  # a condition
        sentences = [f"If it rains, {a} {act} {place}."]
        traps = [f"{a} {act} {place}.", f"it rains, {a} {act} {place}."]
    elif kind == 4:  # a reported speaker
        sentences = [f"{a} said {b} never {act} {place}."]
        traps = [f"{b} never {act} {place}.", f"{a} said {b} {act} {place}."]
    elif kind == 5:  # an antecedent in the sentence before
        sentences = [f"{a} met {b} at {place}.", f"She {act} {place} with her mother."]
        traps = [f"She {act} {place} with her mother.", f"{b} {act} {place} with her mother."]
    else:  # the rest of a noun phrase
        sentences = [f"{a} adopted the dog walker's puppy at {place}."]
        traps = [f"{a} adopted the dog.", f"{a} adopted the dog walker's puppy."]
    return sentences, traps


def spans(sentences: list[str]) -> list[tuple[str, bool]]:
    """Every contiguous run of the memory's words, with the oracle's answer: quoted exactly when it is
    whole consecutive sentences (one opening with "She" only when it opens the memory)."""
    tokens = [words(s) for s in sentences]
    flat = [w for t in tokens for w in t]
    bounds = [0]
    for t in tokens:
        bounds.append(bounds[-1] + len(t))
    out = []
    for i in range(len(flat)):
        for j in range(i + 1, len(flat) + 1):
            whole = i in bounds and j in bounds
            opens_with_pronoun = i > 0 and flat[i] in ("she", "he", "they", "it")
            out.append((" ".join(flat[i:j]), whole and not opens_with_pronoun))
    return out


@pytest.mark.parametrize("seed", range(60))
def test_a_line_is_quoted_only_when_it_is_whole_sentences_of_one_memory(seed: int) -> None:
    rng = random.Random(seed)
    sentences, traps = family(rng)
    day = DAY0 + timedelta(days=rng.randint(0, 200))
    memory = evidence_of("m1", " ".join(sentences), {}, day)
    other = evidence_of("m2", f"{rng.choice(PEOPLE)} baked bread.", {}, day + timedelta(days=1))
    for span, expected in spans(sentences):
        assert bool(quoted_in(span, [memory, other])) == expected, (sentences, span)
    for trap in traps:
        assert quoted_in(trap, [memory, other]) == [], (sentences, trap)
        assert quoted_in(f"- {day.date().isoformat()}: {trap}", [memory, other]) == [], (sentences, trap)
    whole = " ".join(sentences)
    iso = day.date().isoformat()
    # case, punctuation, a bullet and the memory's own day aside, the memory's words are its quote
    for line in (whole, f"- {whole.upper()}", f"- {iso}: {whole.rstrip('.')}", f"* {whole.replace(',', '')}"):
        assert quoted_in(line, [memory, other]) == ["m1"], line
    wrong = (day + timedelta(days=3)).date().isoformat()
    assert quoted_in(f"- {wrong}: {whole}", [memory, other]) == []  # a date the memory does not give
    assert quoted_in(f"- {iso}: **{rng.choice(PEOPLE)}**: {whole}", [memory]) == []  # a lead is no quote


@pytest.mark.parametrize("seed", range(40))
def test_a_rearranged_line_is_never_quoted(seed: int) -> None:
    rng = random.Random(seed)
    sentences, _ = family(rng)
    memory = evidence_of("m1", " ".join(sentences), {}, DAY0)
    tokens = words(sentences[0])
    for _ in range(20):
        shuffled = tokens[:]
        rng.shuffle(shuffled)
        if shuffled != tokens:
            assert quoted_in(" ".join(shuffled).capitalize() + ".", [memory]) == [], shuffled
    # the issue's own example: the same words, another actor
    caroline = evidence_of("m3", "Caroline went with Melanie to an LGBTQ support group.", {}, DAY0)
    assert quoted_in("Melanie went to an LGBTQ support group.", [caroline]) == []
    assert quoted_in("Caroline went with Melanie to an LGBTQ support group.", [caroline]) == ["m3"]


def test_a_line_one_memory_says_has_the_confidence_of_one_memory() -> None:
    said = "Lena booked a table at Contramar for Friday."
    sources = [evidence_of("m1", said, {}, DAY0)] + [
        evidence_of(f"m{n}", f"Dinner at Contramar, visit {n}.", {}, DAY0 + timedelta(days=n)) for n in range(2, 9)]
    every = [e.memory_id for e in sources]
    # the plan cited every memory of the section; one of them says it
    proposed = {claim_key(f"- {said}"): ProposedClaim(refs=every)}
    [claim] = attribute_body(f"- {said}", sources, proposed, {})
    assert (claim.status, claim.support.count, confidence(claim.support.count, claim.status)) == ("quoted", 1, 0.7)
    # the judge's word for one memory is the confidence of one memory, whatever the line cites
    paraphrase = "- Lena reserved Contramar for Friday."
    judged = {claim_key(paraphrase): ProposedClaim(refs=every, judged_by=["m1"])}
    [claim] = attribute_body(paraphrase, sources, judged, {})
    assert (claim.status, claim.support.count, confidence(claim.support.count, claim.status)) == ("verified", 1, 0.7)
    # two memories that each say it: two
    sources.append(evidence_of("m9", said, {}, DAY0 + timedelta(days=20)))
    [claim] = attribute_body(f"- {said}", sources, {}, {})
    assert (claim.status, confidence(claim.support.count, claim.status)) == ("quoted", 0.8)
    # a line only several memories support together counts as one
    assert Support(joint=frozenset({"m1", "m2", "m3"})).count == 1
    # nothing showed a memory says it: no confidence at all
    [claim] = attribute_body(paraphrase, sources, {claim_key(paraphrase): ProposedClaim(refs=every)}, {})
    assert (claim.status, confidence(claim.support.count, claim.status)) == ("unverified", None)


def test_derived_lines_are_recounted_from_their_memories_and_carry_no_confidence() -> None:
    days = [DAY0, DAY0 + timedelta(days=2), DAY0 + timedelta(days=33)]
    evidence = [evidence_of(f"m{n}", f"Lunch with Lena, number {n}.", {"place": {"address": "801 S Lamar Blvd"}}, day)
                for n, day in enumerate(days)]
    holds = ["- 3 new memories.", "- 3 memories, 2026-01-05 to 2026-02-07.", "- Visited 3 times, 2026-01-05 to 2026-02-07.",
             "- By month: 2026-01 (2), 2026-02 (1).", "- Latest: 2026-02-07, 2026-01-07.", "- Visited on 2026-01-07.",
             "- Earlier: 2 notes, 2026-01-05 to 2026-01-07.", "- Often together with: **Lena** (3).",
             "Address: 801 S Lamar Blvd."]
    for line in holds:
        assert derived_holds(line, evidence), line
    fails = ["- 4 new memories.", "- 3 memories, 2026-01-04 to 2026-02-07.", "- By month: 2026-01 (3), 2026-02 (1).",
             "- Visited on 2026-03-01.", "- Earlier: 5 notes, 2026-01-05 to 2026-01-07.", "- Often together with: **Sam** (1).",
             "Address: 12 Oak Street.", "- Lena had lunch 3 times."]
    for line in fails:
        assert not derived_holds(line, evidence), line
    [claim] = attribute_body("- 3 new memories.", evidence, {}, {})
    assert (claim.kind, claim.status, confidence(claim.support.count, claim.status)) == ("derived", "derived", None)
    # a stored derived line is recounted from the memories it counted, not from the whole section
    more = [*evidence, evidence_of("m9", "Dinner with Sam.", {}, DAY0 + timedelta(days=40))]
    known = {claim_key("- 3 new memories."): KnownClaim(("m0", "m1", "m2"), "derived", "derived")}
    [claim] = attribute_body("- 3 new memories.", more, {}, known)
    assert (claim.status, claim.refs) == ("derived", ("m0", "m1", "m2"))


def test_the_gate_settles_each_line_by_one_check_in_order() -> None:
    memory = evidence_of("m1", "Caroline went with Melanie to an LGBTQ support group.", {}, DAY0)
    rule = GATE_RULE
    assert check_line("- 1 new memory.", [memory], ["Caroline"], rule).outcome == "derived"
    assert check_line("- 2026-01-05: Caroline went with Melanie to an LGBTQ support group.", [memory], [],
                      rule).outcome == "quoted"
    assert check_line("- Caroline went with Sarah to the group.", [memory], [], rule).outcome == "rejected"
    # the same words rearranged, or a negation: a reader must decide
    assert check_line("- Melanie went to an LGBTQ support group.", [memory], [], rule).outcome == "judge"
    assert check_line("- Caroline did not go to the LGBTQ support group.", [memory], [], rule).outcome == "judge"


def test_each_status_has_one_meaning_and_only_checked_lines_have_a_confidence() -> None:
    assert set(STATUSES) == {"quoted", "verified", "derived", "unverified"}
    assert set(STATUS_MEANINGS) == {*STATUSES, "rejected"} and all(STATUS_MEANINGS.values())
    assert status_legend(["unverified", "quoted", "quoted"]) == [
        f"quoted: {STATUS_MEANINGS['quoted']}", f"unverified: {STATUS_MEANINGS['unverified']}"]
    assert [confidence(n, "quoted") for n in range(6)] == [None, 0.7, 0.8, 0.9, 1.0, 1.0]
    assert confidence(3, "derived") is None and confidence(3, "unverified") is None
    assert status_of(True, Support(quoted=frozenset({"m1"}))) == "derived"
    assert status_of(False, Support(quoted=frozenset({"m1"}), judged=frozenset({"m2"}))) == "quoted"
    assert status_of(False, Support(judged=frozenset({"m2"}))) == "verified"
    assert status_of(False, Support()) == "unverified"


def test_the_judge_prompt_lists_each_memory_once_and_its_reply_maps_back() -> None:
    from planners.claim_judge_prompt import build_claim_judge_prompt, parse_claim_judge_reply

    shared = JudgedMemory(id="id-1", day="2026-01-05", text="Eric waited twenty minutes for a table at Uchi.")
    packed = JudgedMemory(id="id-2", day="", text="Uchi was packed.")
    prompt = build_claim_judge_prompt([
        ClaimQuestion(key="a", text="Long wait at Uchi.", page="Uchi", memories=[shared]),
        ClaimQuestion(key="b", text="Uchi is busy.", page="Uchi", memories=[shared, packed]),
        ClaimQuestion(key="c", text="Eric never waits.", page="Uchi", memories=[shared]),
        ClaimQuestion(key="d", text="Uchi is Eric's favourite.", page="Uchi", memories=[shared, packed])])
    assert prompt.user.count(shared.text) == 1
    assert "m1 (2026-01-05): Eric waited" in prompt.user and "m2 (undated): Uchi was packed." in prompt.user
    assert "c2. page: Uchi | cites: m1, m2 | claim: Uchi is busy." in prompt.user
    verdicts = parse_claim_judge_reply(
        '{"supported": {"c1": ["m1", "m2"], "c9": ["m1"]}, "together": {"c2": ["m1", "m2"]},'
        ' "unsupported": {"c3": "negation", "c4": "favouritism"}, "unsure": ["c4"]}', prompt)
    got = {v.key: (v.verdict, v.by, v.together, v.problem) for v in verdicts}
    assert got == {"a": ("supported", ["id-1"], [], ""),  # m2 is not among c1's citations: left out
                   "b": ("supported", [], ["id-1", "id-2"], ""),
                   "c": ("unsupported", [], [], "negation"),
                   "d": ("unsupported", [], [], "unsaid")}  # an unknown problem, and the most cautious place
