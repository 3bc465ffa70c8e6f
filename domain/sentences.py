"""Sentence boundaries that know abbreviations: "on Webster St with Dr. Patel." is one sentence.

pysbd (rule-based, its abbreviation lists and rules ship inside the package, no model to load) does
the splitting; a line break always ends a sentence, as a memory written one line per thought means.
"""

from __future__ import annotations

import functools

import pysbd


@functools.cache
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


# Large enough for a section rebuilt from thousands of memories at each batch: a smaller cache
# cycled through them and split every memory again each time.
@functools.lru_cache(maxsize=65_536)
def split_sentences(text: str) -> tuple[str, ...]:
    """The text's sentences in order, each stripped; empty ones dropped. Same text, same split."""
    parts: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts.extend(part.strip() for part in _segmenter().segment(line) if part.strip())
    return tuple(parts)
