"""Turning an activity failure into the one sentence an operator sees in the Temporal UI."""

from temporalio.exceptions import ActivityError, ApplicationError


def one_sentence(error: ActivityError, fallback: str = "an activity failed") -> str:
    """The root application error's message (without the "Type: " prefix str() adds)."""
    cause = error.cause
    while cause is not None and not isinstance(cause, ApplicationError) and cause.cause is not None:
        cause = cause.cause
    message = cause.message if isinstance(cause, ApplicationError) else str(cause or error)
    return message.strip() or fallback
