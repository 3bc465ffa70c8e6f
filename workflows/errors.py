"""Reading an activity's failure: the one sentence an operator sees in the Temporal UI, the named
failure it carries, the tokens a failed model call was billed for."""

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, RetryState

with workflow.unsafe.imports_passed_through():
    from messages.compile import TokenCounts


def one_sentence(error: BaseException, fallback: str = "an activity failed") -> str:
    """The root application error's message (without the "Type: " prefix str() adds): of an activity's
    error, of the ApplicationError a local activity fails with, or of a workflow's failure."""
    cause = error if isinstance(error, ApplicationError) else error.cause
    while cause is not None and not isinstance(cause, ApplicationError) and cause.cause is not None:
        cause = cause.cause
    message = cause.message if isinstance(cause, ApplicationError) else str(cause or error)
    return message.strip() or fallback


def compile_failure(error: ActivityError | ApplicationError, retry_budget_seconds: int) -> str:
    """Why a compile failed, in one sentence.

    A model call that was still being throttled (or the provider still unavailable) when its retry
    budget ran out fails with its last attempt's error, which reads as if it were still being
    retried; the sentence says that the budget ran out and which setting sets it.
    """
    message = one_sentence(error)
    if isinstance(error, ActivityError) and error.retry_state == RetryState.TIMEOUT:
        return (f"a model call was still failing when its retry budget of {retry_budget_seconds} s ran out "
                f"(WIKI_LLM_RETRY_BUDGET_SECONDS); last failure: {message}")
    return message


def failure_type(error: ActivityError | ApplicationError) -> str | None:
    """The named failure (`domain/errors.py`) an activity failed with, if any."""
    cause = error.cause
    return cause.type if isinstance(cause, ApplicationError) else None


def spent_tokens(error: ActivityError | ApplicationError) -> TokenCounts:
    """Priced tokens of a failed model call, when the activity attached them to its error."""
    failure = error.cause if isinstance(error, ActivityError) else error
    details = failure.details if isinstance(failure, ApplicationError) else ()
    if details and isinstance(details[0], dict):
        return TokenCounts.model_validate(details[0])
    return TokenCounts()
