"""Baseline: LDA topic proportions of each sentence (scikit-learn)."""

from __future__ import annotations

from .base import FittedEmbedder


class LdaEmbedder(FittedEmbedder):
    """LDA on bag-of-words counts, fitted once (:meth:`fit`); topic proportions of any text."""

    def __init__(self, n_topics: int = 50, seed: int = 0, max_iter: int = 10):
        self.n_topics = n_topics
        self.seed = seed
        self.max_iter = max_iter
        self.name = f"lda{n_topics}"

    def _fit(self, texts):
        from sklearn.decomposition import LatentDirichletAllocation
        from sklearn.feature_extraction.text import CountVectorizer
        self._vec = CountVectorizer(min_df=1)
        x = self._vec.fit_transform(texts)
        self._lda = LatentDirichletAllocation(n_components=self.n_topics, learning_method="online",
                                              max_iter=self.max_iter, random_state=self.seed).fit(x)
        self.dim_ = self.n_topics

    def _transform(self, texts):
        return self._lda.transform(self._vec.transform(texts))
