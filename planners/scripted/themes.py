"""The themes of a person's page: which section of it a memory about them goes to, offline.

A page about someone collects what is said of them over months: their work, their family, their pets,
what they make, where they go, the causes they give time to. One notes section within its bound can
say only a part of hundreds of memories, so a person's page has a section per theme of their life,
each condensed on its own (planners/scripted/condense.py) and each within the bound.

A memory's theme is read by meaning with the embeddings the product ships for recall (the static
model of planners/embeddings.py): the theme whose description its text is nearest to, when it is
nearer to it than to the next by at least MARGIN; a memory no theme clearly fits stays in the notes.
The theme depends on the memory's text alone. A page is written by theme once it has THEMED_FROM
memories (`is_themed`): its notes keep what came before, each later memory goes to its theme. Which
batch crosses the line depends on the order memories are compiled in, which a rebuild repeats.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from domain.aliases import format_heading_from_slug
from domain.context import MemoryRecord
from planners.embeddings import static_embedder


@dataclass(frozen=True)
class Theme:
    slug: str  # its section's slug; the heading is the slug's (domain/aliases.py format_heading_from_slug)
    description: str  # the words the theme is recognised by (embedded, never matched as words)


THEMES: tuple[Theme, ...] = (
    Theme("work", "job work career business company office colleague boss salary promotion"),
    Theme("family", "family husband wife kids children son daughter mother father parents sister brother"),
    Theme("home", "home house apartment city moved neighborhood rent"),
    Theme("pets", "pet dog cat puppy kitten animal vet"),
    Theme("hobbies", "painting art music guitar writing photography dance pottery drawing"),
    Theme("outings", "trip travel vacation hiking camping beach nature road trip"),
    Theme("health", "health doctor hospital exercise gym running injury stress"),
    Theme("community", "volunteer community charity cause activism church support group"),
    Theme("learning", "school study class course learning degree book reading"),
)
THEME_SLUGS = frozenset(theme.slug for theme in THEMES)
# How much nearer a memory must be to its theme than to the next one (cosine of unit vectors).
MARGIN = 0.02


def theme_heading(slug: str) -> str | None:
    return format_heading_from_slug(slug) if slug in THEME_SLUGS else None


@functools.cache
def _theme_vectors() -> np.ndarray:
    return static_embedder().embed([theme.description for theme in THEMES])


@functools.lru_cache(maxsize=16_384)
def theme_of(text: str) -> str | None:
    """The slug of the theme `text` is about, or None when no theme clearly fits."""
    if not text.strip():
        return None
    scores = static_embedder().embed([text])[0] @ _theme_vectors().T
    order = np.argsort(-scores, kind="stable")
    if float(scores[order[0]] - scores[order[1]]) < MARGIN:
        return None
    return THEMES[int(order[0])].slug


def log_groups(memories: Sequence[MemoryRecord], notes_slug: str, *, person: bool) -> list[tuple[str, list[MemoryRecord]]]:
    """The memories of a page's log sections by slug: all in `notes_slug`, or on a person's page
    (`person`) those no theme clearly fits there, then each theme's, in the order of THEMES; sections
    with no memory left out."""
    if not person:
        return [(notes_slug, list(memories))]
    groups: dict[str, list[MemoryRecord]] = {notes_slug: [], **{theme.slug: [] for theme in THEMES}}
    for memory in memories:
        groups[theme_of(memory.content) or notes_slug].append(memory)
    return [(slug, group) for slug, group in groups.items() if group]


# A person's page is written by theme once it has this many memories: below it, one notes section
# says most of them within its bound (measured on real conversations: up to about a hundred memories
# one section said more, for fewer characters, than themes with their own counts and headings).
THEMED_FROM = 100
_SPAN_COUNT = re.compile(r"^- (\d+) memor(?:y|ies),")


def is_themed(sections: Sequence[tuple[str, str]], new_memories: int) -> bool:
    """Whether a person's page (its sections as (slug, body)) takes its new memories by theme: it has
    theme sections already, or its notes count with the new memories reaches THEMED_FROM."""
    if any(slug in THEME_SLUGS for slug, _ in sections):
        return True
    counted = [int(match.group(1)) for slug, body in sections if slug == "notes"
               and (match := _SPAN_COUNT.match(body.strip())) is not None]
    return (counted[0] if counted else 0) + new_memories >= THEMED_FROM
