"""``domainsift score``: fit a method and score the pool into a run directory (a
:class:`~domainsift.spec.RunSpec` without a rule, run by :func:`domainsift.jobs.run.run`; the stages:
:mod:`domainsift.pipeline.score`)."""

from __future__ import annotations

import os

from ..pipeline.score import score  # noqa: F401  (the stage itself, returning its ScoreJob)

__all__ = ["run_score", "score"]


def run_score(method: str, in_domain, pool, out_dir: str | os.PathLike, params: dict | None = None,
              seed: int = 0, reader: dict | None = None, execution=None, cascade=None, overwrite: bool = False,
              estimate_share: bool = False) -> dict:
    """Fit ``method`` on the in-domain set (and the pool), score the pool, write the run directory.

    ``pool``: a :class:`~domainsift.io.source.PoolSource` (read as a stream, shard by shard) or a
    :class:`Corpus` in memory. The run records how the pool's files are read: a ``PoolSource``'s
    own reader; for a ``Corpus``, ``reader`` (format, column, field) says how it was read.
    ``execution``: how it runs (:class:`~domainsift.engine.Execution`: local or Ray, shard size, the fit
    sample); ``cascade``: a :class:`~domainsift.engine.Cascade` to let a student score every line and
    ``method`` only the student's top candidates. Returns the signature; the wall time is in
    ``DIR/run.json``. A killed run resumes: it loads the saved fit and scores only the shards without a
    completion marker (under ``DIR/.resume/``). ``out_dir`` is locked while the run writes; a directory
    that holds another kind of run is refused unless ``overwrite``. ``estimate_share``: also estimate the
    pool's in-domain share (:mod:`domainsift.share`, on a seeded sample of the pool) into
    ``DIR/share.json``, for ``select --from-scores DIR --fraction auto``. The same run as
    ``run(RunSpec.single(method, in_domain, pool, out_dir, ...))``."""
    from ..engine import Execution
    from ..spec import RunSpec
    from ..pipeline.run import run
    return run(RunSpec.single(method, in_domain, pool, out_dir, params=params or {}, seed=seed, reader=reader,
                              execution=execution or Execution(), cascade=cascade, overwrite=overwrite,
                              estimate_share=estimate_share)).signature
