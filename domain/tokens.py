"""API tokens: what one looks like, and the only form of it that is ever stored.

A token is "wk_" and 43 URL-safe characters (32 random bytes): guessing one is hopeless, so a plain
SHA-256 of it (no salt, no slow hash) is a safe lookup key, and it lets a request find its token by
an index instead of comparing against every stored hash.
"""

from __future__ import annotations

import hashlib
import re
import secrets

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
