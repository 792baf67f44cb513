"""``domainsift select``: choose from saved scores (no re-scoring), or score and choose in one go.

:func:`run_select` reads a score directory, checks that the pool files are those scored (size and
SHA-256), chooses with the shared rule (:func:`domainsift.select.base.choose`) and writes the selected
lines through :mod:`domainsift.rundir`. :func:`score_and_select` is ``select --method``: one score job
(:func:`domainsift.jobs.score.score`) and the selection from it, with the pool read at most three
times in all: the files hashed once (the selection checks them by size and modification time), and
under ``--cascade`` the selected lines written from the candidates' bytes kept by the scoring.
"""

from __future__ import annotations

import os

from .. import rundir
from .._internal.errors import DomainsiftError
from .._internal.safety import refuse_overwriting_inputs
from ..select.base import check_n_against_pool, choose


def run_select(score_dir: str | os.PathLike, out_dir: str | os.PathLike | None = None,
               top: int | None = None, fraction: float | None = None, threshold: float | None = None,
               positive: bool = False, out_format: str | None = None, overwrite: bool = False) -> dict:
    """Choose from saved scores and write the selected lines (no re-scoring); ``out_format``
    (text, jsonl, parquet) overrides writing them in the pool's own format.

    The pool files must be those that were scored (same size and SHA-256), or it is an error.
    ``out_dir`` (default: the score directory itself) is locked while the selection is written; a
    directory that holds another finished run (another score run's scores) is refused unless
    ``overwrite``."""
    return _select(score_dir, out_dir, dict(top=top, fraction=fraction, threshold=threshold, positive=positive),
                   out_format, overwrite)


def _select(score_dir, out_dir, rule: dict, out_format: str | None, overwrite: bool, stats: dict | None = None,
            kept: dict | None = None) -> dict:
    """``stats``: the pool files' ``(size, mtime_ns)`` when this process hashed them (a changed file is
    told by its stat, not by hashing it again); ``kept``: selected lines' bytes already read."""
    run = rundir.load_scores(score_dir)
    if stats is None:
        rundir.verify_inputs(run)
    else:
        rundir.verify_stats(run, stats)
    _check_scores(run)
    out = out_dir or score_dir
    refuse_overwriting_inputs(list(run.pool["files"]) + list(run.pool["target_files"]), out, rundir.OUTPUTS)
    idx = choose(run.scores, top=rule["top"], fraction=rule["fraction"], threshold=rule["threshold"],
                 positive=rule["positive"], probabilistic=run.probabilistic)
    rule = {k: v for k, v in {**rule, "positive": rule["positive"] or None}.items() if v is not None}
    with rundir.claim(out, "selection", overwrite=overwrite, source=score_dir):
        return rundir.write_selection(out, run, idx, rule, out_format=out_format, kept=kept)


def _check_scores(run) -> None:
    """Scores a selection can trust: finite, and ids that name the run's pool files (a damaged or edited
    ``scores.npy`` / ``ids.npy`` is one line, never a selection of NaN-scored or missing lines)."""
    import numpy as np
    bad = int(np.count_nonzero(~np.isfinite(run.scores)))
    if bad:
        raise DomainsiftError(f"{rundir.path(run.dir, rundir.SCORES)}: {bad} scores are not finite (NaN or inf); "
                              "score the pool again")
    ids = run.id_array
    if len(ids) and (ids[:, 0].min() < 0 or ids[:, 0].max() >= len(run.pool["files"]) or ids[:, 1].min() < 1):
        raise DomainsiftError(f"{rundir.path(run.dir, rundir.IDS)}: ids that name no line of the pool's files; "
                              "score the pool again")


def score_and_select(method: str, in_domain, pool, out_dir, params: dict | None = None, seed: int = 0,
                     reader: dict | None = None, execution=None, cascade=None, overwrite: bool = False,
                     top: int | None = None, fraction: float | None = None, threshold: float | None = None,
                     positive: bool = False, out_format: str | None = None) -> tuple[dict, dict]:
    """Score ``pool`` (as :func:`domainsift.jobs.score.run_score`) and select from it into the same
    directory; a ``top`` larger than the pool is refused once the pool is counted, before any fit.
    Returns the score signature and the selection."""
    from .score import score
    rule = dict(top=top, fraction=fraction, threshold=threshold, positive=positive)
    if sum(v is not None for v in (top, fraction, threshold)) + bool(positive) != 1:
        raise DomainsiftError("give exactly one of --top, --fraction, --threshold, --positive")
    if positive:
        from ..select import selector_class
        if not selector_class(method).probabilistic:
            raise DomainsiftError("--positive needs probability scores (method finetune)")
    job = score(method, in_domain, pool, out_dir, params, seed, reader, execution, cascade, overwrite,
                check_pool=lambda n: check_n_against_pool(n, top, fraction),
                selection_share=lambda n: top / n if top else fraction)
    return job.signature, _select(job.out_dir, job.out_dir, rule, out_format, overwrite, job.stats, job.kept)
