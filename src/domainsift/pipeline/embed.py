"""``domainsift embed``: a corpus's mean-pooled sentence vectors, written with their ids and signature."""

from __future__ import annotations

import os
from typing import Sequence

from .. import rundir
from .._internal.safety import refuse_overwriting_inputs
from .._internal.signature import make_signature
from ..embed import EmbedConfig
from ..io.corpus import Corpus


def embed_corpus(corpus: Corpus, config: EmbedConfig = EmbedConfig()):
    """Return (vectors (n, dim) float32, the embedder). A baseline that learns its space from
    text (tf-idf, word2vec, LDA) is fitted on the corpus itself first."""
    emb = config.build(fit_on=corpus.texts)
    return emb.encode(corpus.texts), emb


def run_embed(corpus: Corpus, out_dir: str | os.PathLike, config: EmbedConfig = EmbedConfig(),
              overwrite: bool = False) -> dict:
    """Write ``out_dir/embeddings.npy`` (one row per kept line, input order) and ``signature.json``."""
    refuse_overwriting_inputs(corpus.files, out_dir, rundir.EMBED_OUTPUTS)
    with rundir.claim(out_dir, "embed", overwrite=overwrite):
        vectors, emb = embed_corpus(corpus, config)
        sig = make_signature("embed", seed=config.seed, inputs=[os.path.realpath(f) for f in corpus.files],
                             n_sentences=len(corpus), n_empty_skipped=corpus.n_empty, dim=int(vectors.shape[1]),
                             **config.signature_params(emb), **({"strip_id": True} if corpus.strip_id else {}))
        rundir.write_embedding(out_dir, vectors, corpus.ids, sig)
    return sig


def embed_files(files: Sequence[str | os.PathLike], out_dir: str | os.PathLike, config: EmbedConfig = EmbedConfig(),
                reader: dict | None = None, overwrite: bool = False) -> dict:
    """``domainsift embed``: read ``files`` and :func:`run_embed`; returns the signature."""
    from ..io.corpus import read_corpus
    return run_embed(read_corpus(files, **(reader or {})), out_dir, config, overwrite=overwrite)
