"""Baseline: word2vec trained on the corpus itself, averaged over each sentence."""

from __future__ import annotations

import re

import numpy as np

from ..errors import missing_extra

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class Word2VecEmbedder:
    """Trains gensim word2vec (skip-gram off: CBOW) on the texts, then averages."""

    def __init__(self, vector_size: int = 100, epochs: int = 10, seed: int = 0):
        self.vector_size = vector_size
        self.epochs = epochs
        self.seed = seed
        self.name = f"word2vec{vector_size}"

    def encode(self, texts: list[str]) -> np.ndarray:
        try:
            from gensim.models import Word2Vec
        except ImportError:
            raise missing_extra("gensim", "word2vec") from None
        sents = [tokenize(t) for t in texts]
        # one worker: gensim is only deterministic under a seed with a single thread
        model = Word2Vec(sents, vector_size=self.vector_size, window=5, min_count=1,
                         workers=1, seed=self.seed, epochs=self.epochs)
        out = np.zeros((len(texts), self.vector_size), dtype=np.float32)
        for i, toks in enumerate(sents):
            if toks:
                out[i] = model.wv[toks].mean(0)
        return out
