"""Domain-Cosine (paper 000, section 4): cosine similarity to the in-domain centroid."""

from __future__ import annotations

import numpy as np

from ..io.corpus import as_corpus
from .base import BACKEND, CACHE_DIR, DEVICE, MAX_LENGTH, PROGRESS, SEED, BaseSelector, Param, at_least


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


class CosineSelector(BaseSelector):
    """Ranks records by cosine similarity to the mean in-domain vector.

    ``embedder`` is a name for :func:`domainsift.embed.get_embedder` or any object with
    ``encode``; vectors go through the embedding cache. An embedder that learns its space
    from text (tf-idf, word2vec, LDA) is fitted once, on the pool (a seeded sample of at
    most 200,000 lines), so the in-domain set and every pool chunk share one space.
    """

    name = "cosine"
    frozen_vectors = True
    params = (
        Param("embedder", str, "minilm", "encoder: minilm (default), multilingual (USE-m, extra multilingual: "
              "0.7656 against minilm's 0.7144 on the shared benchmark; --cascade distils its student from minilm), "
              "tfidf, word2vec, lda, random, or a Hugging Face name or local path", option="--model"),
        Param("batch_size", int, 32, "sentences per encoding batch (batches are sorted by token count; the "
              "vectors do not depend on it)", check=at_least(1), signature=False),
        MAX_LENGTH, BACKEND, SEED, DEVICE, CACHE_DIR, PROGRESS,
    )

    learned = ("centroid_",)

    def reset(self) -> None:
        """Forget the centroid, and a corpus-fitted embedder's space (tf-idf, word2vec, LDA: the next
        fit learns it from its own pool); a pretrained encoder is kept, it learns nothing."""
        super().reset()
        if isinstance(self.embedder, str) and self.fit_uses_pool:
            self.__dict__.pop("_enc", None)

    def _encoder(self, fit_on=None):
        if not hasattr(self, "_enc"):
            if isinstance(self.embedder, str):
                from ..embed import EmbedConfig
                self._enc = EmbedConfig(embedder=self.embedder, batch_size=self.batch_size,
                                        max_length=self.max_length, device=self.device, seed=self.seed,
                                        cache_dir=self.cache_dir, progress=self.progress,
                                        backend=self.backend).build(fit_on)
            else:
                self._enc = self.embedder
        return self._enc

    @property
    def model_name(self) -> str:
        return getattr(self._enc, "name", None) if hasattr(self, "_enc") else str(self.embedder)

    def _embed(self, texts) -> np.ndarray:
        return np.asarray(self._encoder().encode(list(texts)), dtype=np.float32)

    @property
    def fit_uses_pool(self) -> bool:
        """A corpus-fitted embedder (tf-idf, word2vec, LDA) learns its space from the pool."""
        from ..embed import abilities
        if not isinstance(self.embedder, str) or abilities(self.embedder).kind != "baseline":
            return False
        from ..embed import get_embedder
        return bool(getattr(get_embedder(self.embedder), "needs_fit", False))

    def fitted_state(self) -> dict:
        """What a copy needs to score as this one does: the centroid, and a corpus-fitted
        embedder's fitted state (a transformers encoder is loaded again by the copy)."""
        return {"centroid": self.centroid_, "embedder": self._enc if self.fit_uses_pool else None}

    def set_fitted(self, state: dict) -> "CosineSelector":
        self.centroid_ = np.asarray(state["centroid"])
        if state.get("embedder") is not None:
            self._enc = state["embedder"]
        return self

    def fit(self, in_domain, pool=None) -> "CosineSelector":
        in_domain, pool = self._fit_input(in_domain, pool)
        self._encoder(fit_on=(pool or in_domain).texts)
        self.centroid_ = _unit(_unit(self._embed(in_domain.texts)).mean(0))
        return self

    def score(self, records) -> np.ndarray:
        """Cosine similarity to the centroid, (n,) in [-1, 1]."""
        self.require_fitted()
        from .._internal.rows import row_dot
        return row_dot(_unit(self._embed(as_corpus(records).texts)), self.centroid_)  # the same bits in any shard

    def signature_params(self) -> dict:
        """The declared parameters, the embedder's name, and for a transformers encoder its files'
        fingerprint and how it ran (backend, graph, int8 recipe, versions, CPU family)."""
        p = super().signature_params()
        p["embedder"] = self.model_name
        from ..embed import abilities
        if isinstance(self.embedder, str) and abilities(self.embedder).kind != "baseline":
            from .base import encoder_numerics
            p.update(encoder_numerics(self.embedder, self.backend, self.device, self.max_length))
        return p
