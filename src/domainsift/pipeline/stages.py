"""The stages of a score run: the samples the counting pass draws, the fit (or the saved fit of a killed
run), the scoring pass (run by an executor, :mod:`domainsift.engine`, which only executes: it scores a
fitted selector over the shards that lack a marker), the cascade (:mod:`domainsift.pipeline.cascade`).
:mod:`domainsift.pipeline.score` owns what a run writes. The pool is read at most three times by a
``select``, with or without ``--cascade``:

1. one pass counts the records, hashes every file (each file's SHA-256 once per run) and draws the
   seeded samples the fits need (the teacher's fit sample when it fits on the pool, the student's
   sample under ``--cascade``), as :class:`~domainsift.io.source.Reservoir` samples;
2. the scoring pass (the method's, or under ``--cascade`` the student's);
3. the selection's lines (``select``) or, under ``--cascade``, the candidates, read once: the teacher
   scores them and their bytes are kept, so that the selection among them is written without a
   fourth read.

Under ``--engine ray`` the workers do the reading (:mod:`domainsift.engine.ray`): the pool's parts
are scanned (1), the samples' lines read in one more pass over the parts that hold any, the shards
read by the actors that score them (2), and the selection's or candidates' lines by position (3).

Scoring is resumable: chunks kept under ``DIR/.resume/<fingerprint>/`` (with the fitted model, for
selectors that can save one), so a killed run started again with the same inputs and parameters
neither refits nor rescores what it had finished.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


from .._internal.machine import release_memory
from ..io.corpus import Corpus
from ..engine.config import STUDENT_SAMPLE, Cascade, Execution
from ..engine.executor import score_targets
from ..engine.shards import assemble
from ..rundir.layout import STATE_CHECKPOINT as CHECKPOINT  # a training's last finished epoch
from ..rundir.layout import STATE_FINAL, STATE_MODEL, STATE_STUDENT, STATE_STUDENT_MODEL

log = logging.getLogger(__name__)

FIT, LANGUAGE, CALIBRATION = "fit", "language", "calibration"  # the counting pass's samples (and STUDENT_SAMPLE:
SHARE_SAMPLE = "share"  # the cascade's student's; the last: what the in-domain share is estimated on), each its own random stream
SURFACE = "surface"  # the pool's lines the in-domain set is compared with on the surface (domainsift.surface)
SAMPLE_STREAMS = {FIT: 1, STUDENT_SAMPLE: 2, LANGUAGE: 3, SHARE_SAMPLE: 4, SURFACE: 5, CALIBRATION: 9}
CALIBRATION_LINES = 256  # the sample a run's cost is calibrated on (domainsift.pipeline.plan)


def fingerprint(method: str, params: dict, in_domain, manifest: dict, extra: dict,
                numerics: dict | None = None) -> str:
    """Identifies a scoring job: the package version, method, parameters, how the selector computes
    (``numerics``: its signature parameters, with the encoder's files, effective backend, int8 recipe,
    library versions and CPU family), the in-domain texts (a sequence of strings; a mixture's: every
    target's, each with its name), the pool's files (paths, reader, sizes and SHA-256) and how it is
    sharded. A run killed under one version or machine and started again
    under another starts over instead of mixing shards."""
    from .._version import __version__
    h = hashlib.sha256()
    keep = {k: repr(v) for k, v in sorted(params.items()) if k not in ("progress", "cache_dir")}
    h.update(json.dumps([__version__, method, keep, extra, numerics or {},
                         {k: manifest[k] for k in ("files", "target_files", "n", "reader", "fingerprints")}],
                        sort_keys=True, default=repr).encode())
    from .._internal.checksums import hash_texts
    hash_texts(h, in_domain)
    return h.hexdigest()[:24]


def fit(selector, in_domain: Corpus, fit_pool: Callable[[], Corpus | None], model_dir: Path) -> None:
    """Fit (or load the fit a killed run saved); ``fit_pool()`` gives the pool, or its seeded sample, for
    a selector that fits on it (called only when the fit is not saved)."""
    if selector.saves_state and model_dir.exists():  # save_state renames a finished folder
        log.info("resuming: loading the fitted %s model from %s", selector.name, model_dir)
        try:
            selector.load_state(model_dir)
            return
        except Exception as exc:  # a damaged saved fit: fit again rather than fail on every rerun
            log.warning("the saved %s model in %s cannot be loaded (%s); fitting again", selector.name,
                        model_dir, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            shutil.rmtree(model_dir, ignore_errors=True)
    pool = fit_pool() if selector.fit_uses_pool else None
    checkpoint = model_dir.parent / CHECKPOINT
    selector.checkpoint_dir = checkpoint  # a fit that trains in epochs keeps each finished one here
    try:
        selector.fit(in_domain, pool)
    finally:
        selector.checkpoint_dir = None
    del pool
    release_memory()
    if selector.saves_state:
        selector.save_state(model_dir)
    shutil.rmtree(checkpoint, ignore_errors=True)  # the saved fit supersedes it


def kept(state: Path) -> str:
    """What a killed or interrupted run left under ``state`` for the same command to resume from."""
    from ..select.train import checkpoint_epoch
    from ..engine.shards import finished_shards
    parts = []
    if (state / STATE_MODEL).is_dir():
        parts.append("the fit")
    elif (e := checkpoint_epoch(state / CHECKPOINT)) is not None:
        parts.append(f"the fit's first {e[0]} of {e[1]} epochs")
    if (state / STATE_STUDENT_MODEL).is_dir():
        parts.append("the student")
    n = len(finished_shards(state, check=False)) + len(finished_shards(state / STATE_STUDENT, check=False))
    if n:
        parts.append(f"{n} finished shard{'s' if n != 1 else ''}")
    if not parts:
        return "nothing was finished yet; the same command starts over"
    return f"{', '.join(parts)} kept in {state}; the same command resumes from there"


@dataclass
class Scored:
    """What a scoring job produced: per-shard score and id files, the number of shards, the seconds of
    each stage, what the fit adds to the signature, the cascade's plan and student, and the bytes of
    the lines read after scoring (a cascade's candidates) by ``(file, line)``, and their records."""

    scores: list
    ids: list
    n_shards: int
    seconds: dict
    fit_note: dict
    plan: dict | None = None
    student: object = None
    kept: dict | None = None
    records: Corpus | None = None  # the lines read after scoring (a cascade's candidates), their texts


def samples_needed(selector, n_fit: int, cascade: Cascade | None, student_sample: int | None, seed: int,
                   share: bool = False) -> dict:
    """The samples the counting pass must draw: ``{name: (size, seed)}``; ``share``: the pool sample the
    in-domain share is estimated on (:mod:`domainsift.share`)."""
    out = {}
    if share:
        from ..share import SAMPLE_LINES
        out[SHARE_SAMPLE] = (SAMPLE_LINES, [seed, SAMPLE_STREAMS[SHARE_SAMPLE]])
    if selector.fit_uses_pool:
        out[FIT] = (n_fit, [seed, SAMPLE_STREAMS[FIT]])
    if cascade is not None and student_sample:
        out[STUDENT_SAMPLE] = (student_sample, [seed, SAMPLE_STREAMS[STUDENT_SAMPLE]])
    from ..embed import abilities
    if selector.reads_content or (selector.encoder_name is not None and abilities(selector.encoder_name).languages):
        from ..languages import SAMPLE  # is the pool in the encoder's languages, and in the in-domain set's?
        out[LANGUAGE] = (SAMPLE, [seed, SAMPLE_STREAMS[LANGUAGE]])
    if selector.reads_content:  # does the in-domain set look like the pool? (domainsift.surface)
        out[SURFACE] = surface_sample(seed)
    if selector.encoder_name is not None:  # a long run says what it will cost (domainsift.pipeline.plan)
        out[CALIBRATION] = (CALIBRATION_LINES, [seed, SAMPLE_STREAMS[CALIBRATION]])
    return out


def surface_sample(seed: int) -> tuple:
    """The counting pass's sample that the in-domain set is compared with on the surface (``(size, seed)``):
    a run's and ``--plan``'s alike."""
    from ..surface import SAMPLE as SURFACE_LINES
    return SURFACE_LINES, [seed, SAMPLE_STREAMS[SURFACE]]


def execute_targets(targets: list, source, execution: Execution, cascade: Cascade | None = None) -> list:
    """:func:`execute` for several targets (:class:`Target`) in one run: each fitted (or its saved fit
    loaded), then one scoring pass over the pool for all of them (the local engine reads each shard
    once); under ``cascade`` every student in one pass, and every target's candidates read in one more.
    Each target's scores are those of a run of its own (a line's score depends on its target alone);
    the columns of a fit of several targets (:class:`~domainsift.engine.config.Column`) are scored
    together, one ``(n, T)`` block a shard. Returns a :class:`Scored` per target, in order."""
    notes, fit_seconds = [], []
    for tg in targets:
        t = time.time()
        note = {}
        if FIT in tg.samples and len(tg.samples[FIT]) < len(source):
            note = {"fit_sample": execution.fit_sample}
        if tg.column is None:  # a column of a fit of several targets came fitted
            fit(tg.selector, tg.in_domain, lambda tg=tg: tg.samples.get(FIT), tg.state / STATE_MODEL)
        tg.samples.pop(FIT, None)  # fitted: its sample (200,000 lines by default) is not held through the scoring
        notes.append(note)
        fit_seconds.append(round(time.time() - t, 1))  # this process's share, when a run resumed
    if cascade is None:
        t = time.time()
        n_shards = score_targets([tg.scorer for tg in targets], source, [tg.state for tg in targets], execution,
                                 [tg.model_dir for tg in targets], columns=[tg.index for tg in targets])
        passed = round(time.time() - t, 1)  # the shards' scoring (reading the pool included), every target's
        return [Scored(*assemble(tg.state, n_shards), n_shards, {"fit_seconds": f, "pass_seconds": passed}, note)
                for tg, f, note in zip(targets, fit_seconds, notes)]
    from .cascade import run_cascades
    done = run_cascades(targets, source, execution, cascade)
    out = []
    for tg, res, f, note in zip(targets, done, fit_seconds, notes):
        scores, ids = assemble(tg.state / STATE_FINAL, res["n_shards"])
        out.append(Scored(scores, ids, res["n_shards"], {"fit_seconds": f, **res["seconds"]}, note, res["plan"],
                          res["student"], res["kept"], res["records"]))
    return out
