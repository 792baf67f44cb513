"""The engine: the executors. They only execute: a fitted selector (or a fit of several targets, one
column a target) scores every shard of the pool that has no completion marker, here or on Ray actors.
Fitting, the counting pass's samples and the cascade are stages of the pipeline
(:mod:`domainsift.pipeline.stages`, :mod:`domainsift.pipeline.cascade`).

- :mod:`~domainsift.engine.config`: :class:`Execution` and :class:`Cascade` (frozen configurations), a
  target's job (:class:`~domainsift.engine.config.Target`, :class:`~domainsift.engine.config.Column`);
- :mod:`~domainsift.engine.executor`: the one entry, :func:`score_shards` / ``score_targets``;
- :mod:`~domainsift.engine.shards`: the pool cut into shards, each scored and kept on disk with a
  checked completion marker, so a killed run resumes where it stopped (the ``local`` engine);
- :mod:`~domainsift.engine.ray`: the same shards scored by Ray actors (the ``ray`` engine).

It sits above :mod:`domainsift.select` (the methods) and :mod:`domainsift.io` (the pool); the pipeline
(:mod:`domainsift.pipeline`) calls it, and nothing below imports it.
"""

from .config import DEFAULT_SHARD_SIZE, ENGINES, FIT_SAMPLE, Cascade, Execution
from .executor import score_shards
from .shards import assemble, finished_shards

__all__ = ["Execution", "Cascade", "FIT_SAMPLE", "DEFAULT_SHARD_SIZE", "ENGINES", "score_shards", "finished_shards",
           "assemble"]
