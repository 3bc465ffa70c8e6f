"""Conversations as they arrive at retain: messages with a speaker, text and time, each kept as a turn.

A conversation is `{"id", "user"?, "assistant"?, "messages": [{"speaker", "text", "time"?, "position"?}]}`.
A message's speaker is a person's name ("Priya", "Dr. Okafor") or a role: `user` (the person this
scope's wiki is about, named by `user`) or `assistant` (the agent, named by `assistant`, by default
"Assistant"). Each message becomes one memory, a **turn**:

- its content is `"<speaker's name>: <text>"` (`turn_content`; `split_turn` reads it back), so every
  reader of memories (search, recall, the claims' grounding, a plain-memory reader) sees who spoke;
- its id is derived from the scope, the conversation and the position, so sending a conversation again
  (or with more messages) changes nothing already stored, and a message edited at its position is an
  update;
- it keeps its speaker, its role, its conversation and its position (`TurnRef`), which the compile and
  the reads use: first-person words are the speaker's, the turns around a turn are its context.

Positions: a message may give its own (`position`, from 0); otherwise it follows the previous one (the
first message is 0). Positions must rise strictly. So a client appending to a conversation sends only
the new messages with the first one's position; a client resending all of it sends no positions.
Times: a message without one takes the previous message's; times may not go back.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from domain.closed_class import HONORIFICS, is_closed_class
from domain.memory import MAX_CONTENT_BYTES, SCOPE_PATTERN, TurnIn, TurnRef, parse_instant
from domain.name_words import first_name, is_common, is_person_name

Role = Literal["user", "assistant"]
ROLES: tuple[Role, ...] = ("user", "assistant")
DEFAULT_ASSISTANT_NAME = "Assistant"
MAX_MESSAGES = 1000
MAX_NAME_CHARS = 64
MAX_POSITION = 10_000_000
_SEPARATORS = " -'’."
_TURN_SPEAKER_CHARS = MAX_NAME_CHARS + 1


def _is_name(text: str) -> bool:
    """Letters (any script) and marks, with single spaces, hyphens, apostrophes or periods between them
    ("Mary-Jane O'Neil", "Dr. Okafor", "José", "李小龍"); no colon, which separates a turn's speaker from
    its text, no digit, no other sign."""
    if not text or not text[0].isalpha():
        return False
    previous = ""
    for char in text:
        if unicodedata.category(char)[0] in "LM":
            previous = ""
        elif char in _SEPARATORS:
            if previous and not (previous == "." and char == " "):
                return False
            previous = char
        else:
            return False
    return previous in ("", ".")


class ConversationError(ValueError):
    """The conversation was refused as a whole; nothing was stored."""


def person_name(value: Any, field: str) -> str:
    """A speaker's or the user's name, checked: 1-64 characters, letters with spaces, hyphens,
    apostrophes and periods between them, not a role word and not a closed-class word ("you", "hey")."""
    if not isinstance(value, str):
        raise ValueError(f"{field} must be a name (a string), not {type(value).__name__}")
    name = " ".join(value.split())
    if not name:
        raise ValueError(f"{field} must not be empty")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"{field} is {len(name)} characters; the limit is {MAX_NAME_CHARS}")
    if not _is_name(name):
        raise ValueError(f"{field} {name[:40]!r} is not a name: letters, with spaces, hyphens, apostrophes or "
                         "periods between them")
    if name.lower() in ROLES or all(is_closed_class(word) for word in name.split()):
        raise ValueError(f"{field} {name[:40]!r} is not a name")
    return name


class MessageIn(BaseModel):
    """One message: who said it, what, and when."""

    model_config = ConfigDict(extra="forbid")

    speaker: str = Field(description="A person's name, or the role `user` or `assistant`.")
    text: str = Field(description="What was said (at most 32 KiB).")
    time: datetime | None = Field(None, description="When (ISO 8601); by default the previous message's.")
    position: int | None = Field(None, ge=0, le=MAX_POSITION,
                                 description="The message's place in the conversation, from 0; by default the "
                                             "previous message's plus one.")

    @field_validator("speaker", mode="before")
    @classmethod
    def _speaker(cls, value: Any) -> str:
        if isinstance(value, str) and value.strip().lower() in ROLES:
            return value.strip().lower()
        return person_name(value, "speaker")

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        # The turn's own checks (size, control characters) are MemoryIn's, on the turn's content.
        if not value.strip():
            raise ValueError("text must not be empty")
        return value

    @field_validator("time", mode="before")
    @classmethod
    def _time(cls, value: Any) -> datetime | None:
        return None if value is None else parse_instant("time", value)


class ConversationIn(BaseModel):
    """A conversation to retain: its id, who the user and the assistant are, and its messages."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="The conversation's id: 1-128 letters, digits and _ . : @ -.")
    user: str | None = Field(None, description="The user's name (needed when a message's speaker is `user` and "
                                               "the wiki does not know it yet).")
    assistant: str | None = Field(None, description="The assistant's name (default Assistant).")
    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not SCOPE_PATTERN.fullmatch(value):
            raise ValueError(f"id must be 1-128 letters, digits and _ . : @ - (got {value[:40]!r})")
        return value

    @field_validator("user", "assistant", mode="before")
    @classmethod
    def _names(cls, value: Any, info: Any) -> str | None:
        return None if value is None else person_name(value, info.field_name)

    @property
    def uses_user_role(self) -> bool:
        return any(message.speaker == "user" for message in self.messages)


