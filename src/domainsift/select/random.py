"""Baseline: a seeded random ranking."""

from __future__ import annotations

import numpy as np

from ..io.corpus import as_corpus
from .base import SEED, BaseSelector


class RandomSelector(BaseSelector):
    """Uniform random scores; the same seed and pool give the same scores."""

    name = "random"
    per_sentence = False  # one seeded stream over the whole pool
    reads_content = False
    params = (SEED,)

    def fit(self, in_domain, pool=None) -> "RandomSelector":
        self._fit_input(in_domain, pool)
        return self

    def score(self, records) -> np.ndarray:
        """The scores of records that start the pool (``score_at(records, 0)``)."""
        return self.score_at(records, 0)

    def score_at(self, records, start: int) -> np.ndarray:
        """The scores of records at pool positions ``start``, ``start + 1``, ...: the same stream as
        scoring the whole pool at once (each draw takes one step of the generator), so a pool
        scored shard by shard gets the same scores."""
        bits = np.random.PCG64(np.random.SeedSequence(self.seed)).advance(int(start))
        return np.random.Generator(bits).random(len(as_corpus(records)))

    def fitted_state(self) -> dict:
        return {}

    def set_fitted(self, state: dict) -> "RandomSelector":
        return self
