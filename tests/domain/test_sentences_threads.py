"""Sentences are split on several threads at once (the worker's CPU pool): each thread has its own
splitter, so a split never takes another thread's text for its own."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

from domain.sentences import split_sentences

WORDS = ["Dinner", "at", "Casa", "Sol", "on", "Webster", "St.", "with", "Dr.", "Patel", "the", "salsa", "verde",
         "was", "great", "we", "left", "at", "9", "p.m.", "Lena", "said", "U.S.", "trip", "next", "week"]


def text(rng: random.Random) -> str:
    sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14))) + rng.choice([".", "!", "?"])
                 for _ in range(rng.randint(1, 6))]
    return (" " if rng.random() < 0.7 else "\n").join(sentences)


def test_concurrent_splits_are_the_splits_one_thread_makes() -> None:
    rng = random.Random(11)
    texts = [text(rng) for _ in range(150)]
    split = split_sentences.__wrapped__  # past the memo: every call runs a splitter
    alone = [split(t) for t in texts]
    with ThreadPoolExecutor(8) as pool:
        for _ in range(2):
            assert list(pool.map(split, texts)) == alone
