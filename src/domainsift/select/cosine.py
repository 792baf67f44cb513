"""Domain-Cosine (paper 000, section 4): cosine similarity to the in-domain centroid."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import BaseSelector


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


class CosineSelector(BaseSelector):
    """Ranks sentences by cosine similarity to the mean in-domain vector.

    ``embedder`` is a name for :func:`domainsift.embed.get_embedder` or any object
    with ``encode``; vectors go through the embedding cache.
    """

    name = "cosine"

    def __init__(self, embedder="minilm", batch_size: int = 64, max_length: int = 128,
                 device: str | None = None, cache_dir: str | None = None, seed: int = 0,
                 progress: bool = True):
        self.embedder = embedder
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.cache_dir = cache_dir
        self.seed = seed
        self.progress = progress

    def _encoder(self):
        if not hasattr(self, "_enc"):
            if isinstance(self.embedder, str):
                from ..pipeline import EmbedConfig
                self._enc = EmbedConfig(embedder=self.embedder, batch_size=self.batch_size,
                                        max_length=self.max_length, device=self.device,
                                        seed=self.seed, cache_dir=self.cache_dir,
                                        progress=self.progress).build()
            else:
                self._enc = self.embedder
        return self._enc

    @property
    def model_name(self) -> str:
        return getattr(self._encoder(), "name", str(self.embedder))

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._encoder().encode(list(texts)), dtype=np.float32)

    def fit(self, in_domain: Sequence[str], pool: Sequence[str] | None = None) -> "CosineSelector":
        self._check_fit_input(in_domain)
        self.centroid_ = _unit(_unit(self._embed(in_domain)).mean(0))
        return self

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """Cosine similarity to the centroid, (n,) in [-1, 1]."""
        return _unit(self._embed(texts)) @ self.centroid_

    def signature_params(self) -> dict:
        p = super().signature_params()
        p["embedder"] = self.model_name
        p.pop("cache_dir", None)
        return p
