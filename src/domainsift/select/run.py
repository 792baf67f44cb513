"""Score once, select many: the jobs behind ``domainsift score`` and ``select``.

:func:`run_score` fits a method and scores the pool into a run directory
(:mod:`domainsift.rundir` says what it holds); :func:`run_select` chooses from
saved scores, with no re-scoring. Scoring is resumable: the pool is scored in
chunks kept under ``DIR/.resume/`` (with the fitted model, for selectors that
can save one), so a killed run, started again with the same inputs and
parameters, neither refits nor rescores what it had finished. The folder is
removed when the run completes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from pathlib import Path

import numpy as np

from .. import rundir
from ..corpus import Corpus
from ..safety import check_distinct_inputs, refuse_overwriting_inputs
from ..signature import make_signature
from . import get_selector
from .base import choose

log = logging.getLogger(__name__)

RESUME_DIR = ".resume"


def _fingerprint(method: str, params: dict, in_domain: Corpus, pool: Corpus) -> str:
    """Identifies a scoring job: method, parameters, in-domain texts, pool ids and texts."""
    h = hashlib.sha256()
    keep = {k: repr(v) for k, v in sorted(params.items()) if k not in ("progress", "cache_dir")}
    h.update(json.dumps([method, keep], sort_keys=True).encode())
    def put(s: str) -> None:  # length-prefixed: texts may hold NUL
        b = s.encode("utf-8")
        h.update(len(b).to_bytes(8, "little") + b)
    for t in in_domain.texts:
        put(t)
    h.update(b"\x01")
    for (f, n), t in zip(pool.ids, pool.texts):
        put(f"{rundir.resolve(f)}:{n}")
        put(t)
    return h.hexdigest()[:24]


def score_resumable(selector, in_domain: Corpus, pool: Corpus, state: Path, chunk_size: int = 8192,
                    progress: bool = False) -> np.ndarray:
    """Fit (or load the saved fit) and score the pool chunk by chunk, keeping each finished chunk."""
    model_dir = state / "model"
    if hasattr(selector, "load_state") and model_dir.exists():  # save_state renames a finished folder
        log.info("resuming: loading the fitted %s model from %s", selector.name, model_dir)
        selector.load_state(model_dir)
    else:
        selector.fit(in_domain, pool)
        if hasattr(selector, "save_state"):
            selector.save_state(model_dir)
    if not getattr(selector, "per_sentence", True):  # e.g. a random stream: score in one go
        return np.asarray(selector.score(pool), dtype=np.float64)
    parts = []
    from tqdm.auto import tqdm
    starts = range(0, len(pool), chunk_size)
    for i, start in enumerate(tqdm(starts, desc="score chunks", disable=not progress or len(starts) < 2,
                                   leave=False)):
        path = state / f"scores-{i:06d}.npy"
        if path.exists():
            parts.append(np.load(path))
            continue
        part = np.asarray(selector.score(pool[start:start + chunk_size]), dtype=np.float64)
        from .._atomic import save_npy
        save_npy(path, part)
        parts.append(part)
    return np.concatenate(parts) if parts else np.zeros(0)


def run_score(method: str, in_domain: Corpus, pool: Corpus, out_dir: str | os.PathLike,
              params: dict | None = None, seed: int = 0, reader: dict | None = None,
              chunk_size: int = 8192) -> dict:
    """Fit ``method`` on the in-domain set and the pool, score the pool, write the run directory.

    ``reader`` (format, column, field) records how the files were read. Returns the signature;
    the wall time is in ``DIR/run.json``. A killed run resumes from its finished chunks.
    """
    params = dict(params or {})
    params.setdefault("seed", seed)
    t0 = time.time()
    selector = get_selector(method, **params)  # bad parameters fail here, before any work
    check_distinct_inputs(list(pool.files) + list(pool.target_files), "the pool")
    refuse_overwriting_inputs(list(in_domain.files) + list(pool.files) + list(pool.target_files), out_dir,
                              rundir.OUTPUTS)
    state = Path(out_dir) / RESUME_DIR / _fingerprint(method, params, in_domain, pool)
    scores = score_resumable(selector, in_domain, pool, state, chunk_size,
                             progress=bool(params.get("progress")))
    if scores.shape != (len(pool),):
        raise RuntimeError(f"{method} returned scores of shape {scores.shape} for {len(pool)} lines")
    manifest = rundir.pool_manifest(pool, reader)
    sp = selector.signature_params()
    model = sp.pop("model", None) or sp.pop("embedder", None) or getattr(selector, "model_name", None)
    sp.pop("seed", None)
    in_files = [rundir.resolve(f) for f in in_domain.files]
    sig = make_signature(method, model=model, seed=params["seed"], **sp, in_domain=in_files,
                         n_in_domain=len(in_domain), pool=manifest["files"],
                         pool_target=manifest["target_files"] or None, n_pool=len(pool),
                         probabilistic=bool(selector.probabilistic))
    metrics = getattr(selector, "holdout_metrics_", None)
    if metrics is not None:
        sig["classifier_holdout"] = metrics
    rundir.write_scores(out_dir, scores, manifest, sig, timings={"score_seconds": round(time.time() - t0, 1)})
    if hasattr(selector, "write_artifacts"):  # e.g. the cross-lingual alignment picture
        selector.write_artifacts(out_dir)
    shutil.rmtree(Path(out_dir) / RESUME_DIR, ignore_errors=True)
    return sig


def run_select(score_dir: str | os.PathLike, out_dir: str | os.PathLike | None = None,
               top: int | None = None, fraction: float | None = None, threshold: float | None = None,
               positive: bool = False, out_format: str | None = None) -> dict:
    """Choose from saved scores and write the selected lines (no re-scoring); ``out_format``
    (text, jsonl, parquet) overrides writing them in the pool's own format.

    The pool files must be those that were scored (same size and SHA-256), or it is an error."""
    run = rundir.load_scores(score_dir)
    rundir.verify_inputs(run)
    refuse_overwriting_inputs(list(run.pool["files"]) + list(run.pool["target_files"]), out_dir or score_dir,
                              rundir.OUTPUTS)
    idx = choose(run.scores, top=top, fraction=fraction, threshold=threshold, positive=positive,
                 probabilistic=run.probabilistic)
    rule = {"top": top, "fraction": fraction, "threshold": threshold, "positive": positive or None}
    rule = {k: v for k, v in rule.items() if v is not None}
    return rundir.write_selection(out_dir or score_dir, run, idx, rule, out_format=out_format)
