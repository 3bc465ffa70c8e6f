"""Deterministic markdown rendering: page bodies and rollup lists (facts §14, §17; seed 000 step 2.3)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

from domain.guards import page_href

FIRST_SENTENCE_FALLBACK_CHARS = 160
# JS `.` stops at every line terminator, not only "\n"; `\Z` because Python's `$` also matches
# before a final newline.
_FIRST_SENTENCE = re.compile(r"[^\n\r\u2028\u2029]*?[.!?](?=\s|\Z)")


class _Section(Protocol):
    heading: str
    body_md: str
    position: int


class _Child(Protocol):
    type: str
    slug: str
    title: str
    summary: str | None


def render_body_markdown(sections: Iterable[_Section]) -> str:
    """A page's `body_md`, always derived from its sections (facts §17 `renderBodyMarkdown`).

    Each section is `## <heading>\\n\\n<body>` trimmed; sections in position order (stable for
    equal positions), joined by a blank line. No sections -> "".
    """
    ordered = sorted(sections, key=lambda section: section.position)
    return "\n\n".join(f"## {section.heading}\n\n{section.body_md}".strip() for section in ordered)


def first_sentence(summary: str | None) -> str:
    """The first sentence of a summary, for rollup bullets (facts §14 `firstSentenceOf`).

    Up to the first `.`, `!` or `?` followed by whitespace or the end, never crossing a line break.
    Without one: the whole text, or its first 160 characters trimmed plus "…" when longer. Kept
    quirk: "St. Louis has great BBQ." gives "St.". Blank -> "".
    """
    text = (summary or "").strip()
    if not text:
        return ""
    match = _FIRST_SENTENCE.match(text)
    if match:
        return match.group(0).strip()
    if len(text) > FIRST_SENTENCE_FALLBACK_CHARS:
        return f"{text[:FIRST_SENTENCE_FALLBACK_CHARS].strip()}…"
    return text


def render_rollup_list(children: Iterable[_Child]) -> str:
    """A rollup section body: one linked bullet per child page (seed 000 step 2.3, facts §14).

    `- [**<title>**](/wiki/<type>/<slug>) — <first sentence of summary>`, the tail omitted when the
    summary is blank; bullets joined by newlines, in the given order.
    """
    lines = []
    for child in children:
        sentence = first_sentence(child.summary)
        tail = f" — {sentence}" if sentence else ""
        lines.append(f"- [**{child.title}**]({page_href(child.type, child.slug)}){tail}")
    return "\n".join(lines)
