"""Shards: a fitted selector scores the pool shard by shard, each shard's result kept on disk.

The pool (a :class:`~domainsift.io.source.PoolSource`) is read as a stream and cut
into shards of ``shard_size`` records. Each finished shard leaves, in the job's
state folder, its scores (``shard-NNNNNN.scores.npy``), its ids
(``shard-NNNNNN.ids.npy``: file index and line) and, written last, a completion
marker (``shard-NNNNNN.done``: the shard's length and both files' SHA-256); a killed
job started again with the same command finds the markers and scores only the shards
without one, or whose files no longer match their marker (truncated, overwritten,
damaged: such a shard is scored again, with a warning). Memory is
bounded by a shard: texts are never held for the whole pool, ids are integer
arrays, scores go to disk shard by shard.

Engines:

- ``local``: shards are scored one after another in this process.
- ``ray``: shards are scored by Ray actors (``--workers N``, on the local machine or on
  the cluster at ``--address``); each actor builds the selector once from its method,
  parameters and fitted state (shipped through Ray's object store), reads its own shard of
  the pool's files and writes the shard's files and marker itself
  (:mod:`domainsift.engine.ray`). The scores are the same as the local engine's.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Callable

import numpy as np

from .._internal.atomic import save_json, save_npy
from .._internal.checksums import file_sha256
from .._internal.errors import DomainsiftError


log = logging.getLogger(__name__)


def shard_paths(state: Path, shard: int) -> tuple[Path, Path, Path]:
    from ..rundir.layout import shard_files
    return shard_files(state, shard)


def _digest(path: Path) -> str:
    return file_sha256(path)


def _intact(state: Path, shard: int) -> bool:
    """Whether a shard's marker is readable and its two files hold what the marker recorded."""
    s_path, i_path, done = shard_paths(state, shard)
    try:
        mark = json.loads(done.read_text(encoding="utf-8"))
        if mark.get("scores") != _digest(s_path) or mark.get("ids") != _digest(i_path):
            return False
        n = int(mark["n"])
        return (np.load(s_path, mmap_mode="r").shape == (n,)
                and np.load(i_path, mmap_mode="r").shape == (n, 2))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def finished_shards(state: Path, check: bool = True) -> set[int]:
    """Shards with a completion marker whose files match it. A damaged shard (a file truncated,
    overwritten or missing) loses its marker, with a warning, so the run scores it again."""
    if not state.is_dir():
        return set()
    done = set()
    from ..rundir.layout import SHARD_GLOB, shard_number
    for p in state.glob(SHARD_GLOB):
        try:
            shard = shard_number(p)
        except ValueError:
            continue
        if not check or _intact(state, shard):
            done.add(shard)
        else:
            log.warning("shard %d under %s is damaged; scoring it again", shard, state)
            p.unlink(missing_ok=True)
    return done


def write_shard(state: Path, shard: int, scores: np.ndarray, fidx: np.ndarray, lines: np.ndarray) -> None:
    s_path, i_path, done = shard_paths(state, shard)
    save_npy(s_path, np.asarray(scores, dtype=np.float64))
    save_npy(i_path, np.stack([fidx.astype(np.int64), lines.astype(np.int64)], axis=1))
    save_json(done, {"n": int(len(scores)), "scores": _digest(s_path), "ids": _digest(i_path)})


def score_one(selector, records, start: int) -> np.ndarray:
    """A shard's scores (``start``: the shard's first pool position, for a selector whose scores are
    one stream over the pool, such as random)."""
    out = np.asarray(selector.score_at(records, start), dtype=np.float64)
    if out.shape != (len(records),):
        raise RuntimeError(f"{selector.name} returned scores of shape {out.shape} for {len(records)} records")
    return out


def score_block(selector, records) -> np.ndarray:
    """A shard's ``(n, T)`` block: every target's scores of a fit of several targets."""
    out = np.asarray(selector.score_targets(records))
    if out.ndim != 2 or out.shape[0] != len(records):
        raise RuntimeError(f"{selector.name} returned a block of shape {out.shape} for {len(records)} records")
    return out


def score_columns(selectors: list, columns: list, which, records, start: int) -> list:
    """The scores of ``records`` for each state ``k`` in ``which``: ``selectors[k]`` scores it alone
    (``columns[k]`` None), or is a fit of several targets whose block is computed once for every state it
    serves and gives each its column."""
    blocks: dict = {}
    out = []
    for k in which:
        selector, column = selectors[k], columns[k]
        if column is None:
            out.append(score_one(selector, records, start))
            continue
        if id(selector) not in blocks:
            blocks[id(selector)] = score_block(selector, records)
        out.append(np.ascontiguousarray(blocks[id(selector)][:, column], dtype=np.float64))
    return out


def score_local(selectors: list, source, states: list, shard_size: int, done: list, bar,
                on_shard: Callable[[int], None] | None = None, processes: int = 1, columns: list | None = None) -> None:
    """The local engine: the shards without a marker, one after another in this process, each read once
    and scored by every selector (one a target) whose state folder lacks it (``done``: each state's
    finished shards); a selector whose scoring is Python code on one core (``python_bound``: the
    student) in ``processes`` forked processes, this one reading the pool and writing the shards
    (:func:`_score_forked`). ``columns``: per state, its column of a fit of several targets (None: the
    state's selector scores it alone; :func:`score_columns`)."""
    every = set.intersection(*done)
    columns = list(columns or [None] * len(selectors))
    if processes > 1 and all(s.python_bound for s in selectors) and _can_fork():
        return _score_forked(selectors, source, states, shard_size, done, every, bar, on_shard, processes, columns)
    for shard, records, fidx, lines in source.shards(shard_size, every):
        which = [k for k, have in enumerate(done) if shard not in have]
        for k, scores in zip(which, score_columns(selectors, columns, which, records, shard * shard_size)):
            write_shard(states[k], shard, scores, fidx, lines)
        bar.update(len(records))
        if on_shard:
            on_shard(shard)


def _can_fork() -> bool:
    import multiprocessing
    import sys
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


_FORKED = None  # in a forked scoring process only: the selectors (and their columns) it inherited


def _child_start(parent: int, selectors: list, columns: list) -> None:
    """A scoring process keeps the fitted selectors it inherited through the fork (never pickled: the
    fork context hands a process its arguments in memory), and dies with the process that forked it (a
    killed run leaves no process behind: its siblings hold the task queue open, so it would never see
    the queue close)."""
    import os
    import signal
    global _FORKED
    _FORKED = (selectors, columns)
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


def _score_in_child(records, start: int, which: list) -> list:
    selectors, columns = _FORKED
    return score_columns(selectors, columns, which, records, start)


def _score_forked(selectors: list, source, states: list, shard_size: int, done: list, every: set, bar, on_shard,
                  processes: int, columns: list) -> None:
    """:func:`score_local` over ``processes`` forked processes: each inherits the fitted selectors (nothing
    is pickled but the shards' records and scores), scores whole shards, and this process writes each
    shard's files and marker as its scores come back. A line's score depends on its text alone, so the
    bytes are those of one process. At most two shards per process are in flight (memory stays bounded)."""
    import concurrent.futures as cf
    import multiprocessing
    import os
    for selector in selectors:
        selector.prepare_fork()  # what a child would otherwise compute after the fork, computed once here
    env = os.environ.get("TOKENIZERS_PARALLELISM")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one core a process; and no warning about the fork
    try:
        with cf.ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"),
                                    initializer=_child_start, initargs=(os.getpid(), selectors, columns)) as pool:
            pending: dict = {}

            def finish(futures) -> None:
                for fut in futures:
                    shard, fidx, lines, which = pending.pop(fut)
                    for k, got in zip(which, fut.result()):
                        write_shard(states[k], shard, got, fidx, lines)
                    bar.update(len(lines))
                    if on_shard:
                        on_shard(shard)

            for shard, records, fidx, lines in source.shards(shard_size, every):
                which = [k for k, have in enumerate(done) if shard not in have]
                pending[pool.submit(_score_in_child, records, shard * shard_size, which)] = (shard, fidx, lines,
                                                                                              which)
                if len(pending) >= 2 * processes:
                    finish(cf.wait(pending, return_when=cf.FIRST_COMPLETED).done)
            while pending:
                finish(cf.wait(pending, return_when=cf.FIRST_COMPLETED).done)
    finally:
        if env is None:
            os.environ.pop("TOKENIZERS_PARALLELISM", None)
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = env


def assemble(state: Path, n_shards: int) -> tuple[list[Path], list[Path]]:
    """The finished shards' score files and id files, in order (read one at a time by
    :func:`domainsift.rundir.write_scores`, so a pool of any size never has them all open)."""
    scores, ids = [], []
    for shard in range(n_shards):
        s_path, i_path, done = shard_paths(state, shard)
        if not done.exists():  # the shards' files were checked against their markers as the run started
            raise DomainsiftError(f"{state}: shard {shard} is missing; run the same command again to score it")
        scores.append(s_path)
        ids.append(i_path)
    return scores, ids
