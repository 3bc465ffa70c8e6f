"""Who goes first when many tenants share one worker fleet and one model quota.

Temporal orders a backlogged task queue by a priority key (1 first, 5 last) and, within one key, shares
dispatch between fairness keys in proportion to their weights. A compile is started with the priority
of what woke it and the fairness key of its tenant; its activities and every run it continues as new
inherit both. These are the rules that pick them; `runtime/priority.py` turns them into Temporal's
`Priority`.
"""

from __future__ import annotations

import hashlib
import math

from domain.memory import SCOPE_PATTERN

# Someone is waiting for these: an agent that just retained, an operator who asked, a user who asked
# to be forgotten (a deletion request is owed promptly, and it is one small pass). A resume restarts
# a compile that failed (possibly a bulk one) on an operator's request; the nightly lint may wait; bulk
# imports and rebuilds take whatever capacity is left. Temporal's default key (3, what a task without a
# priority gets) sits between the operator's and the bulk work.
PRIORITY_BY_TRIGGER: dict[str, int] = {
    "memory_retain": 1,
    "admin": 1,
    "forget": 1,
    "resume": 2,
    "lint": 3,
    "bootstrap_import": 4,
    "rebuild": 4,
}
LOWEST_PRIORITY = 5  # Temporal's default number of levels

# Temporal's limit on a fairness key, in bytes. A tenant id (1-128 characters of [A-Za-z0-9_.:@-]) that
# fits is its own key; a longer one is shortened to a prefix and a digest after `~`, a character no tenant
# id contains, so a shortened key never equals a tenant's own and two tenants share a key only if their
# digests collide.
FAIRNESS_KEY_MAX_BYTES = 64
_DIGEST_CHARS = 24
# The lint workflow works for every tenant at once: its key is outside the tenant alphabet.
LINT_FAIRNESS_KEY = "*lint"

# One tenant's share of the model queue's rate (Temporal's per-fairness-key rate limit). Priority orders
# the calls waiting in the queue, but a bulk import keeps the queue's rate spent: every interactive call
# would still wait for the next free dispatch, once per step of its compile. Capping any one tenant below
# the whole rate keeps the rest free, so another tenant's call is dispatched as soon as it is queued; the
# bulk tenant loses at most this share of the quota while it is alone.
DEFAULT_TENANT_QUOTA_SHARE = 0.85

# Temporal clamps weights to this range; a setting outside it is refused rather than silently clamped.
MIN_WEIGHT = 0.001
MAX_WEIGHT = 1000.0


def priority_key(trigger: str) -> int:
    """The priority key a compile woken by `trigger` runs at (1 runs first)."""
    return PRIORITY_BY_TRIGGER.get(trigger, LOWEST_PRIORITY)


def fairness_key(tenant: str) -> str:
    """The fairness key of a tenant's compiles: the tenant id, or a shortened form that cannot collide."""
    if len(tenant.encode()) <= FAIRNESS_KEY_MAX_BYTES:
        return tenant
    digest = hashlib.sha256(tenant.encode()).hexdigest()[:_DIGEST_CHARS]
    keep = FAIRNESS_KEY_MAX_BYTES - _DIGEST_CHARS - 1
    return f"{tenant[:keep]}~{digest}"


def tenant_calls_per_second(queue_per_second: float, share: float) -> float:
    """One tenant's model calls a second (before its weight): `share` of the queue's rate, rounded down
    to the thousandth Temporal keeps, and never below one call a thousand seconds."""
    # The small epsilon keeps a product that is a whole thousandth in decimals (487.7 x 0.85) from
    # flooring one thousandth lower for its binary rounding.
    return max(math.floor(queue_per_second * share * 1000 + 1e-6) / 1000, 0.001)


def weight_problem(weight: float) -> str | None:
    if not math.isfinite(weight) or not MIN_WEIGHT <= weight <= MAX_WEIGHT:
        return f"a weight must be between {MIN_WEIGHT} and {MAX_WEIGHT:g}, got {weight!r}"
    return None


def parse_tenant_weights(text: str) -> dict[str, float]:
    """`tenant=weight` pairs separated by commas (`acme=4,globex=2.5`); blank gives none.

    Raises ValueError with one sentence naming the bad pair."""
    weights: dict[str, float] = {}
    for raw in text.split(","):
        pair = raw.strip()
        if not pair:
            continue
        tenant, sep, value = pair.partition("=")
        tenant, value = tenant.strip(), value.strip()
        if not sep or not tenant or not value:
            raise ValueError(f"expected tenant=weight, got {pair!r}")
        if not SCOPE_PATTERN.fullmatch(tenant):
            raise ValueError(f"{tenant!r} is not a tenant id (1-128 of A-Z a-z 0-9 _ . : @ -)")
        try:
            weight = float(value)
        except ValueError:
            raise ValueError(f"the weight of {tenant!r} is not a number: {value!r}") from None
        problem = weight_problem(weight)
        if problem:
            raise ValueError(f"{tenant!r}: {problem}")
        if tenant in weights:
            raise ValueError(f"{tenant!r} is given twice")
        weights[tenant] = weight
    return weights
