"""Baseline: seeded random vectors, so clustering assigns sentences at random."""

from __future__ import annotations

import hashlib

import numpy as np


class RandomEmbedder:
    """A seeded random vector per text: the same text gets the same vector in any batch."""

    needs_fit = False

    def __init__(self, dim: int = 50, seed: int = 0):
        self.dim = dim
        self.seed = seed
        self.name = "random"

    def encode(self, texts) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            digest = hashlib.sha256(f"{self.seed}\x00{t}".encode("utf-8")).digest()
            rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
            out[i] = rng.standard_normal(self.dim)
        return out
