"""The engine: the jobs that fit a selector and score a pool into a run directory, and how they run.

- :mod:`~domainsift.engine.job`: ``run_score`` (fit on the in-domain set and a seeded sample of the
  pool, the resume fingerprint, the saved fit) and ``run_select`` (choose from saved scores);
- :mod:`~domainsift.engine.shards`: the pool cut into shards, each scored and kept on disk with a
  checked completion marker, so a killed run resumes where it stopped (the ``local`` engine);
- :mod:`~domainsift.engine.ray`: the same shards scored by Ray actors (the ``ray`` engine).

It sits above :mod:`domainsift.select` (the methods) and :mod:`domainsift.rundir` (the run
directory's one owner); nothing below imports it.
"""

from .job import FIT_SAMPLE, RESUME_DIR, run_score, run_select, score_shards
from .shards import DEFAULT_SHARD_SIZE, ENGINES, assemble, finished_shards

__all__ = ["run_score", "run_select", "FIT_SAMPLE", "RESUME_DIR", "DEFAULT_SHARD_SIZE", "ENGINES",
           "score_shards", "finished_shards", "assemble"]
