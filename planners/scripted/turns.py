"""Turns of a conversation, read offline: each speaker is a subject, first-person words are theirs.

A memory is a turn when it was retained as one (its speaker, role, conversation and position: the
columns of domain/conversation.py's turns) or when it is written as one, "Caroline: Hey Mel! …", with a
person's name before the colon (domain/conversation.py `turn_speaker`). The scripted planner files a turn
under its speaker and under what its text names (planners/text_entities.py), and:

- the names a sentence only speaks to ("Hey Mel!", "Thanks, Jon!") are not what it is about;
- a name that is another form of a speaker's ("Mel" for Melanie, "Jon" for Jonathan: the nickname table
  of domain/name_words.py, or the first name of a speaker named in full) is that speaker, within the
  conversation: its speakers are the evidence that it is them;
- an assistant's turn says nothing about the user unless the user's next turn confirms it ("Yes",
  "Exactly", "That's right"): otherwise it files nothing (it stays retained, searchable and shown around
  the turns it answers); a confirmed one is filed under the user, like the user's own words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import regex

from domain.aliases import normalize_alias
from domain.closed_class import AFFIRMATIONS
from domain.context import MemoryRecord
from domain.conversation import split_turn, turn_speaker
from domain.name_words import NO_NAMES, KnownNames, are_nicknames
from planners.text_entities import extract_entities, read_names

_FIRST_WORD = regex.compile(r"^\W*([\p{L}']+)")
# A conversation key for turns written as plain "Speaker: text" memories: the batch is their conversation.
_PLAIN = ""


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    role: str | None
    conversation: str
    position: int | None


def turn_of(memory: MemoryRecord, known: frozenset[str] = frozenset()) -> Turn | None:
    """The memory as a turn, or None when it is none."""
    if memory.speaker:
        split = split_turn(memory.content)
        text = split[1] if split is not None and split[0] == memory.speaker else memory.content
        return Turn(memory.speaker, text, memory.speaker_role, memory.conversation or _PLAIN, memory.position)
    split = turn_speaker(memory.content, known)
    return Turn(split[0], split[1], None, _PLAIN, None) if split is not None else None


def _confirms(text: str) -> bool:
    match = _FIRST_WORD.match(text)
    lowered = text.lower()
    return (match is not None and match.group(1).lower() in AFFIRMATIONS) or lowered.startswith(
        ("that's right", "that is right", "that's true", "you're right", "you are right", "spot on"))


class TurnReading:
    """What a batch's turns say about who speaks: each conversation's speakers, and the assistant turns
    the user confirmed."""

    def __init__(self, memories: Sequence[MemoryRecord], known: KnownNames = NO_NAMES) -> None:
        self.known = known
        # A plain "Name: text" opening is a turn when the name is a person's, or opens two memories or more.
        openings: dict[str, int] = {}
        for memory in memories:
            if not memory.speaker and (split := split_turn(memory.content)) is not None:
                openings[split[0].lower()] = openings.get(split[0].lower(), 0) + 1
        self._repeated = frozenset(name for name, count in openings.items() if count >= 2 and len(name.split()) <= 3)
        self.turns: dict[str, Turn] = {}
        self.users: dict[str, str] = {}  # conversation -> the speaker of its `user` turns
        speakers: dict[str, list[str]] = {}
        for memory in memories:
            turn = turn_of(memory, self._repeated)
            if turn is None:
                continue
            self.turns[str(memory.id)] = turn
            if turn.role == "user":
                self.users.setdefault(turn.conversation, turn.speaker)
            names = speakers.setdefault(turn.conversation, [])
            if turn.role != "assistant" and turn.speaker not in names:
                names.append(turn.speaker)
        self.speakers = speakers
        self.confirmed = self._confirmed(memories)

    def _confirmed(self, memories: Sequence[MemoryRecord]) -> frozenset[str]:
        ordered = [m for m in memories if str(m.id) in self.turns]
        confirmed = set()
        for memory, following in zip(ordered, ordered[1:], strict=False):
            turn, answer = self.turns[str(memory.id)], self.turns[str(following.id)]
            if (turn.role == "assistant" and answer.role == "user" and answer.conversation == turn.conversation
                    and (turn.position is None or answer.position == turn.position + 1) and _confirms(answer.text)):
                confirmed.add(str(memory.id))
        return frozenset(confirmed)

    def entities(self, memory: MemoryRecord) -> list[dict[str, Any]] | None:
        """The subjects of a turn as metadata entities (its speaker first); None when it is no turn."""
        turn = self.turns.get(str(memory.id))
        if turn is None:
            return None
        speakers = self.speakers.get(turn.conversation, [])
        subject = turn.speaker
        if turn.role == "assistant":
            user = self.users.get(turn.conversation)
            if str(memory.id) not in self.confirmed or user is None:
                return []
            subject = user  # confirmed by the user: what it says of them is theirs now
        known = self.known | KnownNames.of(speakers)
        found = [{"name": subject, "type": "entity", "kind": "person"}]
        seen = {normalize_alias(subject)}
        for entity in extract_entities(turn.text, known):
            name = self._speaker_named(str(entity["name"]), speakers) or str(entity["name"])
            if normalize_alias(name) not in seen:
                seen.add(normalize_alias(name))
                found.append({**entity, "name": name, "kind": "person" if name in speakers else entity["kind"]})
        return found

    def addressees(self, memory: MemoryRecord) -> list[str]:
        """The speakers a turn speaks to by name ("Hey Mel!" -> Melanie)."""
        turn = self.turns.get(str(memory.id))
        if turn is None:
            return []
        speakers = self.speakers.get(turn.conversation, [])
        return [self._speaker_named(read.name, speakers) or read.name
                for read in read_names(turn.text, self.known | KnownNames.of(speakers)) if read.addressee]

    @staticmethod
    def _speaker_named(name: str, speakers: Sequence[str]) -> str | None:
        """The speaker a name written in the turn stands for: the same name, the speaker's first name alone,
        or a nickname of it; None when it is none of them, or could be two of them."""
        key = normalize_alias(name)
        words = key.split()
        matches = []
        for speaker in speakers:
            own = normalize_alias(speaker).split()
            if not own or not words:
                continue
            if key == " ".join(own) or (len(words) == 1 and (words[0] == own[0] or are_nicknames(words[0], own[0]))):
                matches.append(speaker)
        return matches[0] if len(matches) == 1 else None
