"""Baseline: seeded random vectors, so clustering assigns sentences at random."""

from __future__ import annotations

import numpy as np


class RandomEmbedder:
    def __init__(self, dim: int = 50, seed: int = 0):
        self.dim = dim
        self.seed = seed
        self.name = "random"

    def encode(self, texts: list[str]) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        return rng.standard_normal((len(texts), self.dim)).astype(np.float32)
