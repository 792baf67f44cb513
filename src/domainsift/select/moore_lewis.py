"""Moore–Lewis (2010): cross-entropy difference between an in-domain and a general LM.

score(s) = H_general(s) - H_in(s), per-token cross-entropies in bits, so higher is
more in-domain. The general LM is trained on a seeded random sample of the pool
of the same size as the in-domain set (the original paper's recipe). Both are
Kneser–Ney n-gram models trained with VariKN (see :mod:`domainsift.lm`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import DomainsiftError
from .base import BaseSelector


class MooreLewisSelector(BaseSelector):
    name = "moore-lewis"

    def __init__(self, order: int = 3, seed: int = 0, prune_scale: float = 0.0001,
                 progress: bool = True):
        self.order = order
        self.seed = seed
        self.prune_scale = prune_scale
        self.progress = progress

    model_name = "n-gram (VariKN)"

    def fit(self, in_domain: Sequence[str], pool: Sequence[str] | None = None) -> "MooreLewisSelector":
        from ..lm import NgramLM
        self._check_fit_input(in_domain)
        if not pool:
            raise DomainsiftError("moore-lewis needs the pool to train its general language model")
        rng = np.random.default_rng(self.seed)
        size = min(len(in_domain), len(pool))
        sample = [pool[i] for i in rng.choice(len(pool), size=size, replace=False)]
        self.in_lm_ = NgramLM(self.order, self.prune_scale).fit(in_domain)
        self.general_lm_ = NgramLM(self.order, self.prune_scale).fit(sample)
        return self

    def score(self, texts: Sequence[str]) -> np.ndarray:
        return self.general_lm_.cross_entropy(texts) - self.in_lm_.cross_entropy(texts)
