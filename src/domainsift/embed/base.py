"""What the corpus-fitted baseline embedders share: fit once, then transform.

tf-idf, word2vec and LDA learn their vector space from text. They are fitted
once on the text that defines the space (the corpus to cluster, or the pool of
a selection) and then map any text into that one space, so a line's vector does
not depend on which other lines are encoded with it. Their cache key names the
fitted state (a hash of the fitting texts and the parameters).
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from .._internal.errors import DomainsiftError


class FittedEmbedder:
    needs_fit = True
    name = "fitted"

    def _params_key(self) -> str:
        return "|".join(f"{k}:{v}" for k, v in sorted(vars(self).items())
                        if not k.startswith("_") and not k.endswith("_"))

    def fit(self, texts: Sequence[str]) -> "FittedEmbedder":
        texts = list(texts)
        if not texts:
            raise DomainsiftError(f"{self.name}: cannot fit on no texts")
        h = hashlib.sha256(self._params_key().encode())
        from .._internal.checksums import hash_texts
        hash_texts(h, texts)
        self._fit(texts)
        self.fit_key_ = h.hexdigest()[:16]
        return self

    @property
    def cache_key(self) -> str:
        self._check_fitted()
        return f"{self.name}|fit:{self.fit_key_}"

    def _check_fitted(self) -> None:
        if not hasattr(self, "fit_key_"):
            raise DomainsiftError(f"{self.name} is not fitted: call fit(texts) on the texts that define "
                                  "its vector space first")

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self._check_fitted()
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim_), dtype=np.float32)
        return np.asarray(self._transform(texts), dtype=np.float32)

    def _fit(self, texts: list[str]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _transform(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError
