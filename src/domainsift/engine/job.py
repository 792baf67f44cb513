"""The jobs behind ``domainsift score`` and ``select``: score once, select many.

:func:`run_score` fits a method and scores the pool into a run directory
(:mod:`domainsift.rundir` says what it holds); :func:`run_select` chooses from
saved scores, with no re-scoring. Scoring is resumable: the pool is scored in
chunks kept under ``DIR/.resume/`` (with the fitted model, for selectors that
can save one), so a killed run, started again with the same inputs and
parameters, neither refits nor rescores what it had finished. The folder is
removed when the run completes. The pool is read as a stream
(:mod:`domainsift.source`) and scored shard by shard (:mod:`domainsift.engine.shards`, locally,
or :mod:`domainsift.engine.ray`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Callable

import numpy as np

from .. import rundir
from ..corpus import Corpus
from ..errors import DomainsiftError
from ..machine import release_memory
from ..safety import check_distinct_inputs, refuse_overwriting_inputs
from ..select import get_selector
from ..select.base import choose
from ..signature import make_signature
from .shards import DEFAULT_SHARD_SIZE, ENGINES, assemble, finished_shards, score_local

log = logging.getLogger(__name__)

RESUME_DIR = rundir.RESUME


FIT_SAMPLE = 200_000  # a selector that fits on the pool sees at most this many records (a seeded sample)


def _fingerprint(method: str, params: dict, in_domain: Corpus, manifest: dict, extra: dict,
                 numerics: dict | None = None) -> str:
    """Identifies a scoring job: the package version, method, parameters, how the selector computes
    (``numerics``: its signature parameters, with the encoder's files, effective backend, int8 recipe,
    library versions and CPU family), in-domain texts, the pool's files (paths, reader, sizes and
    SHA-256) and how it is sharded. A run killed under one version or machine and started again
    under another starts over instead of mixing shards."""
    from .._version import __version__
    h = hashlib.sha256()
    keep = {k: repr(v) for k, v in sorted(params.items()) if k not in ("progress", "cache_dir")}
    h.update(json.dumps([__version__, method, keep, extra, numerics or {},
                         {k: manifest[k] for k in ("files", "target_files", "n", "reader", "fingerprints")}],
                        sort_keys=True, default=repr).encode())
    for t in in_domain.texts:  # length-prefixed: texts may hold NUL
        b = t.encode("utf-8")
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()[:24]


def _fit(selector, in_domain: Corpus, source, model_dir: Path, fit_sample: int, seed: int) -> dict:
    """Fit (or load the fit a killed run saved); a selector that fits on the pool sees all of it, or a
    seeded sample of ``fit_sample`` records of a larger pool. Returns what the signature records."""
    if selector.saves_state and model_dir.exists():  # save_state renames a finished folder
        log.info("resuming: loading the fitted %s model from %s", selector.name, model_dir)
        try:
            selector.load_state(model_dir)
            return {}
        except Exception as exc:  # a damaged saved fit: fit again rather than fail on every rerun
            log.warning("the saved %s model in %s cannot be loaded (%s); fitting again", selector.name,
                        model_dir, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            shutil.rmtree(model_dir, ignore_errors=True)
    note = {}
    fit_pool = None
    if selector.fit_uses_pool:
        n = len(source)
        if n <= fit_sample:
            fit_pool = source.corpus()
        else:
            keep = np.sort(np.random.default_rng(seed).choice(n, size=fit_sample, replace=False))
            fit_pool = source.take(keep)
            note = {"fit_sample": fit_sample}
    selector.fit(in_domain, fit_pool)
    del fit_pool
    release_memory()
    if selector.saves_state:
        selector.save_state(model_dir)
    return note


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
            score_local(selector, source, state, shard_size, done, bar, on_shard)
        else:
            from .ray import score_on_ray
            score_on_ray(selector, source, state, shard_size, done, bar, workers, address, model_dir, on_shard)
    finally:
        bar.close()
    return n_shards


def run_score(method: str, in_domain: Corpus, pool, out_dir: str | os.PathLike,
              params: dict | None = None, seed: int = 0, reader: dict | None = None,
              shard_size: int = DEFAULT_SHARD_SIZE, engine: str = "local", workers: int | None = None,
              address: str | None = None, fit_sample: int = FIT_SAMPLE, on_shard=None,
              overwrite: bool = False, cascade: bool = False, candidates: int | None = None,
              share: float | None = None) -> dict:
    """Fit ``method`` on the in-domain set (and the pool), score the pool, write the run directory.

    ``pool``: a :class:`~domainsift.source.PoolSource` (read as a stream, shard by shard) or a
    :class:`Corpus` in memory. The run records how the pool's files are read: a ``PoolSource``'s
    own reader; for a ``Corpus``, ``reader`` (format, column, field) says how it was read.
    ``engine``: ``local`` or ``ray`` (``workers``, ``address``). Returns the signature; the wall
    time is in ``DIR/run.json``. A killed run resumes: it loads the saved fit and scores only
    the shards without a completion marker (under ``DIR/.resume/``). ``out_dir`` is locked while
    the run writes; a directory that holds another kind of run is refused unless ``overwrite``.

    ``cascade``: a student scores the whole pool and ``method`` only the student's top candidates
    (:mod:`domainsift.engine.cascade`): ``candidates`` of them, or as many as the student's measured
    recall says a selection of ``share`` of the pool needs.
    """
    from ..source import MemorySource, PoolSource
    source = pool if isinstance(pool, PoolSource) else MemorySource(pool)
    params = dict(params or {})
    params.setdefault("seed", seed)
    if method == "student" and share is not None and "share" not in params:
        from ..select.student import learn_share
        params["share"] = learn_share(share)  # the student learns the teacher's top share of the selection
    t0 = time.time()
    selector = get_selector(method, **params)  # bad parameters fail here, before any work
    if cascade and (not selector.per_sentence or method == "student"):
        raise DomainsiftError(f"--cascade needs a method that scores each line on its own content; "
                              f"'{method}' {'is the student itself' if method == 'student' else 'does not'}")
    if not cascade and candidates is not None:
        raise DomainsiftError("--candidates applies to --cascade runs only")
    if candidates is not None and candidates < 1:
        raise DomainsiftError(f"--candidates must be at least 1, got {candidates}")
    if engine not in ENGINES:
        raise DomainsiftError(f"unknown engine '{engine}' (choose from {', '.join(ENGINES)})")
    real_files = [f for f in list(source.files) + list(source.target_files) if os.path.exists(f)]
    check_distinct_inputs(real_files, "the pool")
    rundir.check_recordable(in_domain.files)
    refuse_overwriting_inputs(list(in_domain.files) + real_files, out_dir, rundir.OUTPUTS)
    asked = {k: v for k, v in (reader or {}).items() if v is not None}
    if isinstance(source, MemorySource):  # records read before: as ``reader`` says, else the defaults
        reader = {**source.reader(), **asked}
    else:  # a stream is read by its own reader; an argument that says otherwise is a mistake
        reader = source.reader()
        clash = {k: (v, reader.get(k)) for k, v in asked.items() if reader.get(k, v) != v}
        if clash:
            raise DomainsiftError("reader= disagrees with the pool source's own reader: " + ", ".join(
                f"{k} {a!r} vs {b!r}" for k, (a, b) in clash.items()))
    manifest = rundir.source_manifest(source.files, source.target_files, len(source), reader)
    if manifest["n"] == 0:
        raise DomainsiftError("the pool is empty")
    if engine == "ray":  # what Ray needs is checked before the fit, not after it
        from .ray import plan
        workers = plan(selector, workers, address)
    with rundir.claim(out_dir, "score", overwrite=overwrite):
        how = {"cascade": {"candidates": candidates, "share": share}} if cascade else {}
        return _score_into(Path(out_dir), selector, method, params, in_domain, source, manifest, t0, shard_size,
                           engine, workers, address, fit_sample, on_shard, how)


def _sample(source, k: int, seed: int) -> Corpus:
    """A seeded sample of ``k`` records of the pool (all of it when it is smaller), in pool order."""
    n = len(source)
    if n <= k:
        return source.corpus()
    return source.take(np.sort(np.random.default_rng(seed).choice(n, size=k, replace=False)))


def _score_into(out_dir: Path, selector, method, params, in_domain, source, manifest, t0, shard_size, engine,
                workers, address, fit_sample, on_shard, how) -> dict:
    state = Path(out_dir) / RESUME_DIR / _fingerprint(method, params, in_domain, manifest,
                                                      {"shard_size": shard_size, "fit_sample": fit_sample, **how},
                                                      selector.signature_params())
    t_fit = time.time()
    fit_note = _fit(selector, in_domain, source, state / "model", fit_sample, params["seed"])
    stages = {"fit_seconds": round(time.time() - t_fit, 1)}  # this process's share, when a run resumed
    engine_kw = dict(progress=bool(params.get("progress")), engine=engine, workers=workers, address=address,
                     on_shard=on_shard)
    run_extra, cascade_sig, student = {}, None, None
    if how.get("cascade"):
        from .cascade import run_cascade
        res = run_cascade(selector, params, in_domain, source, state,
                          lambda k: _sample(source, k, params["seed"]), shard_size,
                          score_shards, engine_kw, how["cascade"]["share"], how["cascade"]["candidates"])
        student, n_shards = res["student"], res["n_shards"]
        scores, ids = assemble(state / "final", n_shards)
        run_extra = {"cascade": res["plan"]}
        stages.update(res["seconds"])
        ssp = student.signature_params()
        ssp.pop("teacher_signature", None)
        cascade_sig = {"cascade": f"student({ssp['features']}),candidates={res['plan']['candidates']}",
                       "cascade_student": ssp}
    else:
        n_shards = score_shards(selector, source, state, shard_size, model_dir=state / "model", **engine_kw)
        scores, ids = assemble(state, n_shards)
    sp = selector.signature_params()
    model = sp.pop("model", None) or sp.pop("embedder", None) or getattr(selector, "model_name", None)
    sp.pop("seed", None)
    in_files = [rundir.resolve(f) for f in in_domain.files]
    sig = make_signature(method, model=model, seed=params["seed"], **sp, **fit_note, **(cascade_sig or {}),
                         in_domain=in_files,
                         n_in_domain=len(in_domain), pool=manifest["files"],
                         pool_target=manifest["target_files"] or None, n_pool=manifest["n"],
                         probabilistic=bool(selector.probabilistic))
    metrics = getattr(selector, "holdout_metrics_", None)
    if metrics is not None:
        sig["classifier_holdout"] = metrics
    rundir.write_scores(out_dir, scores, ids, manifest, sig,
                        timings={"score_seconds": round(time.time() - t0, 1), "engine": engine,
                                 "shards": n_shards, **stages}, run=run_extra)
    del scores, ids
    selector.write_artifacts(out_dir)  # e.g. the cross-lingual alignment picture
    if student is not None:
        student.write_artifacts(out_dir)  # the cascade's student, reusable with --method student --student-from
    shutil.rmtree(Path(out_dir) / RESUME_DIR, ignore_errors=True)
    return sig


def run_select(score_dir: str | os.PathLike, out_dir: str | os.PathLike | None = None,
               top: int | None = None, fraction: float | None = None, threshold: float | None = None,
               positive: bool = False, out_format: str | None = None, overwrite: bool = False) -> dict:
    """Choose from saved scores and write the selected lines (no re-scoring); ``out_format``
    (text, jsonl, parquet) overrides writing them in the pool's own format.

    The pool files must be those that were scored (same size and SHA-256), or it is an error.
    ``out_dir`` (default: the score directory itself) is locked while the selection is written; a
    directory that holds another finished run (another score run's scores) is refused unless
    ``overwrite``."""
    run = rundir.load_scores(score_dir)
    rundir.verify_inputs(run)
    out = out_dir or score_dir
    refuse_overwriting_inputs(list(run.pool["files"]) + list(run.pool["target_files"]), out, rundir.OUTPUTS)
    idx = choose(run.scores, top=top, fraction=fraction, threshold=threshold, positive=positive,
                 probabilistic=run.probabilistic)
    rule = {"top": top, "fraction": fraction, "threshold": threshold, "positive": positive or None}
    rule = {k: v for k, v in rule.items() if v is not None}
    with rundir.claim(out, "selection", overwrite=overwrite, source=score_dir):
        return rundir.write_selection(out, run, idx, rule, out_format=out_format)
