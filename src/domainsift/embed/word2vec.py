"""Baseline: word2vec trained on a corpus, averaged over each sentence."""

from __future__ import annotations

import re

import numpy as np

from .base import FittedEmbedder

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class Word2VecEmbedder(FittedEmbedder):
    """gensim word2vec (CBOW) fitted once (:meth:`fit`); a sentence is the mean of its known words."""

    def __init__(self, vector_size: int = 100, epochs: int = 10, seed: int = 0):
        self.vector_size = vector_size
        self.epochs = epochs
        self.seed = seed
        self.name = f"word2vec{vector_size}"

    def _fit(self, texts):
        from .._internal.optional import require
        Word2Vec = require("gensim.models", "word2vec", "gensim").Word2Vec
        # one worker: gensim is only deterministic under a seed with a single thread
        self._model = Word2Vec([tokenize(t) for t in texts], vector_size=self.vector_size, window=5,
                               min_count=1, workers=1, seed=self.seed, epochs=self.epochs)
        self.dim_ = self.vector_size

    def _transform(self, texts):
        wv = self._model.wv
        out = np.zeros((len(texts), self.vector_size), dtype=np.float32)
        for i, t in enumerate(texts):
            toks = [w for w in tokenize(t) if w in wv.key_to_index]
            if toks:
                out[i] = wv[toks].mean(0)
        return out
