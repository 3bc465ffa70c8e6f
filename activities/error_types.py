"""Names of the application error types activities raise, shared with the workflows' retry policies.

Only strings here, so workflows can import this module inside the sandbox.
"""

LLM_THROTTLED = "LlmThrottled"  # 429 / 529: retried after the provider's Retry-After
LLM_UNAVAILABLE = "LlmUnavailable"  # 5xx, connection errors, timeouts: retried with backoff
LLM_REJECTED = "LlmRejected"  # authentication, permission, bad request, unknown model: fails the run
LLM_TRUNCATED = "LlmTruncated"  # output cut off at max tokens: the workflow splits the batch
PLAN_INVALID = "PlanInvalid"  # output that is not the plan contract: retried once, then split
CURSOR_MOVED = "CursorMoved"  # the scope's cursor is not where this batch started: never retried
SCOPE_VIOLATION = "ScopeViolation"  # a request that names another scope's rows: never retried
APPLY_REJECTED = "ApplyRejected"  # a batch's writes broke a database rule: retrying would only break it again
