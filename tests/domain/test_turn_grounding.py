"""A turn's evidence holds its conversation's speakers: a line may name whom the turn's "I", "you"
and "we" stand for, and still no one else. Seeded cases composed of random speakers and sentences."""

from __future__ import annotations

import random

import pytest

from domain.claim_checks import check_line
from domain.evidence import evidence_of
from domain.grounding import GATE_RULE

FIRST_NAMES = ["Caroline", "Melanie", "Priya", "Tomasz", "Aiko", "Oluwaseun", "Mateo", "Ingrid", "Farah",
               "Dmitri", "Leilani", "Bartholomew", "Siobhan", "Kwame", "Yusuf", "Annika"]
TURNS = [("I'm so proud of you!", "{a} is proud of {b}."),
         ("You really helped me with the move.", "{b} helped {a} with the move."),
         ("We went hiking last weekend.", "{a} and {b} went hiking."),
         ("Thanks for the book you lent me.", "{b} lent {a} a book."),
         ("Your kids are lovely.", "{b}'s kids are lovely."),
         ("My sister visited you.", "{a}'s sister visited {b}.")]


@pytest.mark.parametrize("seed", range(12))
def test_a_line_may_name_the_speakers_of_its_turn_and_nobody_else(seed: int) -> None:
    rng = random.Random(seed)
    speaker, spoken_to, stranger = rng.sample(FIRST_NAMES, 3)
    said, line = rng.choice(TURNS)
    turn = f"{speaker}: {said}"
    evidence = [evidence_of("m1", turn, {}, None, participants=[speaker, spoken_to])]
    written = line.format(a=speaker, b=spoken_to)
    assert check_line(written, evidence, [speaker], GATE_RULE).outcome != "rejected", written
    # The same line naming someone who is not in the conversation is rejected for that name.
    invented = line.format(a=speaker, b=stranger)
    check = check_line(invented, evidence, [speaker], GATE_RULE)
    if invented.startswith(stranger) and check.outcome != "rejected":
        # An opening word is a name only when the name rule says so; the line still goes to the judge.
        assert check.outcome == "judge", invented
    else:
        assert check.outcome == "rejected" and [m.removesuffix("'s") for m in check.missing] == [
            stranger.lower()], invented
    # Without the conversation's speakers, the one spoken to is not in the turn's words (where a name
    # stands inside the line: an opening word is a name only when the name rule says so).
    alone = [evidence_of("m1", turn, {}, None)]
    if not written.startswith(spoken_to):
        assert check_line(written, alone, [speaker], GATE_RULE).outcome == "rejected", written


def test_a_speaker_with_a_full_name_is_named_by_either_part() -> None:
    evidence = [evidence_of("m1", "Mel: You did great today.", {}, None, participants=["Mel", "Caroline Reyes"])]
    assert check_line("Caroline did great.", evidence, ["Mel"], GATE_RULE).outcome != "rejected"
    assert check_line("Caroline Reyes did great.", evidence, ["Mel"], GATE_RULE).outcome != "rejected"