def turn_content(speaker: str, text: str) -> str:
    """A turn's memory content: who spoke, then what they said."""
    return f"{speaker}: {text}"


def split_turn(content: str) -> tuple[str, str] | None:
    """A content written as a turn ("Caroline: Hey Mel!") as (speaker, text); None when its opening is
    no name followed by ": ". Whether that name is a person's is the reader's to judge."""
    speaker, colon, text = content.partition(": ")
    if not colon or len(speaker) > _TURN_SPEAKER_CHARS or "\n" in speaker or not text.strip():
        return None
    try:
        return person_name(speaker, "speaker"), text.strip()
    except ValueError:
        return None


def conversation_turns(conversation: ConversationIn, user_name: str | None) -> list[TurnIn]:
    """The conversation's messages as turns, every rule checked; ConversationError names the first
    message that breaks one ("messages[3]: …"). `user_name` is the user's name (the conversation's own,
    or the one the scope already knows)."""
    assistant = conversation.assistant or DEFAULT_ASSISTANT_NAME
    if conversation.uses_user_role and user_name is None:
        raise ConversationError("a message's speaker is `user`: give the user's name (`user`)")
    turns: list[TurnIn] = []
    position, time = -1, None
    for index, message in enumerate(conversation.messages):
        where = f"messages[{index}]"
        if message.position is not None and message.position <= position:
            raise ConversationError(f"{where}.position {message.position} must be after the previous message's "
                                    f"({position})")
        position = message.position if message.position is not None else position + 1
        if position > MAX_POSITION:
            raise ConversationError(f"{where}.position is past {MAX_POSITION}")
        if message.time is not None and time is not None and message.time < time:
            raise ConversationError(f"{where}.time {message.time.isoformat()} is before the previous message's "
                                    f"({time.isoformat()})")
        time = message.time or time
        role: Role | None = "user" if message.speaker == "user" else "assistant" if message.speaker == "assistant" \
            else None
        name = (user_name or "") if role == "user" else assistant if role == "assistant" else message.speaker
        if role is None and user_name is not None and name.lower() == user_name.lower():
            role, name = "user", user_name
        content = turn_content(name, message.text)
        if len(content.encode("utf-8")) > MAX_CONTENT_BYTES:
            raise ConversationError(f"{where}.text is over {MAX_CONTENT_BYTES} bytes with its speaker (32 KiB)")
        try:
            turns.append(TurnIn(content=content, occurred_at=time,
                                  turn=TurnRef(conversation=conversation.id, position=position, speaker=name,
                                               role=role)))
        except ValueError as error:
            raise ConversationError(f"{where}: {_first(error)}") from None
    return turns


def turn_speaker(content: str, known: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """The speaker and text of a memory written as a turn ("Caroline: Hey Mel!"), when the opening is a
    person's name: at most three words, the first a first name (or a title), or a name the caller knows
    (the batch's speakers); "Lunch at Uchi with Lena: brisket" and "Note: …" are no turns."""
    split = split_turn(content)
    if split is None:
        return None
    speaker, _ = split
    words = speaker.split()
    first = words[0].rstrip(".").lower()
    listed = first_name(first) is not None and not is_common(first)  # "María": a name, if of other countries
    if len(words) > 3 or not (speaker.lower() in known or is_person_name(first) or listed
                              or (first in HONORIFICS and len(words) > 1)):
        return None
    return split


def _first(error: ValueError) -> str:
    from pydantic import ValidationError

    if isinstance(error, ValidationError):
        item = error.errors()[0]
        return f"{'.'.join(str(p) for p in item['loc']) or 'text'}: {item['msg'].removeprefix('Value error, ')}"
    return str(error)


def parse_conversation(raw: Any) -> ConversationIn:
    """A conversation from its JSON value; ConversationError says, in one line, what is wrong and where."""
    from pydantic import ValidationError

    if not isinstance(raw, dict):
        raise ConversationError("a conversation must be a JSON object with id and messages")
    try:
        return ConversationIn.model_validate(raw)
    except ValidationError as error:
        item = error.errors()[0]
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in item["loc"]).lstrip(".")
        message = item["msg"].removeprefix("Value error, ")
        more = len(error.errors()) - 1
        raise ConversationError(f"{where}: {message}" + (f" (and {more} more problems)" if more else "")) from None
