"""Sentence boundaries that know abbreviations: "on Webster St with Dr. Patel." is one sentence.

pysbd (rule-based, its abbreviation lists and rules ship inside the package, no model to load) does
the splitting; a line break always ends a sentence, as a memory written one line per thought means.
"""

from __future__ import annotations

import functools
import threading

import pysbd

# A Segmenter keeps the text it is splitting on itself, so two threads must never share one: the
# worker splits memories on several threads at once (planners/cpu_pool.py).
_local = threading.local()


def _segmenter() -> pysbd.Segmenter:
    segmenter = getattr(_local, "segmenter", None)
    if segmenter is None:
        segmenter = _local.segmenter = pysbd.Segmenter(language="en", clean=False)
    return segmenter


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
