"""Baseline: tf-idf vectors reduced by truncated SVD (LSA)."""

from __future__ import annotations

import numpy as np


class TfidfSvdEmbedder:
    """Fits tf-idf + truncated SVD on the texts it encodes (transductive)."""

    def __init__(self, n_components: int = 50, seed: int = 0):
        self.n_components = n_components
        self.seed = seed
        self.name = f"tfidf-svd{n_components}"

    def encode(self, texts: list[str]) -> np.ndarray:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer
        x = TfidfVectorizer(sublinear_tf=True, min_df=1).fit_transform(texts)
        k = max(1, min(self.n_components, x.shape[1] - 1, x.shape[0] - 1))
        return TruncatedSVD(n_components=k, random_state=self.seed).fit_transform(x).astype(np.float32)
