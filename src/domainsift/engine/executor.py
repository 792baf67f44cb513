"""The executors: every shard of a pool without a completion marker scored here (``local``) or by Ray
actors (``ray``, imported only then)."""

from __future__ import annotations

import logging
from pathlib import Path

from .config import Execution
from .shards import finished_shards, score_local

log = logging.getLogger(__name__)


def score_shards(selector, source, state: Path, execution: Execution, model_dir: Path | None = None,
                 positions=None) -> int:
    """Score every shard of ``source`` that has no completion marker in ``state``; return the
    number of shards. ``positions``: score only these pool positions (sorted; the Ray engine's
    workers read them from a pool of files themselves)."""
    execution.check()
    state.mkdir(parents=True, exist_ok=True)
    n = len(source) if positions is None else len(positions)
    shard_size = execution.shard_size
    n_shards = max(1, -(-n // shard_size))
    done = finished_shards(state)
    todo = n_shards - len(done & set(range(n_shards)))
    if todo == 0:
        return n_shards
    if done:
        log.info("resuming: %d of %d shards already scored", n_shards - todo, n_shards)
    from tqdm.auto import tqdm
    bar = tqdm(total=n, initial=min(n, len(done) * shard_size), desc=f"score {selector.name}", unit="line",
               disable=not execution.progress, smoothing=0.1, dynamic_ncols=True)
    try:
        if execution.engine == "local":
            if positions is not None:
                raise ValueError("the local engine scores positions of a pool taken into memory")
            score_local(selector, source, state, shard_size, done, bar, execution.on_shard,
                        processes=min(execution.local_processes(), todo))
        else:
            from .ray import score_on_ray
            score_on_ray(selector, source, state, shard_size, done, bar, execution.workers, execution.address,
                         model_dir, execution.on_shard, positions=positions, n_shards=n_shards)
    finally:
        bar.close()
    return n_shards
