"""The cascade (``--cascade``): a fast student scores every line, the chosen method only the candidates.

1. The teacher (the chosen method) is fitted as usual (on the pool, or a seeded sample of it).
2. The student (:mod:`domainsift.select.student`) learns from the teacher's scores of a seeded sample
   of the pool and of its own top fifth of a further draw (the enrichment; one sample of the counting
   pass holds both, ``StudentSelector.draw`` lines); its fit is saved, so a killed run does not fit it
   again.
3. The student scores the whole pool, shard by shard (resumable, on Ray like any method).
4. The candidates: the student's top M lines. M is ``--candidates``, or planned on the
   teacher-scored sample (out-of-fold student scores): enough lines to hold N of the teacher's top
   1.25 N, so that the cascade's selection is one the teacher itself makes at a threshold at most 25%
   looser (:func:`plan_share`). N is the selection's share of the pool
   (``select --top N``: N over the pool; ``--fraction``) or, when the run does not know it
   (``score``, ``--threshold``), :data:`PLAN_SHARE`. M is at least twice the selection, and
   recorded in ``run.json`` with the estimate it came from.
5. The teacher scores the candidates only, in shards (resumable); the candidates are read in one pass
   that keeps their bytes, so the selection among them is written without reading the pool again.
6. Every line gets a score: a candidate its teacher score, a non-candidate
   ``min(candidate scores) - 2 + q`` with ``q`` in (0, 1) rising with its student score. Every
   candidate ranks above every non-candidate, and the non-candidates keep the student's order;
   a non-candidate's score is never a probability (so ``--positive`` never takes one).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from .._internal.atomic import save_json
from .._internal.errors import DomainsiftError
from ..engine import shards
from ..rundir import layout
from ..engine.config import Cascade, Execution
from ..engine.executor import score_shards, score_targets
from ..engine.shards import assemble, finished_shards, shard_paths
from ..engine.config import STUDENT_SAMPLE
from ..select.student import StudentSelector

log = logging.getLogger(__name__)

PLAN_SHARE = 0.1  # the selection share a cascade plans for when the run does not say
MIN_FACTOR = 2  # at least this many times the selection's lines are candidates
SLACK = 0.25  # the cascade's selection lies within the teacher's own top (1 + SLACK) N (see plan_share)


def learn_share(selection_share: float) -> float:
    """The teacher's top share the student learns as in-domain for a selection of ``selection_share``
    of the pool: the teacher's top (1 + slack) N, the lines the candidates must hold (:func:`plan_share`),
    kept within [0.001, 0.5] (a selection of most of the pool still learns the teacher's top half
    against the rest). Measured against learning the top N alone, for a 1% selection of the shared pool: the
    fewest candidates that hold the guarantee on lines outside the student's sample, 8.9% of the pool
    against 9.5% (bench/results/student_heads.md)."""
    return float(min(0.5, max(0.001, (1 + SLACK) * selection_share)))


def plan_share(student_scores: np.ndarray, teacher_scores: np.ndarray, share: float,
               slack: float = SLACK) -> float:
    """The share of the lines, best first by ``student_scores``, that holds N of the teacher's top
    ``(1 + slack) N`` (N: ``share`` of the lines).

    Candidates chosen so make the cascade's selection (the teacher's top N among the candidates) one
    the teacher itself would make at a threshold at most ``slack`` looser: every selected line is in
    its own top (1 + slack) N, and at least (1 - slack) N of its top N are kept. Holding the teacher's
    exact top N instead (99% of it) asks the student to reproduce the teacher's order inside the
    domain, where a selection much smaller than the domain is a near-arbitrary part of it: 33% of a
    1M-line pool for 1% against 6% (docs/scale.md)."""
    n = len(teacher_scores)
    n_top = max(1, int(round(share * n)))
    wide = min(n, int(np.ceil((1 + slack) * n_top)))
    top = np.argsort(-np.asarray(teacher_scores), kind="stable")[:wide]
    pos = np.empty(n, np.int64)
    pos[np.argsort(-np.asarray(student_scores), kind="stable")] = np.arange(n)
    return float((np.sort(pos[top])[n_top - 1] + 1) / n)


def candidates_for(student, share: float) -> dict:
    """How many of the pool's lines (as a share) the teacher must score for a selection of ``share``
    of the pool (:func:`plan_share`), estimated on the student's out-of-fold scores of its sample; with
    none, all."""
    held = student.held_out_
    if not held:
        return {"share": 1.0, "slack": SLACK, "held_out": 0}
    need = plan_share(held["student"], held["teacher"], share)
    return {"share": need, "slack": SLACK, "held_out": int(len(held["teacher"])), "selection_share": share}


def build_student(teacher, params: dict, share: float | None = None):
    """The student of a teacher selector: distilled from the teacher's own encoder where the encoder has
    token embeddings to distil (otherwise from the default encoder), with the run's seed and cache; it
    learns the teacher's top ``share`` of its sample as in-domain (the selection's share, or
    :data:`PLAN_SHARE`).

    The student only ranks: the candidates it must hand the teacher are planned from its measured
    recall of the teacher's top, so a student farther from its teacher costs more candidates (time),
    not selection quality."""
    from ..embed import abilities
    from ..select.student import StudentSelector
    kw = {"teacher": teacher.name, "seed": params.get("seed", 0), "cache_dir": params.get("cache_dir"),
          "progress": bool(params.get("progress")), "share": learn_share(PLAN_SHARE if share is None else share)}
    model = teacher.encoder_name
    if isinstance(model, str) and abilities(model).distils:
        kw["model"] = model
    return StudentSelector(**kw)


def plan(student, n_pool: int, share: float | None, candidates: int | None) -> dict:
    """How many candidates the teacher scores, and why (recorded in ``run.json``)."""
    if candidates is not None:  # checked by Cascade.check
        m = min(candidates, n_pool)
        return {"candidates": int(m), "rule": "--candidates", "asked": int(candidates)}
    asked = share is not None
    share = PLAN_SHARE if share is None else share
    est = candidates_for(student, share)
    m = int(np.ceil(est["share"] * n_pool))
    floor = int(np.ceil(MIN_FACTOR * share * n_pool))
    m = int(min(n_pool, max(m, floor, 1)))
    return {"candidates": m, "rule": f"N of the teacher's top {1 + est['slack']:.4g} N on the sample "
            f"(out of fold), N = {share:.4g} of the lines" + ("" if asked else
                                                             " (the share a run plans for when it is not told)"),
            "selection_share": share, "estimate": est, "min_factor": MIN_FACTOR}


def top_candidates(state: Path, n_shards: int, m: int) -> np.ndarray:
    """Pool positions of the student's top ``m`` (ties by position), sorted by position; kept in the
    state folder so a resumed run takes the same candidates."""
    from .._internal.atomic import save_npy
    from ..select.base import choose
    path = state / layout.state_candidates(m)
    if path.exists():
        try:
            return np.load(path)
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
    scores = np.concatenate([np.load(shard_paths(state / layout.STATE_STUDENT, k)[0]) for k in range(n_shards)])
    idx = np.sort(choose(scores, top=m))
    save_npy(path, idx)
    return idx


def merge(state: Path, n_shards: int, shard_size: int, cand: np.ndarray, teacher_scores: np.ndarray) -> None:
    """The final per-shard scores (see the module docstring), written as the shards of ``state/final``."""
    final = state / layout.STATE_FINAL
    final.mkdir(parents=True, exist_ok=True)
    done = finished_shards(final)
    floor = float(np.min(teacher_scores)) - 2.0 if len(teacher_scores) else 0.0
    for k in range(n_shards):
        if k in done:
            continue
        s_path, i_path, _ = shard_paths(state / layout.STATE_STUDENT, k)
        student, ids = np.load(s_path).astype(np.float64), np.load(i_path)
        start = k * shard_size
        # in (floor, floor + 1): below every candidate; float64 throughout (a float32 array would round
        # close student scores into ties, differently on different CPUs)
        out = np.float64(floor) + (np.arctan(student) / np.pi + 0.5)
        lo, hi = np.searchsorted(cand, [start, start + len(student)])
        out[cand[lo:hi] - start] = teacher_scores[lo:hi]
        shards.write_shard(final, k, out, ids[:, 0], ids[:, 1])


def fit_students(targets: list) -> tuple[list, list]:
    """Every target's student fitted, or loaded when a killed run saved it (``tg.student`` is then the
    target's fitted student). The targets whose teachers give one set of static vectors (a fit of several
    targets, or teachers that distil none: the base encoder's) share one student, a head per target
    (:meth:`~domainsift.select.student.StudentSelector.joined`): its sample scored by a fit of several
    targets once and featurized once, the pool tokenized once. Returns what scores each target's shards and
    its column of that scorer's block (None: the target's student alone)."""
    groups: dict = {}
    for k, tg in enumerate(targets):
        groups.setdefault(_vectors_of(tg, k), []).append(k)
    scorers, columns = [tg.student for tg in targets], [None] * len(targets)
    for members in groups.values():
        if len(members) == 1:
            tg = targets[members[0]]
            if not _load_student(tg):
                tg.student.fit(tg.in_domain, tg.samples.get(STUDENT_SAMPLE), teacher=tg.selector)
                tg.student.save_state(tg.state / layout.STATE_STUDENT_MODEL)
            continue
        group = [targets[k] for k in members]
        names = [str(k) for k in members]
        joint = StudentSelector.joined(dict(zip(names, (tg.student for tg in group))))
        if not all([_load_student(tg) for tg in group]):  # every head, or none: one sample for all
            fits = {id(tg.column.fit) if tg.column is not None else None for tg in group}
            fit = group[0].column.fit if len(fits) == 1 and None not in fits else None
            cols = [tg.column.index for tg in group] if fit is not None else None
            joint.fit_heads(dict(zip(names, (tg.in_domain for tg in group))), group[0].samples.get(STUDENT_SAMPLE),
                            dict(zip(names, (tg.selector for tg in group))),
                            block=None if fit is None else (lambda records: fit.score_targets(records)[:, cols]))
            for tg in group:
                tg.student.save_state(tg.state / layout.STATE_STUDENT_MODEL)
        for j, k in enumerate(members):
            scorers[k], columns[k] = joint, j
    return scorers, columns


def _vectors_of(tg, k: int):
    """What a target's student distils its static vectors from: the base encoder's (``"base"``), or the
    fit of several targets whose encoder it is, or the target's own teacher (``k``); a saved student of
    its own (``--student-from``) is its own."""
    student = tg.student
    if student.student_from is not None:
        return ("own", k)
    if student.vectors == "base" or tg.selector.distil_source() is None:
        return ("base", student.model)
    return ("fit", id(tg.column.fit)) if tg.column is not None else ("own", k)


def _load_student(tg) -> bool:
    """The target's student as a killed run saved it, if it loads."""
    folder = tg.state / layout.STATE_STUDENT_MODEL
    if not folder.exists():
        return False
    try:
        tg.student.load_state(folder)
        return True
    except DomainsiftError as exc:
        log.warning("the saved student in %s cannot be loaded (%s); fitting it again", folder, exc)
        return False


