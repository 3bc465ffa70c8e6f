"""Retain a conversation: its messages become turns of one scope, stored all or nothing, then compiled.

The scope's user has one name. The first conversation that has a `user` message gives it (`user`), and
it is kept as the speaker of the scope's `user` turns; a later conversation may leave `user` out, and
one that names the user otherwise is refused (one person page per user, however the user is addressed
in the text). Sent again, a conversation changes nothing (each turn's id comes from the conversation and
its position); sent with more messages, only the new turns are stored.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine

from app.reads import BadInput, ReadScope
from app.retain import CompileUnavailable, RetainOutcome, RetainSummary, TemporalConnector, retain_and_signal
from domain.conversation import ConversationError, ConversationIn, conversation_turns, parse_conversation
from domain.memory import TurnIn
from messages.compile import compile_workflow_id
from runtime.settings import Settings
from store.memories import scope_user_name


class ConversationSummary(RetainSummary):
    conversation: str
    user: str | None  # the user's name the turns were stored under
    turns: int


class ConversationTurns(BaseModel):
    """A conversation checked against the scope: its turns, ready to store."""

    conversation: ConversationIn
    user: str | None
    turns: list[TurnIn]


async def checked_turns(engine: AsyncEngine, tenant: str, owner: str, conversation: ConversationIn) -> ConversationTurns:
    """The conversation's turns under the scope's one user name; ConversationError when the conversation
    names the user otherwise, or needs a name nobody gave."""
    async with engine.connect() as conn:
        stored = await scope_user_name(conn, tenant, owner)
    given = conversation.user
    if stored is not None and given is not None and given.casefold() != stored.casefold():
        raise ConversationError(f"this wiki's user is named {stored!r}; the conversation calls them {given!r} "
                                f"(leave `user` out, or send {stored!r})")
    user = stored or given
    return ConversationTurns(conversation=conversation, user=user, turns=conversation_turns(conversation, user))


async def retain_conversation(engine: AsyncEngine, tenant: str, owner: str, conversation: ConversationIn, *,
                              client: Any, settings: Settings | None = None) -> tuple[ConversationTurns, RetainOutcome]:
    """Check, store (one transaction) and wake the compile: the path of `wiki retain --conversation`."""
    checked = await checked_turns(engine, tenant, owner, conversation)
    outcome = await retain_and_signal(engine, tenant, owner, list(checked.turns), client=client, settings=settings)
    return checked, outcome


async def retain_conversation_for_agent(engine: AsyncEngine, scope: ReadScope, raw: Any, connect: TemporalConnector,
                                        settings: Settings) -> ConversationSummary:
    """The agents' path (HTTP and MCP): validate, reach Temporal first, then store and wake the compile."""
    try:
        conversation = raw if isinstance(raw, ConversationIn) else parse_conversation(raw)
        checked = await checked_turns(engine, scope.tenant, scope.owner, conversation)
    except ConversationError as error:
        raise BadInput(f"{error}; nothing was stored") from None
    try:
        client = await connect()
    except (RuntimeError, OSError) as error:
        raise CompileUnavailable(f"cannot reach Temporal to compile ({error}); nothing was stored") from None
    outcome = await retain_and_signal(engine, scope.tenant, scope.owner, list(checked.turns), client=client,
                                      settings=settings)
    stored = outcome.stored
    return ConversationSummary(
        inserted=len(stored.inserted), updated=len(stored.updated), unchanged=len(stored.unchanged),
        memory_ids=[str(m) for m in [*stored.inserted, *stored.updated, *stored.unchanged]],
        compile_workflow_id=compile_workflow_id(scope.tenant, scope.owner) if outcome.compile else None,
        conversation=conversation.id, user=checked.user, turns=len(checked.turns),
    )
