"""``domainsift score``: fit a method and score the pool into a run directory.

:func:`score` checks everything it can before reading (the method's parameters, the engine, the
cascade, the inputs against ``--out``), then reads the pool once to count, fingerprint and sample it
(:meth:`domainsift.io.source.PoolSource.scan`), hands the work to the engine
(:func:`domainsift.pipeline.stages.execute`: fit, shards, resume, the cascade) and writes the run directory
through :mod:`domainsift.rundir`. A killed run resumes (``DIR/.resume/``).
"""

from __future__ import annotations

import dataclasses
import os
from contextlib import ExitStack
from typing import Callable
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .. import rundir
from .._internal.errors import DomainsiftError, Interrupted
from .._internal.safety import check_distinct_inputs, refuse_overwriting_inputs
from .._internal.signature import make_signature
from ..engine.config import Cascade, Column, Execution
from .stages import fingerprint, samples_needed
from ..io.corpus import Corpus, file_digest
from ..select import get_selector


@dataclass
class ScoreJob:
    """A score run as it went: the signature, the run directory, the pool's scan (file stats at the
    time, to tell a changed file later without reading it) and the bytes of lines read after scoring
    (a cascade's candidates), so that a selection can be written from them."""

    signature: dict
    out_dir: Path
    stats: dict
    kept: dict | None
    fetch: Callable | None = None  # Ray: the records at pool positions, read by the workers
    share: dict | None = None      # the pool's estimated in-domain share, when the run estimated it
    #: the texts of the lines read after scoring (a cascade's candidates), ``{(file, line): (text, other
    #: side or None)}`` by the resolved file name, so that a mixture reads none of them again
    read: dict | None = None
    #: the scores and ids as written, in memory (:class:`~domainsift.rundir.ScoreRun`): choosing reads no
    #: ``scores.npy`` this run wrote
    run: object = None


@dataclass
class ScannedPool:
    """A pool read once (counted, fingerprinted, sampled) for several score runs over it, as a mixture's
    targets: ``source`` as the runs read it (under Ray, the workers' view of the files), ``scan`` what
    the pass found, ``asked`` the samples it drew (``{name: (size, seed)}``,
    :func:`~domainsift.pipeline.stages.samples_needed`). A run that needs a sample the pass did not draw reads
    the pool again."""

    source: object
    scan: object
    asked: dict
    #: what the runs share beyond the pass: the share sample's vectors by encoder (``--fraction auto``:
    #: every target's estimate reads the same sample, encoded once)
    vectors: dict = dataclasses.field(default_factory=dict)
    #: the warnings said already (the pool's language: one line for every target, not one a target)
    said: set = dataclasses.field(default_factory=set)


def open_pool(pool, execution: Execution, stack: ExitStack):
    """The pool as a run reads it: a :class:`~domainsift.io.source.PoolSource` as given, records in memory
    as a :class:`~domainsift.io.source.MemorySource`; under the Ray engine (``execution.workers``
    planned) a session is kept open in ``stack`` and the files are read by the workers."""
    from ..io.source import MemorySource, PoolSource
    source = pool if isinstance(pool, PoolSource) or getattr(pool, "remote", False) else MemorySource(pool)
    return execution.reading(source, stack)


def counting_pass(selector, params: dict, execution: Execution, cascade: Cascade | None,
                  estimate_share: bool) -> tuple:
    """What a score run's counting pass draws for ``selector`` (:func:`~domainsift.pipeline.stages.samples_needed`),
    and the cascade's student whose sample is one of them (None without ``cascade``)."""
    student = None
    if cascade is not None:
        from .cascade import build_student
        student = build_student(selector, params)
    return student, samples_needed(selector, execution.fit_sample, cascade,
                                   student.draw if student is not None else None, params["seed"],
                                   share=estimate_share)


def score(spec, check_pool=None, selection_share=None, stack: ExitStack | None = None, exclude=None) -> ScoreJob:
    """A score run of a one-target :class:`~domainsift.spec.RunSpec` (checked), returning its
    :class:`ScoreJob`. ``check_pool(n)`` is called once the pool is counted, before any fit (``select``
    refuses a ``--top`` larger than the pool there); ``selection_share(n, share)``: the share of the pool
    the selection will take (the student learns it, the cascade plans for it), given the pool's size and
    its estimated in-domain share (a dict, or None). ``stack``: where the Ray engine's session is kept
    open (the caller's, so that its workers can still read the selection's lines; by default closed on
    return). ``exclude``: the selection's :class:`~domainsift.dedup.Exclusion` (``select --exclude``):
    the in-domain lines it leaves out are not warned of as lines the selection will hold."""
    if stack is None:
        with ExitStack() as own:
            return score(spec, check_pool, selection_share, own, exclude)
    job = prepare(spec, stack, check_pool, selection_share, exclude)
    return score_prepared([job], spec.overwrite)[0]


