"""Deterministic link rules: co-mention pairs and link context tags.

The caller decides which pages take part (entity pages citing the memory) and writes the edges;
these functions only decide which directed edges exist and how they are labelled, so the live
compile and any backfill produce the same edge set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

CO_MENTION_DIRECTED_EDGE_CAP = 10

# (slug, page_id) of a page citing a memory.
SluggedPage = tuple[str, str]
# (from_page_id, to_page_id, memory_id)
CoMentionPair = tuple[str, str, str]


def _distinct_pages_by_slug(pages: Sequence[SluggedPage]) -> list[SluggedPage]:
    # One entry per page id (a page cites a memory from several sections); first slug seen wins.
    by_page_id: dict[str, SluggedPage] = {}
    for slug, page_id in pages:
        by_page_id.setdefault(page_id, (slug, page_id))
    # Slug order (page id breaks ties) so truncation at the cap is the same on every run.
    return sorted(by_page_id.values())


def _directed_pairs(pages: list[SluggedPage], memory_id: str, cap: int) -> list[CoMentionPair]:
    pairs: list[CoMentionPair] = []
    for _, from_id in pages:
        for _, to_id in pages:
            if from_id == to_id:
                continue
            if len(pairs) >= cap:
                return pairs
            pairs.append((from_id, to_id, memory_id))
    return pairs


def co_mention_pairs(
    pages_by_memory: Mapping[str, Sequence[SluggedPage]], cap: int = CO_MENTION_DIRECTED_EDGE_CAP
) -> list[CoMentionPair]:
    """Directed reference edges between pages that cite the same memory.

    Per memory (in memory-id order): distinct pages sorted by slug; fewer than two -> nothing;
    otherwise every ordered pair (i, j), i != j, in nested-loop order, stopping at `cap` edges per
    memory. Four pages give 12 pairs, so the cap of 10 drops the last two and the edges of the last
    page are not all reciprocated: the cap bounds what one memory adds, even at the cost of symmetry.
    """
    pairs: list[CoMentionPair] = []
    for memory_id in sorted(pages_by_memory):
        pages = _distinct_pages_by_slug(pages_by_memory[memory_id])
        if len(pages) >= 2:
            pairs.extend(_directed_pairs(pages, memory_id, cap))
    return pairs


DETERMINISTIC_PREFIX = "deterministic:"
CO_MENTION_PREFIX = "co_mention:"


def deterministic_link_context(reason: str, parent_slug: str) -> str:
    """Context tag of a leaf -> parent edge from a parent candidate: `deterministic:city:toronto`."""
    return f"{DETERMINISTIC_PREFIX}{reason}:{parent_slug}"


def co_mention_context(memory_id: str) -> str:
    """Context tag of a co-mention edge: `co_mention:<memory id>`."""
    return f"{CO_MENTION_PREFIX}{memory_id}"
