"""Deterministic markdown rendering: page bodies, rollup lists and the body a promoted section leaves."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

from domain.guards import page_href
from domain.line_formats import rollup_line, see_line
from domain.markup import safe_markdown
from domain.sentences import split_sentences

FIRST_SENTENCE_FALLBACK_CHARS = 160
# JS `.` stops at every line terminator, not only "\n"; `\Z` because Python's `$` also matches
# before a final newline.
_FIRST_SENTENCE = re.compile(r"[^\n\r\u2028\u2029]*?[.!?](?=\s|\Z)")
# The original strips `/^[-•\s]+/` so a highlight written as "- Uchi" or "• Uchi" is not double-bulleted.
_HIGHLIGHT_BULLET_PREFIX = re.compile(r"^[-•\s]+")


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
    """A page's `body_md`, always derived from its sections.

    Each section is `## <heading>\\n\\n<body>` trimmed; sections in position order (stable for
    equal positions), joined by a blank line. No sections -> "".
    """
    ordered = sorted(sections, key=lambda section: section.position)
    # Safe whatever the rows hold (rows written before the rule, a hand-edited body): see domain.markup.
    return "\n\n".join(safe_markdown(f"## {section.heading}\n\n{section.body_md}".strip()) for section in ordered)


def first_sentence(summary: str | None) -> str:
    """The first sentence of a summary, for rollup bullets.

    The first line's first sentence (domain/sentences.py: "St. Louis has great BBQ." is one) when the
    line has a `.`, `!` or `?` followed by whitespace or the end. Without one: the whole text, or its
    first 160 characters trimmed plus "…" when longer. Blank -> "".
    """
    text = (summary or "").strip()
    if not text:
        return ""
    match = _FIRST_SENTENCE.match(text)
    if match:
        # The line holds a terminator; its first sentence as a splitter that knows abbreviations reads it.
        line = match.group(0) + text[match.end():].split("\n", 1)[0]
        return next(iter(split_sentences(line)), match.group(0).strip())
    if len(text) > FIRST_SENTENCE_FALLBACK_CHARS:
        return f"{text[:FIRST_SENTENCE_FALLBACK_CHARS].strip()}…"
    return text


def render_rollup_list(children: Iterable[_Child]) -> str:
    """A rollup section body: one linked bullet per child page.

    `- [**<title>**](/wiki/<type>/<slug>) — <first sentence of summary>`, the tail omitted when the
    summary is blank; bullets joined by newlines, in the given order.
    """
    return "\n".join(rollup_line(child.title, page_href(child.type, child.slug), first_sentence(child.summary))
                     for child in children)


def render_promoted_parent_section(
    parent_summary: str,
    top_highlights: Iterable[str],
    child_title: str,
    child_type: str,
    child_slug: str,
) -> str:
    """The body left on a parent section once it is promoted into its own page.

    `[summary trimmed, highlights, "See: [<title>](/wiki/<type>/<slug>)"]`, empty parts dropped,
    joined by a blank line, plus a trailing newline. Each highlight becomes `- <h>` after stripping
    its leading dashes, bullets and spaces; highlights are joined by newlines. The see-link text is
    the child's plain title (not bold).
    """
    highlights = "\n".join(f"- {_HIGHLIGHT_BULLET_PREFIX.sub('', line)}" for line in top_highlights)
    see_link = see_line(child_title, page_href(child_type, child_slug))
    parts = [parent_summary.strip(), highlights, see_link]
    return "\n\n".join(part for part in parts if part) + "\n"
