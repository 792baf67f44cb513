"""Baseline: a seeded random ranking."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import BaseSelector


class RandomSelector(BaseSelector):
    """Uniform random scores; the same seed and texts give the same scores."""

    name = "random"
    per_sentence = False  # one seeded stream over the whole pool

    def __init__(self, seed: int = 0):
        self.seed = seed

    def fit(self, in_domain: Sequence[str], pool: Sequence[str] | None = None) -> "RandomSelector":
        self._check_fit_input(in_domain)
        return self

    def score(self, texts: Sequence[str]) -> np.ndarray:
        return np.random.default_rng(self.seed).random(len(texts))
