"""API tokens: what one looks like, and the only form of it that is ever stored.

A token is "wk_" and 43 URL-safe characters (32 random bytes): guessing one is hopeless, so a plain
SHA-256 of it (no salt, no slow hash) is a safe lookup key, and it lets a request find its token by
an index instead of comparing against every stored hash.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import UTC, datetime, timedelta
from typing import Literal

TOKEN_PREFIX = "wk_"
_TOKEN_SHAPE = re.compile(r"^wk_[A-Za-z0-9_-]{43}$")
SHOWN_PREFIX_LENGTH = 10  # "wk_" and 7 characters: enough to tell tokens apart in a list, useless to an attacker


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def looks_like_token(value: str) -> bool:
    return bool(_TOKEN_SHAPE.fullmatch(value))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def shown_prefix(token: str) -> str:
    return token[:SHOWN_PREFIX_LENGTH]


# What a token may do, each right including the ones before it: `read` reads the wiki, `write` also
# retains memories, `operator` also reads the server's own counters.
RIGHTS = ("read", "write", "operator")
Rights = Literal["read", "write", "operator"]
DEFAULT_RIGHTS: Rights = "read"
_DURATION = re.compile(r"^(\d{1,6})\s*([mhdw])$")
_DURATION_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def allows(rights: str, needed: Rights) -> bool:
    """Whether a token with `rights` may do what needs `needed` (an unknown right allows nothing)."""
    return rights in RIGHTS and RIGHTS.index(rights) >= RIGHTS.index(needed)


def parse_expiry(value: str, now: datetime) -> datetime:
    """When a token given `--expires VALUE` at `now` expires: a duration (90m, 12h, 30d, 2w) from now,
    or an ISO 8601 date or date-time (UTC when it names no offset), which must be in the future."""
    text = value.strip().lower()
    duration = _DURATION.fullmatch(text)
    if duration:
        amount = int(duration.group(1))
        if amount == 0:
            raise ValueError("--expires must be a positive duration (e.g. 30d)")
        return now + amount * _DURATION_UNITS[duration.group(2)]
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"--expires must be a duration (90m, 12h, 30d, 2w) or an ISO 8601 date "
                         f"(2027-01-31); got {value!r}") from None
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    if when <= now:
        raise ValueError(f"--expires {value} is already past")
    return when
