"""Baseline: LDA topic proportions of each sentence (scikit-learn)."""

from __future__ import annotations

import numpy as np


class LdaEmbedder:
    """Fits LDA on bag-of-words counts of the texts and returns topic proportions."""

    def __init__(self, n_topics: int = 50, seed: int = 0, max_iter: int = 10):
        self.n_topics = n_topics
        self.seed = seed
        self.max_iter = max_iter
        self.name = f"lda{n_topics}"

    def encode(self, texts: list[str]) -> np.ndarray:
        from sklearn.decomposition import LatentDirichletAllocation
        from sklearn.feature_extraction.text import CountVectorizer
        x = CountVectorizer(min_df=1).fit_transform(texts)
        lda = LatentDirichletAllocation(n_components=self.n_topics, learning_method="online",
                                        max_iter=self.max_iter, random_state=self.seed)
        return lda.fit_transform(x).astype(np.float32)
