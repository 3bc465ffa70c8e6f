"""Text read from memories: clean prose out of untrusted memory text, sentences, and dates.

The scripted planner writes its pages with these, and the compact plan contract quotes a memory's
first sentence and date with the same ones, so both say a memory's fact the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from domain.context import MemoryRecord
from domain.guards import strip_wikilinks
from domain.sentences import split_sentences

SENTENCE_MAX_CHARS = 240
_UUID_ANYWHERE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")

def clean(text: Any) -> str:
    """Prose safe to write: no wikilinks, no ids, single spaces. Non-strings give ""."""
    if not isinstance(text, str):
        return ""
    text = strip_wikilinks(text).replace("[[", "").replace("]]", "")
    text = _UUID_ANYWHERE.sub("", text)
    return " ".join(text.split())


def sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return ""
    return text if text[-1] in ".!?…" else text + "."


def truncate(text: str, limit: int = SENTENCE_MAX_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def sentences(content: str) -> list[str]:
    cleaned = clean(content)
    return list(split_sentences(cleaned)) if cleaned else []


def first_sentence(content: str) -> str:
    """The memory's first sentence, cleaned and capped: the short factual line bullets are made of."""
    parts = sentences(content)
    return sentence(truncate(parts[0])) if parts else ""


def title_case(text: str) -> str:
    # Same rule as the parent expander's titleCase, so a city topic's title is the one it looks up.
    return " ".join(word[:1].upper() + word[1:] for word in text.split())


def humanize(kind: str) -> str:
    words = kind.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def with_article(noun: str) -> str:
    article = "An" if noun[:1].lower() in "aeiou" else "A"
    return f"{article} {noun}"


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def as_utc(moment: datetime) -> datetime:
    # A naive time is taken as UTC; dates are UTC dates, so a plan never depends on the host's zone.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def memory_date(memory: MemoryRecord) -> str:
    # When the memory happened (created_at: its occurred_at, else when it was retained), never when
    # it was last written: re-retaining a memory must not move its date.
    return as_utc(memory.created_at).date().isoformat()
