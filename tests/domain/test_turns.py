"""Turns of conversations read offline (planners/scripted/turns.py, planners/telling.py): each speaker a
subject whatever they are called, addressees no subjects, an assistant's turn nothing about the user
until the user confirms it, and lines made of the sentences that say something. Conversations are
generated (seeded) from the first-name and nickname tables, not written out."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from domain.context import MemoryRecord
from domain.merge_questions import MergeQuestion
from domain.name_words import first_names, name_prior, nickname_forms
from domain.resolution import Rung
from planners.scripted.judgement import scripted_judgement
from planners.scripted.subjects import collect_subjects
from planners.scripted.turns import TurnReading
from planners.telling import telling_quote

START = datetime(2026, 5, 1, 12, tzinfo=UTC)
WITH_NICKNAMES = sorted(name.capitalize() for name, f in first_names().items()
                        if f.english >= 6 and name.isalpha() and name_prior(name) == "first_name"
                        and any(len(n) >= 3 and n.isalpha() for n in nickname_forms(name)))


def _turn(index: int, speaker: str, text: str, *, role: str | None = None, stored: bool = True) -> MemoryRecord:
    when = START + timedelta(seconds=index)
    return MemoryRecord(id=uuid.UUID(int=index + 1), content=f"{speaker}: {text}", created_at=when, updated_at=when,
                        speaker=speaker if stored else None, speaker_role=role, conversation="c" if stored else None,
                        position=index if stored else None)


def _conversation(rng: random.Random, stored: bool) -> tuple[str, str, str, list[MemoryRecord]]:
    a, b = rng.sample(WITH_NICKNAMES, 2)
    nick = rng.choice(sorted(n.capitalize() for n in nickname_forms(b.lower()) if len(n) >= 3 and n.isalpha()))
    place = rng.choice(["Lisbon", "Kyoto", "Oaxaca", "Tromsø"])
    lines = [(a, f"Hey {nick}! Good to see you! How have you been?"),
             (b, f"Hey {a}! I'm swamped with work. What's new?"),
             (a, f"We moved. Our new flat is near {place}."),
             (b, f"Wow, that's cool, {a}! Thanks for telling me."),
             (a, f"{nick} and I should visit {place} together."),
             (b, "Aww, bummer."), (a, "Haha, yeah!")]
    return a, b, nick, [_turn(i, speaker, text, stored=stored) for i, (speaker, text) in enumerate(lines)]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("stored", [True, False])
def test_each_speaker_is_one_subject_whatever_they_are_called(seed: int, stored: bool) -> None:
    a, b, nick, turns = _conversation(random.Random(seed), stored)
    subjects = {s.title: s for s in collect_subjects(turns)}
    assert a in subjects and b in subjects, subjects
    people = [title for title, s in subjects.items() if s.kind == "person"]
    assert sorted(people) == sorted([a, b]), (nick, people)  # no page for the nickname, the greeting or "Aww"
    assert [s.memory_index for s in subjects[a].sightings] == [0, 2, 4, 6]
    # The nickname mentioned as a subject is the other speaker, not a vocative: b's page has turn 4 too.
    assert 4 in [s.memory_index for s in subjects[b].sightings]
    assert TurnReading(turns).addressees(turns[0]) == [b]


def test_an_assistants_turn_files_nothing_until_the_user_confirms_it() -> None:
    turns = [_turn(0, "Priya", "I moved to Denver last week.", role="user"),
             _turn(1, "Assistant", "So you live in Denver with Miso now?", role="assistant"),
             _turn(2, "Priya", "Exactly, Miso loves it.", role="user"),
             _turn(3, "Assistant", "You could try Sushi Den on Pearl Street.", role="assistant"),
             _turn(4, "Priya", "Maybe later.", role="user")]
    reading = TurnReading(turns)
    assert reading.entities(turns[3]) == []  # a suggestion the user did not take up
    assert reading.entities(turns[1])[0]["name"] == "Priya"  # confirmed: the user's own words now
    assert "Sushi Den" not in {s.title for s in collect_subjects(turns)}


def test_a_line_quotes_the_sentences_that_say_something() -> None:
    assert telling_quote("We moved. Our new flat is on Elm Road.") == "We moved. Our new flat is on Elm Road."
    assert telling_quote("Caroline: Hey Mel! Good to see you! How have you been?") == ""
    assert telling_quote("Gina: Thanks, Jon! Aww, bummer.") == ""
    assert telling_quote("Jon: Hey Gina! Lost my job as a banker yesterday. What's up?") == (
        "Jon: Lost my job as a banker yesterday.")
    assert telling_quote("Melanie: Wow, love that painting! You've got guts.") == ""
    assert telling_quote("Lunch at Franklin Barbecue with Sam. The brisket was perfect.") == (
        "Lunch at Franklin Barbecue with Sam. The brisket was perfect.")
    long = "Ana: " + " ".join(f"I visited museum number {i} in Porto." for i in range(30))
    assert len(telling_quote(long)) <= 241


def _side(title: str, memories: list[str]) -> dict:
    return {"type": "entity", "title": title, "summary": "A person.", "evidence": memories}


@pytest.mark.parametrize(("mine", "theirs", "shared", "same"), [
    (["Mel went to the gym."], ["Melanie painted a lake."], 0, False),  # a nickname alone
    (["Mel went to the gym."], ["Melanie painted a lake."], 1, True),  # a memory both cite
    (["Mel, that is Melanie, went to the gym."], ["Melanie painted a lake."], 0, True),  # its memories say so
])
def test_the_offline_judge_never_merges_on_a_nickname_alone(mine: list[str], theirs: list[str], shared: int,
                                                          same: bool) -> None:
    question = MergeQuestion.model_validate({
        "key": "k", "rung": Rung.NICKNAME, "detail": "mel/melanie", "shared_sources": shared,
        "proposal": _side("Mel", mine), "candidate": _side("Melanie", theirs)})
    assert scripted_judgement(question).same is same