def run_cascades(targets: list, source, execution: Execution, cascade: Cascade) -> list:
    """Steps 2 to 6 of the module docstring for one target or several (:class:`~domainsift.engine.config.Target`,
    each teacher fitted, each with its student's parameters and the pool sample it learns from): the students
    fitted or loaded (:func:`fit_students`: one student, a head per target, where the teachers share their
    static vectors), then one pass over the pool for every student, then every target's candidates read in
    one pass (their union), each teacher scoring its own. Returns per target what ``run.json`` and the
    signature record, and the candidates' bytes by ``(file, line)`` and records (every target's candidates: a
    local pool's, else None)."""
    from .._internal.machine import release_memory
    from ..io.source import MemorySource
    t = time.time()
    scorers, columns = fit_students(targets)
    fitted = round(time.time() - t, 1)  # every student's, their sample scored and featurized once
    release_memory()
    t = time.time()
    n = len(source)
    n_shards = score_targets(scorers, source, [tg.state / layout.STATE_STUDENT for tg in targets], execution,
                             [tg.state / layout.STATE_STUDENT_MODEL for tg in targets], columns=columns)
    passed = round(time.time() - t, 1)  # every student's, in one pass
    seconds = [{"student_fit_seconds": fitted, "student_score_seconds": passed} for _ in targets]
    hows, cands = [], []
    for tg in targets:
        how = plan(tg.student, n, cascade.share, cascade.candidates)
        hows.append(how)
        cands.append(top_candidates(tg.state, n_shards, how["candidates"]))
    t = time.time()
    remote = getattr(source, "remote", False)
    kept, records = None, None
    if not remote:  # every target's candidates in one read (their union), their bytes kept
        union = cands[0] if len(cands) == 1 else np.unique(np.concatenate(cands))
        records, kept = source.take(union, raw=True)
    out = []
    for tg, sec, how, cand in zip(targets, seconds, hows, cands):
        teacher_state = tg.state / layout.state_teacher(len(cand))
        if remote:  # the workers read their own candidates
            score_shards(tg.scorer, source, teacher_state, execution, model_dir=tg.model_dir, positions=cand,
                         column=tg.index)
        else:
            mine = records if len(cand) == len(union) else records[np.searchsorted(union, cand).tolist()]
            score_shards(tg.scorer, MemorySource(mine), teacher_state, execution, model_dir=tg.model_dir,
                         column=tg.index)
        sec["teacher_score_seconds"] = round(time.time() - t, 1)  # with the candidates' reading
        t = time.time()
        t_scores, _ = assemble(teacher_state, max(1, -(-len(cand) // execution.shard_size)))
        teacher_scores = np.concatenate([np.load(p) for p in t_scores]) if len(cand) else np.zeros(0)
        merge(tg.state, n_shards, execution.shard_size, cand, teacher_scores)
        save_json(tg.state / layout.STATE_PLAN, how)
        out.append({"student": tg.student, "plan": how, "n_shards": n_shards, "seconds": sec, "kept": kept,
                    "records": records})
    return out
