"""A claim's text: a body's lines, each read as a reader reads it, and the key that says two lines
are the same claim."""

from __future__ import annotations

import re

from domain.aliases import normalize_alias

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"[*_`]+")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def plain_text(line: str) -> str:
    """The line as a reader reads it: link targets, emphasis and the bullet dropped."""
    return _EMPHASIS.sub("", _LINK.sub(r"\1", _BULLET.sub("", line))).strip()


def claim_key(line: str) -> str:
    """Two lines are the same claim when their plain text normalises alike (case, accents,
    punctuation and spacing do not make a new claim)."""
    return normalize_alias(plain_text(line))


def body_lines(body: str | None) -> list[str]:
    """The claims of a body, in order: its non-blank lines, stripped."""
    return [line.strip() for line in (body or "").splitlines() if line.strip()]
