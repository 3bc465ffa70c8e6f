"""How long each workflow step may take and how Temporal retries it.

Failures named in `domain/errors.py` are matched here: a failure retrying cannot cure (the cursor
moved, another scope's row, a request the model refuses, a plan cut off or invalid) is never
retried by Temporal; the workflow decides what follows (split the batch, fail the run).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from domain import errors

# A database step: retried with backoff while the database is away, never when retrying cannot help.
DATABASE_STEP_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    non_retryable_error_types=[errors.CURSOR_MOVED, errors.SCOPE_VIOLATION],
)
DATABASE_STEP_TIMEOUT = timedelta(minutes=2)

# A model call: throttling and provider errors are retried within the run's retry budget. An
# interrupted call (deadline, stall, broken stream) may have been billed, so Temporal does not retry
# it: the workflow sees it, counts its tokens and retries it itself (a plan once, then the batch is
# split; a section write or the aggregation plan up to MODEL_CALL_INTERRUPTED_ATTEMPTS times).
MODEL_CALL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=2),
    non_retryable_error_types=[errors.LLM_REJECTED, errors.LLM_TRUNCATED, errors.PLAN_INVALID,
                               errors.LLM_INTERRUPTED],
)
# A streamed call ends by its own deadline (at most 15 minutes, planners/claude_client.py): the
# attempt's timeout leaves it room; heartbeats still notice a dead worker within seconds.
MODEL_CALL_ATTEMPT_TIMEOUT = timedelta(minutes=20)
MODEL_CALL_INTERRUPTED_ATTEMPTS = 3

# A Message Batch is answered within 24 hours; the poll's retries may take that long, plus a margin.
MESSAGE_BATCH_POLL_BUDGET = timedelta(hours=25)
MESSAGE_BATCH_POLL_ATTEMPT_TIMEOUT = timedelta(minutes=1)


def message_batch_poll_retry(poll_every: timedelta) -> RetryPolicy:
    """Poll at a fixed interval until the batch has ended (`BatchNotEnded` is retried; a retry adds
    no history event); a batch the provider refuses to describe ends the wait."""
    return RetryPolicy(initial_interval=poll_every, backoff_coefficient=1.0, maximum_interval=poll_every,
                       non_retryable_error_types=[errors.LLM_REJECTED])


# The nightly lint's database steps. Bounded: a lint that cannot reach the database fails tonight and
# is visible, instead of retrying until tomorrow's run (which the schedule would skip while this one is open).
LINT_STEP_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2.0,
                              maximum_interval=timedelta(seconds=30), maximum_attempts=5)
LINT_STEP_TIMEOUT = timedelta(minutes=5)
LINT_STEP_HEARTBEAT_TIMEOUT = timedelta(seconds=30)
