"""Moore–Lewis (2010): cross-entropy difference between an in-domain and a general LM.

score(s) = H_general(s) - H_in(s), per-token cross-entropies in bits, so higher is
more in-domain. The general LM is trained on a seeded random sample of the pool
of the same size as the in-domain set (the original paper's recipe). Both are
Kneser–Ney n-gram models trained with VariKN (see :mod:`domainsift.lm`).
"""

from __future__ import annotations

import numpy as np

from ..io.corpus import as_corpus
from .._internal.errors import DomainsiftError
from .base import PROGRESS, SEED, BaseSelector, Param, at_least


class MooreLewisSelector(BaseSelector):
    name = "moore-lewis"
    needs_pool = True
    model_name = "n-gram (VariKN)"
    params = (
        Param("order", int, 3, "n-gram order of both language models", check=at_least(1)),
        Param("prune_scale", float, 0.0001, "VariKN's data-cost scale (smaller keeps more n-grams)",
              check=lambda v: None if v > 0 else f"must be positive, got {v}"),
        SEED, PROGRESS,
    )

    learned = ("in_lm_", "general_lm_")
    saves_state = True  # the two LMs as ARPA files: a killed run does not train them again; Ray ships them

    def save_state(self, path) -> None:
        from .._internal.atomic import atomic_dir
        with atomic_dir(path) as tmp:
            self.in_lm_.save(tmp / "in.arpa")
            self.general_lm_.save(tmp / "general.arpa")

    def load_state(self, path) -> "MooreLewisSelector":
        from pathlib import Path

        from .._internal.checksums import verify
        from ..lm import NgramLM
        path = Path(path)
        if not (path / "in.arpa").is_file() or not (path / "general.arpa").is_file():
            raise DomainsiftError(f"{path}: not a saved moore-lewis fit (in.arpa, general.arpa)")
        verify(path)
        self.reset()
        self.in_lm_ = NgramLM(self.order, self.prune_scale).load(str(path / "in.arpa"))
        self.general_lm_ = NgramLM(self.order, self.prune_scale).load(str(path / "general.arpa"))
        return self

    def fit(self, in_domain, pool=None) -> "MooreLewisSelector":
        from ..lm import NgramLM
        in_domain, pool = self._fit_input(in_domain, pool)
        rng = np.random.default_rng(self.seed)
        size = min(len(in_domain), len(pool))
        sample = [pool.texts[i] for i in rng.choice(len(pool), size=size, replace=False)]
        self.in_lm_ = NgramLM(self.order, self.prune_scale).fit(in_domain.texts)
        self.general_lm_ = NgramLM(self.order, self.prune_scale).fit(sample)
        return self

    def score(self, records) -> np.ndarray:
        self.require_fitted()
        texts = as_corpus(records).texts
        return self.general_lm_.cross_entropy(texts) - self.in_lm_.cross_entropy(texts)
