"""Combine saved score runs: a weighted sum of standardised scores over the same pool.

Different methods make different mistakes. The fine-tuned encoder reads meaning
through an uncased sub-word vocabulary; an n-gram LM (Moore-Lewis) reads the
exact words, names, casing and punctuation of the in-domain set. On the shared
benchmark their errors overlap little, so the sum of their standardised scores
ranks better than either (bench/results/selection.md, "combined runs").

Scores of different methods live on different scales, so each run is first
standardised over the pool:

- ``how="zscore"`` (default): ``(s - mean) / sd``; a probabilistic run (finetune)
  is first mapped to its logit, since probabilities saturate near 0 and 1;
- ``how="rank"``: the rank of each line divided by the pool size (ties share their mean rank).

Combining is scoring, not choosing: the result is an ordinary score directory,
and ``run_select`` / ``domainsift select --from-scores`` chooses from it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import rundir
from .._internal.errors import DomainsiftError
from .._internal.signature import make_signature

HOW = ("zscore", "rank")
_EPS = 1e-12


def standardise(scores: np.ndarray, how: str = "zscore", probabilistic: bool = False,
                name: str = "scores") -> np.ndarray:
    """Scores mapped to a common scale (see the module docstring)."""
    s = np.asarray(scores, dtype=np.float64)
    if not np.all(np.isfinite(s)):
        raise DomainsiftError(f"{name}: {int((~np.isfinite(s)).sum())} scores are not finite numbers")
    if how == "rank":
        from scipy.stats import rankdata
        return rankdata(s) / len(s)
    if how != "zscore":
        raise DomainsiftError(f"unknown standardisation '{how}' (one of: {', '.join(HOW)})")
    if probabilistic:
        p = np.clip(s, _EPS, 1 - _EPS)
        s = np.log(p) - np.log1p(-p)
    sd = s.std()
    if sd == 0:
        raise DomainsiftError(f"{name}: every line has the same score; it cannot be combined")
    return (s - s.mean()) / sd


def _pool_difference(a, b) -> str:
    """What differs between two runs' pools, in words: the files, the number of records, or the first
    record that is not the same line."""
    if a.pool["files"] != b.pool["files"]:
        return f"{', '.join(a.pool['files'])} vs. {', '.join(b.pool['files'])}"
    if len(a.id_array) != len(b.id_array):
        return f"{len(a.id_array)} records vs. {len(b.id_array)} of the same files"
    i = int(np.flatnonzero((np.asarray(a.id_array) != np.asarray(b.id_array)).any(axis=1))[0])
    (fa, la), (fb, lb) = a.id_at(i), b.id_at(i)
    return f"the same files and number of records, but record {i + 1} is {fa} line {la} vs. {fb} line {lb}"


def combine_runs(score_dirs: Sequence[str | os.PathLike], out_dir: str | os.PathLike,
                 weights: Sequence[float] | None = None, how: str = "zscore", overwrite: bool = False) -> dict:
    """Write to ``out_dir`` a score directory whose scores are ``sum_i w_i * standardise(run_i)``.

    Every run must have scored the same pool (the same files and line ids, in the
    same order). Everything is checked before anything is written. Returns the signature.
    """
    scores, ids, pool, sig = combine_scores(score_dirs, weights, how, out_dir=out_dir)
    with rundir.claim(out_dir, "score", overwrite=overwrite):
        rundir.write_scores(Path(out_dir), scores, ids, pool, sig)
    return sig


def combine(score_dirs: Sequence[str | os.PathLike], out_dir: str | os.PathLike,
            weights: Sequence[float] | None = None, how: str = "zscore", overwrite: bool = False,
            top: int | None = None, fraction: float | None = None, threshold: float | None = None,
            exclude=None, keep_exclude: bool = True) -> tuple[dict, dict | None]:
    """``domainsift combine``: :func:`combine_runs`, then a selection from the combined scores when a rule
    is given (a ``top`` larger than the pool is refused before anything is written). ``exclude`` (as
    ``select --exclude``): the lines the selection leaves out; without it, the exclusions the runs'
    selections were made with are kept (``keep_exclude=False``: dropped). Returns the signature and the
    selection (or None)."""
    from ..select.base import check_n_against_pool
    from .choose import run_select
    if exclude is None and keep_exclude:
        from ..dedup import recorded_exclusion
        exclude = recorded_exclusion(rundir.recorded_excludes(score_dirs))  # a test set left out of a run stays out of their combination
    scores, ids, pool, sig = combine_scores(score_dirs, weights, how, out_dir=out_dir)
    check_n_against_pool(len(scores), top, fraction)  # before anything is written
    with rundir.claim(out_dir, "score", overwrite=overwrite):
        rundir.write_scores(Path(out_dir), scores, ids, pool, sig)
    if top is None and fraction is None and threshold is None:
        return sig, None
    from ..spec import Rule
    return sig, run_select(out_dir, out_dir, Rule(top=top, fraction=fraction, threshold=threshold, exclude=exclude),
                           keep_exclude=False)


def combine_scores(score_dirs: Sequence[str | os.PathLike], weights: Sequence[float] | None = None,
                   how: str = "zscore", out_dir: str | os.PathLike | None = None):
    """The combined scores, the common ids and pool (as in ids.npy and pool.json) and the signature;
    writes nothing.

    ``out_dir``, where the caller will write them, must not be one of the runs."""
    dirs = [Path(d) for d in score_dirs]
    if len(dirs) < 2:
        raise DomainsiftError(f"combine needs at least two score directories, got {len(dirs)}")
    w = [1.0] * len(dirs) if weights is None else [float(x) for x in weights]
    if len(w) != len(dirs):
        raise DomainsiftError(f"{len(w)} weights for {len(dirs)} score directories")
    if not all(np.isfinite(w)) or not any(w):
        raise DomainsiftError(f"weights must be finite numbers, not all zero: {w}")
    if how not in HOW:
        raise DomainsiftError(f"unknown standardisation '{how}' (one of: {', '.join(HOW)})")
    if out_dir is not None and any(d.resolve() == Path(out_dir).resolve() for d in dirs):
        raise DomainsiftError(f"{out_dir}: the output would overwrite one of the combined runs; choose another --out")
    runs = [rundir.load_scores(d) for d in dirs]
    pool0 = runs[0].pool
    total = np.zeros(len(runs[0].scores), dtype=np.float64)
    members = []
    for d, run, wi in zip(dirs, runs, w):
        if run.pool["files"] != pool0["files"] or not np.array_equal(run.id_array, runs[0].id_array):
            raise DomainsiftError(f"{d}: scored a different pool than {dirs[0]} ({_pool_difference(run, runs[0])})")
        for key, what in (("fingerprints", "the pool files' contents"), ("reader", "how the pool was read"),
                          ("target_files", "the other side")):
            same = (_same_contents(run.pool.get(key) or {}, pool0.get(key) or {}) if key == "fingerprints"
                    else (run.pool.get(key) or None) == (pool0.get(key) or None))
            if not same:
                raise DomainsiftError(f"{d}: {what} differ from {dirs[0]}'s (the same paths, other records); "
                                      "score both runs on the same pool")
        total += wi * standardise(run.scores, how, run.probabilistic, name=str(rundir.path(d, rundir.SCORES)))
        members.append({"dir": rundir.resolve(d), "method": run.signature.get("method"), "weight": wi,
                        "signature": run.signature.get("signature")})
    name = "+".join(str(m["method"]) for m in members)
    sig = make_signature("combine", model=None, seed=None, how=how, combined=name,
                         weights=",".join(f"{x:g}" for x in w), members=members, pool=pool0["files"],
                         pool_target=pool0.get("target_files") or None, n_pool=len(total), probabilistic=False)
    return total, np.asarray(runs[0].id_array), pool0, sig


def _same_contents(a: dict, b: dict) -> bool:
    """Two runs' fingerprints of the same files describe the same bytes: equal, or, where one run hashed
    a file whole and the other (a Ray run) part by part, both match the file as it is now."""
    if a.keys() != b.keys():
        return False
    from ..io.parts import fingerprint_matches
    for path in a:
        if a[path] == b[path]:
            continue
        if ("sha256_parts" in a[path]) == ("sha256_parts" in b[path]) or not os.path.isfile(path):
            return False
        if not (fingerprint_matches(path, a[path]) and fingerprint_matches(path, b[path])):
            return False
    return True
