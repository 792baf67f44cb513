"""Domain-Cosine (paper 000, section 4): cosine similarity to the in-domain centroid."""

from __future__ import annotations


import numpy as np

from .._internal.errors import DomainsiftError
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
    cost_model = "encode"
    shared_fit_note = "the pool encoded once, a centroid per target"
    params = (
        Param("embedder", str, "minilm", "encoder: minilm (default), multilingual (USE-m, extra multilingual: "
              "0.7656 against minilm's 0.7144 on the shared benchmark; --cascade distils its student from minilm), "
              "tfidf, word2vec, lda, random, or a Hugging Face name or local path", option="--model"),
        Param("batch_size", int, 32, "sentences per encoding batch (batches are sorted by token count; the "
              "vectors do not depend on it)", check=at_least(1), signature=False),
        MAX_LENGTH, BACKEND, SEED, DEVICE, CACHE_DIR, PROGRESS,
    )

    learned = ("centroid_",)

    @property
    def fits_targets(self) -> bool:
        """Several targets share one encoding of the pool, a centroid each (:meth:`fit_targets`): a shard
        is encoded once and scored against every centroid (:meth:`score_targets`). Not over
        an embedder that learns its space from the pool (tf-idf, word2vec, LDA: its fit is not saved as a
        folder): each target then fits it on the same sample, and the vector cache serves the later ones."""
        return not self._learns_space

    def reset(self) -> None:
        """Forget the centroid, and a corpus-fitted embedder's space (tf-idf, word2vec, LDA: the next
        fit learns it from its own pool); a pretrained encoder is kept, it learns nothing."""
        super().reset()
        for name in ("centroids_", "targets_"):  # a shared fit's
            self.__dict__.pop(name, None)
        if isinstance(self.embedder, str) and self._learns_space:
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
        """A corpus-fitted embedder (tf-idf, word2vec, LDA) learns its space from the pool (a target of
        a shared fit takes the space the shared fit learned)."""
        return self.target_of is None and self._learns_space

    @property
    def _learns_space(self) -> bool:
        from ..embed import abilities
        if not isinstance(self.embedder, str) or abilities(self.embedder).kind != "baseline":
            return False
        from ..embed import get_embedder
        return bool(getattr(get_embedder(self.embedder), "needs_fit", False))

    def fitted_state(self) -> dict:
        """What a copy needs to score as this one does: the centroid (a shared fit: every target's, and
        the targets' names), and a corpus-fitted embedder's fitted state (a transformers encoder is
        loaded again by the copy)."""
        state = ({"centroids": self.centroids_, "targets": self.targets_} if "centroids_" in self.__dict__
                 else {"centroid": self.centroid_})
        return {**state, "embedder": self._enc if self._learns_space else None}

    def set_fitted(self, state: dict) -> "CosineSelector":
        if state.get("embedder") is not None:
            self._enc = state["embedder"]
        if "centroids" in state:  # a shared fit of several targets
            self.centroids_, self.targets_ = np.asarray(state["centroids"]), list(state["targets"])
            return self
        self.centroid_ = np.asarray(state["centroid"])
        return self

    def fit(self, in_domain, pool=None) -> "CosineSelector":
        in_domain, pool = self._fit_input(in_domain, pool)
        self._encoder(fit_on=(pool or in_domain).texts)
        self.centroid_ = self._centroid(in_domain.texts)
        return self

    def _centroid(self, texts) -> np.ndarray:
        return _unit(_unit(self._embed(texts)).mean(0))

    # ------------------------------------------------------------------ several targets, one encoding
    def fit_targets(self, targets: dict, pool=None) -> "CosineSelector":
        """Every target's centroid (``{name: Corpus}``), in one space: a corpus-fitted embedder learns it
        from ``pool`` (or, without one, from every target's lines). Each target's selector
        (:meth:`target`) then scores as a one-target fit does, with the same bits."""
        names = list(targets)
        if len(names) < 2:
            raise DomainsiftError("a shared fit needs at least two targets")
        corpora = {n: as_corpus(c) for n, c in targets.items()}
        for n, c in corpora.items():
            if len(c) == 0:
                raise DomainsiftError(f"target '{n}': the in-domain set is empty")
        self.reset()
        pool = as_corpus(pool) if pool is not None else None
        self._encoder(fit_on=(pool.texts if pool else [t for c in corpora.values() for t in c.texts]))
        self.centroids_ = np.stack([self._centroid(c.texts) for c in corpora.values()])
        self.targets_ = names
        return self

    def target(self, name: str) -> "CosineSelector":
        """Target ``name``'s centroid of this fit of :meth:`fit_targets`, as a one-target fit in the same
        space (its cosines are column ``name`` of :meth:`score_targets`, bit for bit)."""
        j = self._target_index(name)
        view = type(self)(**self.param_values())
        view._enc = self._encoder()
        view.centroid_ = self.centroids_[j].copy()
        view.target_of = (name, tuple(self.targets_))
        return view

    @property
    def is_fitted(self) -> bool:
        return super().is_fitted or "centroids_" in self.__dict__  # one centroid, or a shared fit's

    def score_targets(self, records) -> np.ndarray:
        """Every target's cosine, ``(n, T)``: one encoding of the lines, a centroid per target."""
        if "centroids_" not in self.__dict__:
            raise DomainsiftError("cosine: a fit of one target has no targets' block; score it")
        return self._cosines(as_corpus(records).texts, self.centroids_)

    def _cosines(self, texts, centroids) -> np.ndarray:
        """``(n, k)``: every line's cosine to each of ``centroids``, one encoding."""
        from .._internal.rows import row_dot
        u = _unit(self._embed(texts))
        return np.stack([row_dot(u, c) for c in centroids], axis=1)  # the same bits in any shard

    def score(self, records) -> np.ndarray:
        """Cosine similarity to the centroid, (n,) in [-1, 1]."""
        self.require_fitted()
        texts = as_corpus(records).texts
        return self._cosines(texts, self.centroid_[None, :])[:, 0]

    def signature_params(self) -> dict:
        """The declared parameters, the embedder's name, and for a transformers encoder its files'
        fingerprint and how it ran (backend, graph, int8 recipe, versions, CPU family)."""
        p = super().signature_params()
        p["embedder"] = self.model_name
        from ..embed import abilities
        if isinstance(self.embedder, str) and abilities(self.embedder).kind != "baseline":
            from .base import encoder_numerics
            p.update(encoder_numerics(self.embedder, self.backend, self.device, self.max_length))
        elif isinstance(self.embedder, str):  # tf-idf, word2vec, LDA, random: no token length, no backend ran
            p.pop("max_length", None)
            p.pop("backend", None)
        return p

