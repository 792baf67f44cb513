"""The executors: every shard of a pool without a completion marker scored here (``local``) or by Ray
actors (``ray``, imported only then)."""

from __future__ import annotations

import logging
from pathlib import Path

from .config import Execution
from .shards import finished_shards, score_local

log = logging.getLogger(__name__)


def score_shards(selector, source, state: Path, execution: Execution, model_dir: Path | None = None,
                 positions=None, column: int | None = None) -> int:
    """Score every shard of ``source`` that has no completion marker in ``state``; return the
    number of shards. ``positions``: score only these pool positions (sorted; the Ray engine's
    workers read them from a pool of files themselves); ``column``: ``selector`` is a fit of several
    targets and this state is its column."""
    return score_targets([selector], source, [state], execution, [model_dir], positions, [column])


def score_targets(selectors: list, source, states: list, execution: Execution, model_dirs: list | None = None,
                  positions=None, columns: list | None = None) -> int:
    """:func:`score_shards` for several fitted selectors at once (a mixture's targets), each into its own
    state folder: each shard is read once and every selector that lacks it scores it, here or on a Ray
    actor that holds every target's selector (so the pool is read once for any number of targets).
    ``columns``: per state, its column of a fit of several targets (the same selector object for every
    column of it: each shard is scored once into an ``(n, T)`` block), or None where the state's
    selector scores it alone."""
    execution.check()
    model_dirs = list(model_dirs or [None] * len(selectors))
    columns = list(columns or [None] * len(selectors))
    for state in states:
        state.mkdir(parents=True, exist_ok=True)
    n = len(source) if positions is None else len(positions)
    shard_size = execution.shard_size
    n_shards = max(1, -(-n // shard_size))
    each = [finished_shards(state) & set(range(n_shards)) for state in states]
    done = set.intersection(*each)  # a shard is read again only while some target lacks it
    todo = n_shards - len(done)
    if todo == 0:
        return n_shards
    if done:
        log.info("resuming: %d of %d shards already scored", n_shards - todo, n_shards)
    from tqdm.auto import tqdm
    name = selectors[0].name + (f" x {len(states)} targets" if len(states) > 1 else "")
    bar = tqdm(total=n, initial=min(n, len(done) * shard_size), desc=f"score {name}", unit="line",
               disable=not execution.progress, smoothing=0.1, dynamic_ncols=True)
    try:
        if execution.engine == "local":
            if positions is not None:
                raise ValueError("the local engine scores positions of a pool taken into memory")
            score_local(selectors, source, states, shard_size, each, bar, execution.on_shard,
                        processes=min(execution.local_processes(), todo), columns=columns)
        else:
            from .ray import score_on_ray
            score_on_ray(selectors, source, states, execution, [set(range(n_shards)) - e for e in each], bar,
                         model_dirs, positions=positions, n_shards=n_shards, columns=columns)
    finally:
        bar.close()
    return n_shards
