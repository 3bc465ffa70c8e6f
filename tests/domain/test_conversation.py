"""Conversations at the boundary (domain/conversation.py): every field checked, one line per problem,
turns built with their speaker, role, conversation and position, ids stable across sends."""

from __future__ import annotations

import random

import pytest

from domain.conversation import (
    ConversationError,
    conversation_turns,
    parse_conversation,
    person_name,
    split_turn,
    turn_content,
    turn_speaker,
)

GOOD = {"id": "chat-1", "user": "Priya", "messages": [
    {"speaker": "user", "text": "I adopted a second cat.", "time": "2026-10-03T19:30:00Z"},
    {"speaker": "assistant", "text": "Congratulations! What is its name?"},
    {"speaker": "Priya", "text": "Miso.", "time": "2026-10-03T19:31:00Z"},
]}


def test_messages_become_turns_with_their_speaker_role_conversation_and_position() -> None:
    turns = conversation_turns(parse_conversation(GOOD), "Priya")
    assert [t.content for t in turns] == ["Priya: I adopted a second cat.", "Assistant: Congratulations! What is its "
                                          "name?", "Priya: Miso."]
    assert [(t.turn.speaker, t.turn.role, t.turn.position) for t in turns] == [
        ("Priya", "user", 0), ("Assistant", "assistant", 1), ("Priya", "user", 2)]
    assert turns[1].occurred_at == turns[0].occurred_at  # a message without a time takes the previous one's
    again = conversation_turns(parse_conversation(GOOD), "Priya")
    assert [t.resolved_id("t", "o") for t in turns] == [t.resolved_id("t", "o") for t in again]
    assert turns[0].resolved_id("t", "o") != turns[0].resolved_id("t", "other")
    edited = {**GOOD, "messages": [{**GOOD["messages"][0], "text": "I adopted two cats."}]}
    assert conversation_turns(parse_conversation(edited), "Priya")[0].resolved_id("t", "o") == turns[0].resolved_id(
        "t", "o")  # an edit at its position is the same turn


def test_explicit_positions_let_a_client_append() -> None:
    appended = {"id": "chat-1", "messages": [{"speaker": "Priya", "text": "She sleeps a lot.", "position": 3},
                                             {"speaker": "assistant", "text": "Cats do."}]}
    turns = conversation_turns(parse_conversation(appended), "Priya")
    assert [t.turn.position for t in turns] == [3, 4] and turns[0].turn.role == "user"


@pytest.mark.parametrize(("raw", "fragment"), [
    ([], "a JSON object"),
    ({"messages": [{"speaker": "Ana", "text": "hi"}]}, "id: Field required"),
    ({"id": "a b", "messages": [{"speaker": "Ana", "text": "hi"}]}, "id: id must be 1-128"),
    ({"id": "c", "messages": []}, "messages: List should have at least 1 item"),
    ({"id": "c", "messages": [{"speaker": "Ana", "text": "hi"}] * 1001}, "at most 1000 items"),
    ({"id": "c", "messages": [{"speaker": "Ana"}]}, "messages[0].text: Field required"),
    ({"id": "c", "messages": [{"speaker": "Ana", "text": "  "}]}, "messages[0].text: text must not be empty"),
    ({"id": "c", "messages": [{"speaker": "Ana", "text": "hi", "mood": "ok"}]}, "messages[0].mood: Extra inputs"),
    ({"id": "c", "messages": [{"speaker": "R2D2", "text": "hi"}]}, "is not a name"),
    ({"id": "c", "messages": [{"speaker": "Hey", "text": "hi"}]}, "'Hey' is not a name"),
    ({"id": "c", "messages": [{"speaker": "a: b", "text": "hi"}]}, "is not a name"),
    ({"id": "c", "messages": [{"speaker": "x" * 65, "text": "hi"}]}, "the limit is 64"),
    ({"id": "c", "messages": [{"speaker": 7, "text": "hi"}]}, "not int"),
    ({"id": "c", "messages": [{"speaker": "Ana", "text": "hi", "time": "yesterday"}]}, "ISO 8601"),
    ({"id": "c", "messages": [{"speaker": "Ana", "text": "hi", "time": 12345}]}, "ISO 8601"),
    ({"id": "c", "messages": [{"speaker": "Ana", "text": "hi", "position": -1}]}, "greater than or equal to 0"),
    ({"id": "c", "user": "user", "messages": [{"speaker": "Ana", "text": "hi"}]}, "user 'user' is not a name"),
    ({"id": "c", "assistant": "", "messages": [{"speaker": "Ana", "text": "hi"}]}, "must not be empty"),
])
def test_a_bad_conversation_is_one_line_naming_where(raw: object, fragment: str) -> None:
    with pytest.raises(ConversationError) as error:
        parse_conversation(raw)
    assert fragment in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(("messages", "user", "fragment"), [
    ([{"speaker": "user", "text": "hi"}], None, "give the user's name"),
    ([{"speaker": "Ana", "text": "a", "position": 4}, {"speaker": "Ana", "text": "b", "position": 4}], None,
     "messages[1].position 4 must be after the previous message's (4)"),
    ([{"speaker": "Ana", "text": "a", "time": "2026-01-02T00:00:00Z"},
      {"speaker": "Ana", "text": "b", "time": "2026-01-01T00:00:00Z"}], None, "messages[1].time"),
    ([{"speaker": "Ana", "text": "bad\x00byte"}], None, "messages[0]: content: content contains control characters"),
    ([{"speaker": "Ana", "text": "x" * 32_768}], None, "messages[0].text is over 32768 bytes"),
])
def test_rules_across_messages_are_checked_before_anything_is_stored(messages: list, user: str | None,
                                                                    fragment: str) -> None:
    with pytest.raises(ConversationError) as error:
        conversation_turns(parse_conversation({"id": "c", "messages": messages}), user)
    assert fragment in str(error.value)


def test_names_of_many_scripts_and_shapes_are_names_and_signs_are_not() -> None:
    for name in ("Priya", "Mary-Jane O'Neil", "Dr. Okafor", "José Álvarez", "李小龍", "Zoë", "Ngozi"):
        assert person_name(name, "speaker") == name
    for bad in ("", "  ", "user", "You", "hey", "Ana!", "Ana  :", "3rd", "a--b", "<b>x</b>"):
        with pytest.raises(ValueError):
            person_name(bad, "speaker")


def test_a_turn_is_read_back_from_its_content_only_under_a_persons_name() -> None:
    rng = random.Random(42)
    for _ in range(100):
        speaker = rng.choice(["Caroline", "Jon", "Gina", "Dr. Patel", "María José", "Melanie"])
        text = rng.choice(["Hey!", "I moved: we live on Elm Road now.", "Thanks, Jon! See you: soon."])
        assert split_turn(turn_content(speaker, text)) == (speaker, text)
        assert turn_speaker(turn_content(speaker, text)) == (speaker, text)
    for plain in ("Lunch at Uchi with Lena: brisket again.", "Note: buy milk", "Reminder: dentist at 3",
                  "No colon here", "Dinner: tacos"):
        assert turn_speaker(plain) is None, plain
    assert turn_speaker("Quillon: back from the trip.", frozenset({"quillon"})) == ("Quillon", "back from the trip.")
