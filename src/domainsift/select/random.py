"""Baseline: a seeded random ranking."""

from __future__ import annotations

import numpy as np

from ..corpus import as_corpus
from .base import SEED, BaseSelector


class RandomSelector(BaseSelector):
    """Uniform random scores; the same seed and pool give the same scores."""

    name = "random"
    per_sentence = False  # one seeded stream over the whole pool
    params = (SEED,)

    def fit(self, in_domain, pool=None) -> "RandomSelector":
        self._fit_input(in_domain, pool)
        return self

    def score(self, records) -> np.ndarray:
        return np.random.default_rng(self.seed).random(len(as_corpus(records)))
