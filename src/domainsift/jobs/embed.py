"""``domainsift embed``: mean-pooled sentence vectors of files (the stage: :mod:`domainsift.pipeline.embed`)."""

from ..pipeline.embed import embed_files, run_embed  # noqa: F401

__all__ = ["embed_files", "run_embed"]