@dataclass
class Prepared:
    """A score run checked, counted and planned, before its fit: what :func:`score_prepared` runs and
    writes (one target of a run, or several that share the pool's pass)."""

    method: str
    selector: object
    student: object
    in_domain: Corpus
    params: dict
    source: object
    scan: object
    execution: Execution
    cascade: Cascade | None
    out_dir: Path
    manifest: dict
    identity: str
    warnings: list
    estimate: dict | None
    t0: float
    column: Column | None = None


def prepare(spec, stack: ExitStack, check_pool=None, selection_share=None, exclude=None,
            column: Column | None = None, identity: str | None = None) -> Prepared:
    """Everything a score run does before its fit (see :func:`score`; ``spec``: a one-target
    :class:`~domainsift.spec.RunSpec`): the method's parameters, the engine, the cascade and the inputs
    checked, the pool counted, fingerprinted and sampled (or, for ``spec.pool``, the pass a caller made
    for several runs, a :class:`ScannedPool`), the warnings, the share, the run's identity. ``column``:
    the run is a target's column of a fit of several targets, fitted already (its selector is that fit's
    view of the target); ``identity``: the run's, given by a caller that fingerprinted the run once for
    several targets (a mixture's, :func:`run_identity`)."""
    from ..io.source import MemorySource, PoolSource
    t0 = time.time()
    method, in_domain, pool, seed, cascade = spec.method, spec.in_domain, spec.pool, spec.seed, spec.cascade
    execution, estimate_share = spec.execution or Execution(), spec.estimate_share
    reader = None if spec.reader is None else dict(spec.reader)
    scanned = pool if isinstance(pool, ScannedPool) else None
    source = scanned.source if scanned else pool if isinstance(pool, PoolSource) else MemorySource(pool)
    params = dict(spec.params)
    params.setdefault("seed", seed)
    selector = (get_selector(method, **params) if column is None  # bad parameters fail here, before any reading
                else column.fit.target(column.fit.targets_[column.index]))
    execution.check()
    if cascade is not None:
        cascade.check()
        if not selector.per_sentence or not selector.cascade_teacher:
            raise DomainsiftError(f"--cascade needs a method that scores each line on its own content; "
                                  f"'{method}' {'does not' if selector.per_sentence else 'is the student itself'}")
    real_files = [f for f in list(source.files) + list(source.target_files) if os.path.exists(f)]
    check_distinct_inputs(real_files, "the pool")
    rundir.check_recordable(in_domain.files)
    refuse_overwriting_inputs(list(in_domain.files) + real_files, spec.out, rundir.OUTPUTS)
    reader = _reader(source, reader)
    execution = execution.planned(selector)  # what the engine needs is checked before any reading
    student, need = counting_pass(selector, params, execution, cascade, estimate_share)
    source = open_pool(source, execution, stack)  # from here on, under Ray, the workers read the pool's files
    # pass 1: count, fingerprint, sample (or the pass a caller made for several runs)
    if scanned and all(scanned.asked.get(k) == v for k, v in need.items()):
        # the pass is shared read-only: every target's fit sees the same samples (the engine drops the fit
        # sample from its own copy once fitted, never from the other targets')
        scan = dataclasses.replace(scanned.scan, samples=dict(scanned.scan.samples))
    else:
        scan = source.scan(need)
    if scan.n == 0:
        raise DomainsiftError("the pool is empty")
    if check_pool:
        check_pool(scan.n)
    from .plan import input_warnings
    warnings = input_warnings(selector, in_domain, scan.samples, pool_files=list(source.files), n_pool=scan.n,
                              said=scanned.said if scanned else None,
                              exclude=exclude)
    estimate = _estimate_share(selector, in_domain, scan, params["seed"], execution.progress,
                               scanned.vectors if scanned else None) if estimate_share else None
    share = (selection_share(scan.n, estimate) if selection_share
             else (cascade.share if cascade is not None else None))
    from .plan import announce
    announce(selector, method, scan.n, len(in_domain), scan.samples.get("calibration"),
             int(round(share * scan.n)) if share else None, cascade)
    _learn_share(selector, params, share)
    if student is not None:
        _learn_share(student, {}, share, default=True)
        cascade = Cascade(cascade.candidates, share)
    manifest = rundir.source_manifest(source.files, source.target_files, scan.n, reader,
                                      fingerprints=scan.fingerprints)
    if identity is None:
        identity = run_identity(method, selector, params, in_domain.texts, manifest, execution, cascade)
    return Prepared(method, selector, student, in_domain, params, source, scan, execution, cascade, Path(spec.out),
                    manifest, identity, warnings, estimate, t0, column)


