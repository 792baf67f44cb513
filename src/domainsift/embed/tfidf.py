"""Baseline: tf-idf vectors reduced by truncated SVD (LSA)."""

from __future__ import annotations

from .base import FittedEmbedder


class TfidfSvdEmbedder(FittedEmbedder):
    """tf-idf + truncated SVD, fitted once (:meth:`fit`), then a fixed map for any text."""

    def __init__(self, n_components: int = 50, seed: int = 0):
        self.n_components = n_components
        self.seed = seed
        self.name = f"tfidf-svd{n_components}"

    def _fit(self, texts):
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer
        self._vec = TfidfVectorizer(sublinear_tf=True, min_df=1)
        try:
            x = self._vec.fit_transform(texts)
        except ValueError:  # sklearn: empty vocabulary
            x = None
        if x is None or x.shape[0] < 2 or x.shape[1] < 2:
            from .._internal.errors import DomainsiftError
            raise DomainsiftError(f"{self.name} needs at least two lines and two distinct words to fit on")
        k = max(1, min(self.n_components, x.shape[1] - 1, x.shape[0] - 1))
        self._svd = TruncatedSVD(n_components=k, random_state=self.seed).fit(x)
        self.dim_ = k

    def _transform(self, texts):
        return self._svd.transform(self._vec.transform(texts))
