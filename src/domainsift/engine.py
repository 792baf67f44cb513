"""The scoring engine: a fitted selector scores the pool shard by shard, locally or on Ray.

The pool (a :class:`~domainsift.source.PoolSource`) is read as a stream and cut
into shards of ``shard_size`` records. Each finished shard leaves, in the job's
state folder, its scores (``shard-NNNNNN.scores.npy``), its ids
(``shard-NNNNNN.ids.npy``: file index and line) and, written last, a completion
marker (``shard-NNNNNN.done``); a killed job started again with the same
command finds the markers and scores only the shards without one. Memory is
bounded by a shard: texts are never held for the whole pool, ids are integer
arrays, scores go to disk shard by shard.

Engines:

- ``local``: shards are scored one after another in this process.
- ``ray``: shards are scored by Ray actors (``--workers N``, on the local machine or on
  the cluster at ``--address``); each actor builds the selector once from its method,
  parameters and fitted state (shipped through Ray's object store, so no shared file system
  is needed), and the driver reads the pool and writes the shards, as the local engine
  does. The scores are the same as the local engine's.
"""

from __future__ import annotations

import io
import logging
import os
import tarfile
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np

from ._atomic import save_json, save_npy
from .errors import DomainsiftError

log = logging.getLogger(__name__)

ENGINES = ("local", "ray")
DEFAULT_SHARD_SIZE = 16384  # a multiple of the vector cache's 1,024-line chunks


def shard_paths(state: Path, shard: int) -> tuple[Path, Path, Path]:
    stem = state / f"shard-{shard:06d}"
    return Path(f"{stem}.scores.npy"), Path(f"{stem}.ids.npy"), Path(f"{stem}.done")


def finished_shards(state: Path) -> set[int]:
    """Shards with a completion marker (their scores and ids were written before it)."""
    return {int(p.name[6:12]) for p in state.glob("shard-*.done")} if state.is_dir() else set()


def _write_shard(state: Path, shard: int, scores: np.ndarray, fidx: np.ndarray, lines: np.ndarray) -> None:
    s_path, i_path, done = shard_paths(state, shard)
    save_npy(s_path, np.asarray(scores, dtype=np.float64))
    save_npy(i_path, np.stack([fidx.astype(np.int64), lines.astype(np.int64)], axis=1))
    save_json(done, {"n": int(len(scores))})


def score_one(selector, records, start: int) -> np.ndarray:
    """A shard's scores; a selector whose scores are one stream over the pool (random) gets the
    shard's position."""
    if getattr(selector, "per_sentence", True):
        out = selector.score(records)
    else:
        out = selector.score_at(records, start)
    out = np.asarray(out, dtype=np.float64)
    if out.shape != (len(records),):
        raise RuntimeError(f"{selector.name} returned scores of shape {out.shape} for {len(records)} records")
    return out