def run_identity(method: str, selector, params: dict, texts, manifest: dict, execution: Execution,
                 cascade: Cascade | None) -> str:
    """A score run's resume identity (:func:`~domainsift.pipeline.stages.fingerprint`): what shapes its scores,
    the in-domain ``texts`` (a mixture's: every target's, named), the pool's manifest, how it is
    sharded and cascaded, the files the selector reads besides (the bitext's contents)."""
    how = {"cascade": {"candidates": cascade.candidates, "share": cascade.share}} if cascade else {}
    inputs = {rundir.resolve(f): file_digest(f) for f in selector.input_files()}  # e.g. the bitext's contents
    if inputs:
        how["inputs"] = inputs
    return fingerprint(method, params, texts, manifest,
                       {"shard_size": execution.shard_size, "fit_sample": execution.fit_sample, **how},
                       selector.signature_params())


def score_prepared(jobs: list, overwrite: bool = False, claim: bool = True) -> list:
    """Fit and score prepared runs (:func:`prepare`) that share one pool, source and execution, and write
    each run's directory: every target fitted, then the pool scored once for all of them
    (:func:`~domainsift.pipeline.stages.execute_targets`). Each directory is claimed while the runs write
    (``claim=False``: the caller's claim holds them, a mixture's)."""
    from ..engine.config import Target
    from .stages import execute_targets
    first = jobs[0]
    with ExitStack() as claims:
        targets = []
        for job in jobs:
            if claim:
                claims.enter_context(rundir.claim(job.out_dir, "score", overwrite=overwrite, identity=job.identity))
            targets.append(Target(job.selector, job.in_domain, job.scan.samples,
                                  job.out_dir / rundir.RESUME / job.identity, job.student, job.column))
        try:
            done = execute_targets(targets, first.source, first.execution, first.cascade)
        except KeyboardInterrupt:
            from .stages import kept
            raise Interrupted("; ".join(kept(tg.state) for tg in targets)) from None
        return [_finish(job, d) for job, d in zip(jobs, done)]


def _finish(job: Prepared, done) -> ScoreJob:
    """Write a scored run's directory and say what ran (:class:`ScoreJob`)."""
    selector, out = job.selector, job.out_dir
    sig = _signature(job.method, selector, job.params, job.in_domain, job.manifest, done)
    run = {"identity": job.identity, **({"cascade": done.plan} if done.plan else {}),
           **({"warnings": job.warnings} if job.warnings else {}), **({"share": job.estimate} if job.estimate else {})}

    def artifacts(out: Path) -> None:
        selector.write_artifacts(out)  # e.g. the cross-lingual alignment picture
        if done.student is not None:
            done.student.write_artifacts(out)  # the cascade's student, reusable with --student-from

    rundir.write_scores(out, done.scores, done.ids, job.manifest, sig,
                        timings={"score_seconds": round(time.time() - job.t0, 1), "engine": job.execution.engine,
                                 "shards": done.n_shards, **done.seconds}, run=run, artifacts=artifacts,
                        share=job.estimate)
    import numpy as np  # the scores just written, from the shards they were streamed from (choosing holds them
    scored = rundir.ScoreRun(out, np.concatenate([np.load(p) for p in done.scores]), job.manifest, sig,  # anyway);
                             rundir.read_ids(out, job.manifest))  # the ids memory-mapped: read at the chosen lines
    shutil.rmtree(out / rundir.RESUME, ignore_errors=True)
    stats = {rundir.resolve(f): st for f, st in job.scan.stats.items()}
    kept = done.kept
    if kept is not None:  # keyed by the resolved file names (the same bytes under other names)
        kept = kept.renamed({f: rundir.resolve(f) for f in kept.files})
    source = job.source
    read = None
    if done.records is not None:
        r = done.records
        names = {f: rundir.resolve(f) for f in dict.fromkeys(f for f, _ in r.ids)}
        read = {(names[f], ln): (t, g) for (f, ln), t, g in zip(r.ids, r.texts, r.targets or [None] * len(r))}
    return ScoreJob(sig, out, stats, kept, _fetcher(source) if getattr(source, "remote", False) else None,
                    job.estimate, read, scored)


