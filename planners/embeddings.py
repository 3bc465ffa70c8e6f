"""Embeddings for recall's semantic retriever, with no model download at run time.

The static model is WordLlama's `l2_supercat` (256 dimensions): a token-embedding table and its
tokenizer that ship inside the `wordllama` wheel (16 MB), loaded here from the package's own files.
WordLlama's own loader looks for the tokenizer under another folder name and would fall back to a
download, so it is not used; nothing here opens a network connection. A sentence is the average of
its tokens' vectors: a text embeds in microseconds, 1,000 claims in about 20 ms on one core.

Chosen because it is a maintained package whose weights are in its wheel (model2vec's static models
are downloaded from a model hub on first use), small, and numpy-only at inference.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

STATIC_MODEL = "wordllama-l2-supercat-256"


Purpose = Literal["document", "query"]


class Embedder(Protocol):
    model: str  # the model's name, stored with each vector
    dimensions: int  # the length of each vector, stored with it too
    remote: bool  # whether embedding calls a service (then it runs off the event loop)

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """One unit-length float32 row per text. A provider may embed a question (`query`)
        differently from the texts it is matched against (`document`)."""
        ...


class StaticEmbedder:
    model = STATIC_MODEL
    dimensions = 256
    remote = False

    def __init__(self) -> None:
        import wordllama
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference

        root = Path(wordllama.__file__).parent
        tokenizer = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
        with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np", device="cpu") as f:
            table = f.get_tensor("embedding.weight")
        self._inference = WordLlamaInference(table, tokenizer, binary=False)

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = np.asarray(self._inference.embed(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)


@functools.cache
def static_embedder() -> StaticEmbedder:
    """The process's one static model (loaded once, about half a second)."""
    return StaticEmbedder()


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def cosine_ranking(query: np.ndarray, ids: Sequence[str], matrix: np.ndarray, limit: int) -> list[str]:
    """`ids` by cosine similarity to `query`, best first: every vector scored (one matrix product),
    then the head taken. `matrix` holds the unit vectors of `ids`, one row each."""
    if not ids:
        return []
    # einsum, not the BLAS product: on a loaded machine BLAS's worker threads wait for CPUs and one
    # product of 10,000 rows takes tens of milliseconds instead of a few on one thread.
    scores = np.einsum("ij,j->i", matrix, np.asarray(query, dtype=np.float32))
    count = min(limit, len(ids))
    head = np.argpartition(-scores, count - 1)[:count]
    head = head[np.argsort(-scores[head], kind="stable")]
    return [ids[i] for i in head if scores[i] > 0.0]