def score_shards(selector, source, state: Path, shard_size: int = DEFAULT_SHARD_SIZE, progress: bool = False,
                 engine: str = "local", workers: int | None = None, address: str | None = None,
                 model_dir: Path | None = None, on_shard: Callable[[int], None] | None = None) -> int:
    """Score every shard of ``source`` that has no completion marker in ``state``; return the
    number of shards. ``on_shard`` is called after each shard is written (tests use it to stop a
    run at a chosen point)."""
    if engine not in ENGINES:
        raise DomainsiftError(f"unknown engine '{engine}' (choose from {', '.join(ENGINES)})")
    state.mkdir(parents=True, exist_ok=True)
    n = len(source)
    n_shards = max(1, -(-n // shard_size))
    done = finished_shards(state)
    todo = n_shards - len(done & set(range(n_shards)))
    if todo == 0:
        return n_shards
    if done:
        log.info("resuming: %d of %d shards already scored", n_shards - todo, n_shards)
    from tqdm.auto import tqdm
    bar = tqdm(total=n, initial=min(n, len(done) * shard_size), desc=f"score {selector.name}", unit="line",
               disable=not progress, smoothing=0.1, dynamic_ncols=True)
    try:
        if engine == "local":
            for shard, records, fidx, lines in source.shards(shard_size, done):
                _write_shard(state, shard, score_one(selector, records, shard * shard_size), fidx, lines)
                bar.update(len(records))
                if on_shard:
                    on_shard(shard)
        else:
            _score_on_ray(selector, source, state, shard_size, done, bar, workers, address, model_dir, on_shard)
    finally:
        bar.close()
    return n_shards


# ---------------------------------------------------------------------------------------------- Ray

def _pack(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(folder), arcname="model")
    return buf.getvalue()


class _Scorer:
    """A Ray actor's state: the selector, built once from its method, parameters and fitted state."""

    def __init__(self, method: str, params: dict, packed_state: bytes | None, fitted: dict | None):
        from .select import get_selector
        if "progress" in params:
            params = {**params, "progress": False}
        self.selector = get_selector(method, **params)
        if packed_state is not None:
            self.tmp = tempfile.mkdtemp(prefix="domainsift-ray-")
            with tarfile.open(fileobj=io.BytesIO(packed_state)) as tar:
                tar.extractall(self.tmp, filter="data")
            self.selector.load_state(Path(self.tmp) / "model")
        elif fitted is not None:
            self.selector.set_fitted(fitted)

    def score(self, shard: int, texts: list, targets: list | None, start: int) -> tuple[int, np.ndarray]:
        from .corpus import Corpus
        records = Corpus(texts=texts, ids=[("<shard>", i) for i in range(len(texts))], files=["<shard>"],
                         targets=targets)
        return shard, score_one(self.selector, records, start)


def _ray():
    try:
        import ray
    except ImportError:
        from .errors import missing_extra
        raise missing_extra("ray", "ray") from None
    return ray


def _score_on_ray(selector, source, state, shard_size, done, bar, workers, address, model_dir, on_shard) -> None:
    ray = _ray()
    if hasattr(selector, "fitted_state"):
        packed, fitted = None, selector.fitted_state()
    elif hasattr(selector, "save_state") and model_dir is not None and model_dir.exists():
        packed, fitted = _pack(model_dir), None
    else:
        raise DomainsiftError(f"method '{selector.name}' cannot be shipped to Ray workers; use --engine local")
    started = False
    if not ray.is_initialized():
        kw = {"address": address} if address else {"num_cpus": max(1, workers or os.cpu_count() or 1)}
        ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING, **kw)
        started = True
    try:
        n_workers = max(1, workers or int(ray.cluster_resources().get("CPU", 1)))
        threads = max(1, int(ray.cluster_resources().get("CPU", 1)) // n_workers)
        actor = ray.remote(num_cpus=threads)(_Scorer)
        params = selector.param_values()
        actors = [actor.remote(selector.name, params, ray.put(packed) if packed else None, fitted)
                  for _ in range(n_workers)]
        pending, meta = {}, {}
        shards = source.shards(shard_size, done)
        next_actor = 0

        def submit() -> bool:
            nonlocal next_actor
            item = next(shards, None)
            if item is None:
                return False
            shard, records, fidx, lines = item
            ref = actors[next_actor % n_workers].score.remote(shard, records.texts, records.targets, shard * shard_size)
            next_actor += 1
            pending[ref] = shard
            meta[shard] = (fidx, lines)
            return True

        for _ in range(2 * n_workers):  # keep every worker busy, a bounded number of shards in flight
            if not submit():
                break
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            shard, scores = ray.get(ready[0])
            del pending[ready[0]]
            fidx, lines = meta.pop(shard)
            _write_shard(state, shard, scores, fidx, lines)
            bar.update(len(scores))
            if on_shard:
                on_shard(shard)
            submit()
    finally:
        if started:
            ray.shutdown()


def assemble(state: Path, n_shards: int) -> tuple[list[Path], list[Path]]:
    """The finished shards' score files and id files, in order (read one at a time by
    :func:`domainsift.rundir.write_scores`, so a pool of any size never has them all open)."""
    scores, ids = [], []
    for shard in range(n_shards):
        s_path, i_path, done = shard_paths(state, shard)
        if not done.exists():
            raise RuntimeError(f"shard {shard} has no completion marker")
        scores.append(s_path)
        ids.append(i_path)
    return scores, ids


__all__ = ["ENGINES", "DEFAULT_SHARD_SIZE", "score_shards", "finished_shards", "assemble"]
