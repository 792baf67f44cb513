"""The engine: how a scoring job runs.

- :mod:`~domainsift.engine.config`: :class:`Execution` and :class:`Cascade` (frozen configurations);
- :mod:`~domainsift.engine.run`: the fit
  (or the saved fit of a killed run), the resume fingerprint, the passes over the pool;
- :mod:`~domainsift.engine.shards`: the pool cut into shards, each scored and kept on disk with a
  checked completion marker, so a killed run resumes where it stopped (the ``local`` engine);
- :mod:`~domainsift.engine.ray`: the same shards scored by Ray actors (the ``ray`` engine);
- :mod:`~domainsift.engine.cascade`: ``--cascade``, whole: the student over the pool, the plan of how
  many candidates, the method over them, the merged scores.

It sits above :mod:`domainsift.select` (the methods) and :mod:`domainsift.io` (the pool); the jobs
(:mod:`domainsift.jobs`) call it, and nothing below imports it.
"""

from .config import DEFAULT_SHARD_SIZE, ENGINES, FIT_SAMPLE, Cascade, Execution
from .executor import score_shards
from .shards import assemble, finished_shards

__all__ = ["Execution", "Cascade", "FIT_SAMPLE", "DEFAULT_SHARD_SIZE", "ENGINES", "score_shards", "finished_shards",
           "assemble"]