def _estimate_share(selector, in_domain, scan, seed: int, progress: bool, memo: dict | None = None) -> dict:
    """The pool's in-domain share (:func:`domainsift.share.estimate_share`) from the counting pass's
    sample, over the frozen vectors of the method's own encoder (MiniLM for a method without a
    pretrained one: Moore-Lewis, random, tf-idf ...). ``memo``: the encoder and the sample's vectors
    by model, kept for the next target's estimate on the same sample (a mixture's)."""
    from ..embed import DEFAULT_EMBEDDER, EmbedConfig, abilities
    from .stages import SHARE_SAMPLE
    from ..share import estimate_share
    model = selector.encoder_name
    if model is None or abilities(model).kind == "baseline":
        model = DEFAULT_EMBEDDER
    sample = scan.samples[SHARE_SAMPLE].texts
    memo = {} if memo is None else memo
    if ("share", model) not in memo:
        enc = EmbedConfig(embedder=model, cache_dir=selector.param_values().get("cache_dir"), progress=progress).build()
        memo[("share", model)] = (enc, enc.encode(sample))
    enc, vectors = memo[("share", model)]
    est = estimate_share(in_domain.texts, sample, model=model, seed=seed, encode=enc.encode,
                         pool_vectors=vectors)
    import logging
    logging.getLogger("domainsift").info("the pool's in-domain share: %s", est.describe())
    return est.to_dict()


def _fetcher(source) -> Callable:
    """``fetch(positions)``: the records at pool positions, read by the Ray engine's workers, as
    ``{(file, line): (text, other side, bytes, other side's bytes)}``."""
    def fetch(positions):
        import numpy as np
        records, raw = source.take(np.unique(np.asarray(positions, dtype=np.int64)), raw=True)
        targets = records.targets or [None] * len(records)
        return {(rundir.resolve(f), line): (text, target, *raw[(f, line)])
                for (f, line), text, target in zip(records.ids, records.texts, targets)}
    return fetch


def _learn_share(selector, params: dict, share: float | None, default: bool = False) -> None:
    """A selector that learns the selection's share (the student: ``share``) takes it unless its
    parameters name one; a cascade's student also when the selection's share is not known (then the
    share a cascade plans for)."""
    from .cascade import PLAN_SHARE, learn_share
    if "share" not in {p.name for p in selector.params} or "share" in params:
        return
    if share is None and not default:
        return
    selector.share = learn_share(PLAN_SHARE if share is None else share)
    selector.check_params()


def _reader(source, asked: dict | None) -> dict:
    from ..io.source import MemorySource
    asked = {k: v for k, v in (asked or {}).items() if v is not None}
    if isinstance(source, MemorySource):  # records read before: as ``reader`` says, else the defaults
        return {**source.reader(), **asked}
    reader = source.reader()  # a stream is read by its own reader; an argument that says otherwise is a mistake
    clash = {k: (v, reader.get(k)) for k, v in asked.items() if reader.get(k, v) != v}
    if clash:
        raise DomainsiftError("reader= disagrees with the pool source's own reader: " + ", ".join(
            f"{k} {a!r} vs {b!r}" for k, (a, b) in clash.items()))
    return reader


def _signature(method, selector, params, in_domain, manifest, done) -> dict:
    """What ran: the method's signature parameters, the model, the seed, the fit sample, the cascade's
    student and candidates, the inputs."""
    cascade_sig = {}
    if done.student is not None:
        ssp = done.student.signature_params()
        ssp.pop("teacher_signature", None)
        cascade_sig = {"cascade": f"student({ssp['features']}),candidates={done.plan['candidates']}",
                       "cascade_student": ssp}
    sp = selector.signature_params()
    model = sp.pop("model", None) or sp.pop("embedder", None) or selector.model_name
    sp.pop("seed", None)
    sig = make_signature(method, model=model, seed=params["seed"], **sp, **done.fit_note, **cascade_sig,
                         in_domain=[rundir.resolve(f) for f in in_domain.files],
                         n_in_domain=len(in_domain), pool=manifest["files"],
                         pool_target=manifest["target_files"] or None, n_pool=manifest["n"],
                         probabilistic=bool(selector.probabilistic),
                         **({"strip_id": True} if (manifest.get("reader") or {}).get("strip_id") else {}))
    metrics = selector.holdout_metrics_
    if metrics is not None:
        sig["classifier_holdout"] = metrics
    return sig
