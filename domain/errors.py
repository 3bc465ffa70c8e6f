"""Failures that the compile's steps report to the workflow, each under a stable name.

Store and planner code raise these; the activity layer turns them into Temporal application errors
of the same name (`activities/common.py`), and the workflows' retry policies refer to the names.
The names are also what operators see in the Temporal UI and what recorded histories contain, so
they never change.
"""

from __future__ import annotations

from datetime import timedelta
from typing import ClassVar

LLM_THROTTLED = "LlmThrottled"  # 429 / 529: retried after the provider's Retry-After
LLM_UNAVAILABLE = "LlmUnavailable"  # 5xx, connection errors, timeouts: retried with backoff
LLM_REJECTED = "LlmRejected"  # authentication, permission, bad request, unknown model: fails the run
LLM_TRUNCATED = "LlmTruncated"  # output cut off at max tokens: the workflow splits the batch
# A call that started and was cut short (no complete reply within its deadline, a stalled or broken
# stream): its tokens may be billed, so the workflow sees it, counts them, retries and then splits.
LLM_INTERRUPTED = "LlmInterrupted"
PLAN_INVALID = "PlanInvalid"  # output that is not the plan contract: retried once, then split
# A Message Batch still processing: the poll activity fails with it, and its fixed-interval retry polls again.
BATCH_NOT_ENDED = "BatchNotEnded"
# A batched request that ended without a reply (errored, canceled, expired): asked again interactively.
BATCH_REQUEST_FAILED = "BatchRequestFailed"
CURSOR_MOVED = "CursorMoved"  # the scope's cursor is not where this batch started: never retried
SCOPE_VIOLATION = "ScopeViolation"  # a request that names another scope's rows: never retried
APPLY_REJECTED = "ApplyRejected"  # a batch's writes broke a database rule: retrying would only break it again


class StepFailed(Exception):
    """A compile step failed for a reason the workflow acts on by name.

    `spent` carries the priced token counts of a model reply that was paid for but unusable, so the
    run's ledger still counts it. `retry_after` is the provider's requested wait before a retry;
    `benign` marks expected conditions (throttling) that should not be logged as errors.
    """

    kind: ClassVar[str]
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, spent: object | None = None, retry_after: timedelta | None = None,
                 benign: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.spent = spent
        self.retry_after = retry_after
        self.benign = benign


class ModelThrottled(StepFailed):
    kind = LLM_THROTTLED
    retryable = True


class ModelUnavailable(StepFailed):
    kind = LLM_UNAVAILABLE
    retryable = True


class ModelRejected(StepFailed):
    kind = LLM_REJECTED


class ModelTruncated(StepFailed):
    kind = LLM_TRUNCATED


class ModelInterrupted(StepFailed):
    kind = LLM_INTERRUPTED


class PlanInvalid(StepFailed):
    kind = PLAN_INVALID


class CursorMoved(StepFailed):
    kind = CURSOR_MOVED


class ScopeViolation(StepFailed):
    kind = SCOPE_VIOLATION


class ApplyRejected(StepFailed):
    kind = APPLY_REJECTED


class BatchNotEnded(StepFailed):
    kind = BATCH_NOT_ENDED
    retryable = True

    def __init__(self, message: str) -> None:
        # Expected on every poll but the last: benign, so it is not logged as an error.
        super().__init__(message, benign=True)


class BatchRequestFailed(StepFailed):
    kind = BATCH_REQUEST_FAILED


class BatchGone(ModelRejected):
    """The provider holds no such Message Batch (404): never created for this key, or deleted, as a
    forget deletes its scope's batches. A caller that knows why reads what was saved instead."""


# A provider's embeddings (planners/embedding_providers.py): throttled and unavailable calls are
# retried within WIKI_EMBEDDINGS_RETRY_SECONDS by the policy there; a rejected call (key, model,
# request) is not. Whatever is left failing is logged and the claims are embedded by a later batch.
EMBEDDINGS_THROTTLED = "EmbeddingsThrottled"  # 429 / ThrottlingException: retried after Retry-After
EMBEDDINGS_UNAVAILABLE = "EmbeddingsUnavailable"  # 5xx, connection errors, timeouts: retried with backoff
EMBEDDINGS_REJECTED = "EmbeddingsRejected"  # authentication, permission, bad request, unknown model


class EmbeddingsThrottled(StepFailed):
    kind = EMBEDDINGS_THROTTLED
    retryable = True


class EmbeddingsUnavailable(StepFailed):
    kind = EMBEDDINGS_UNAVAILABLE
    retryable = True


class EmbeddingsRejected(StepFailed):
    kind = EMBEDDINGS_REJECTED
