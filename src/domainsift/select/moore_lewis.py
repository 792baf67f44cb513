"""Moore–Lewis (2010): cross-entropy difference between an in-domain and a general LM.

score(s) = H_general(s) - H_in(s) in bits, so higher is more in-domain: per token by default
(cross-entropies), or for the whole sentence with ``per="sentence"`` (the difference of the two
sentence log-probabilities, as paper 000 ran it through pamelashapiro/moore-lewis). The general LM
is trained on a seeded random sample of the pool of the same size as the in-domain set (the
original paper's recipe). Both are Kneser–Ney n-gram models trained with VariKN (see
:mod:`domainsift.lm`); ``prune_scale=0`` keeps every n-gram (no pruning, no cut-off), so
``order=5, prune_scale=0, per="sentence"`` is paper 000's setting (appendix A.5: KenLM 5-grams,
unpruned).
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
        Param("prune_scale", float, 0.0001, "VariKN's data-cost scale (smaller keeps more n-grams; 0: no "
              "pruning and no count cut-off, every n-gram kept, as paper 000 ran it)",
              check=lambda v: None if v >= 0 else f"must be 0 (no pruning) or positive, got {v}"),
        Param("per", str, "token", "token: the difference of per-token cross-entropies; sentence: of whole "
              "sentence log-probabilities (paper 000's setting, with --order 5 --prune-scale 0)",
              choices=("token", "sentence")),
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
        if self.per == "sentence":
            return self.in_lm_.log_prob(texts) - self.general_lm_.log_prob(texts)
        return self.general_lm_.cross_entropy(texts) - self.in_lm_.cross_entropy(texts)
