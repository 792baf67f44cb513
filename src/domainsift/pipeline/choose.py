"""``domainsift select``: choose from saved scores (no re-scoring), or score and choose in one go.

:func:`run_select` reads a score directory, checks that the pool files are those scored (size and
SHA-256), chooses with the shared rule (:func:`domainsift.select.base.choose`) and writes the selected
lines through :mod:`domainsift.rundir`. :func:`score_then_select` is ``select --method``: one score job
(:func:`domainsift.pipeline.score.score`) and the selection from it, with the pool read at most three
times in all: the files hashed once (the selection checks them by size and modification time), and
under ``--cascade`` the selected lines written from the candidates' bytes kept by the scoring.
"""

from __future__ import annotations

import os
from contextlib import ExitStack

from .. import rundir
from .._internal.errors import DomainsiftError
from .._internal.safety import refuse_overwriting_inputs
from ..dedup import deduplicator, exclusion
from ..select.base import check_n_against_pool, choose, importance_sample


def run_select(score_dir: str | os.PathLike, out_dir: str | os.PathLike | None = None, rule=None,
               overwrite: bool = False, keep_exclude: bool = True) -> dict:
    """Choose from saved scores by ``rule`` (a :class:`~domainsift.spec.Rule`, the one ``select`` takes)
    and write the selected lines (no re-scoring). The rule's ``top`` or ``fraction`` ``"auto"``: as many
    lines as the pool's in-domain share estimated by the score run (``share.json``, ``score
    --estimate-share`` or ``select --fraction auto``); ``out_format`` (text, jsonl, parquet) overrides
    writing them in the pool's own format; ``dedup`` (``exact`` or ``near``, :mod:`domainsift.dedup`)
    keeps the best-scored line of every group of duplicates; ``exclude`` (a Corpus, a file or a list of
    lines: a test set) leaves out every line that repeats one of its lines, compared as ``dedup``
    compares (exact by default), and ``top`` / ``fraction`` still give N lines; a bitext pool's pairs
    that fail a pair check are passed over. Without ``exclude``, the exclusion the directory's selection
    was made with is kept (read again from its files, :func:`domainsift.dedup.recorded_exclusion`): a
    test set left out once stays out; ``keep_exclude=False`` (``--no-exclude``) drops it.

    The pool files must be those that were scored (same size and SHA-256), or it is an error.
    ``out_dir`` (default: the score directory itself) is locked while the selection is written; a
    directory that holds another finished run (another score run's scores) is refused unless
    ``overwrite``."""
    rule = _with_kept_exclusion(score_dir, _given(rule), keep_exclude).check()
    return _select(score_dir, out_dir, _recorded(rule), rule.out_format, overwrite,
                   dedup=deduplicator(rule.dedup, rule.dedup_threshold),
                   exclude=exclusion(rule.exclude, rule.dedup, rule.dedup_threshold), checks=rule.pair_filter())


def _given(rule):
    """The rule a re-selection takes (one line when there is none)."""
    from ..spec import Rule
    if not isinstance(rule, Rule):
        raise DomainsiftError("choose from saved scores by a rule: run_select(DIR, rule=Rule(top=N)) (or fraction, "
                              f"threshold, positive, resample); got {rule!r}")
    return rule


def _with_kept_exclusion(score_dir, rule, keep_exclude: bool, planning: bool = False):
    """``rule`` with the exclusion ``score_dir``'s selection was made with, when it names none and
    ``keep_exclude``; a draw (``resample``) cannot keep one: refused (ignored by a plan, which says it)."""
    if rule.exclude is not None or not keep_exclude:
        return rule
    from dataclasses import replace
    from ..dedup import recorded_exclusion
    kept = recorded_exclusion(rundir.recorded_excludes([score_dir]))
    if kept is None:
        return rule
    if rule.resample is not None:
        if planning:
            return rule
        raise DomainsiftError(f"{score_dir} was selected with --exclude, which --resample cannot keep; add "
                              "--no-exclude to drop it, or choose with --top, --fraction or --threshold")
    return replace(rule, exclude=kept)


AUTO = "auto"


def _recorded(rule) -> dict:
    """A checked :class:`~domainsift.spec.Rule` as the stages record it (``selection.json``'s ``rule``)."""
    out = dict(top=rule.top, fraction=rule.fraction, threshold=rule.threshold, positive=rule.positive)
    if rule.resample is not None:
        out.update(sample=rule.resample, temperature=rule.temperature_or_default,
                   sample_seed=rule.resample_seed_or_default)
    return out


def _auto(rule: dict) -> bool:
    return AUTO in (rule.get("top"), rule.get("fraction"))


def _resolve_auto(rule: dict, share: dict, n_pool: int) -> tuple[dict, int]:
    """``--top auto`` / ``--fraction auto`` as the number of lines the estimated share stands for; the
    rule as recorded keeps 'auto' with the estimate and its interval beside it."""
    from ..share import ShareEstimate
    est = ShareEstimate.from_dict(share)
    n = est.lines(n_pool)
    which = "top" if rule.get("top") == AUTO else "fraction"
    return {**rule, which: AUTO, "share": round(est.share, 6),
            "share_interval": [round(est.low, 6), round(est.high, 6)], "n_auto": n}, n


def _distinct(run, idx, rule: dict, dedup, fetch=None, exclude=None, checks=None) -> tuple:
    """The selection ``idx`` (best first) without duplicates, the best-scored of each group kept, without
    the lines ``exclude`` matches (a pair: by either side), and without the pairs that fail a pair check
    (``checks``: a :class:`~domainsift.pairs.PairChecks`, which counts them); under ``top`` / ``fraction``
    the walk goes past the N-th line until N lines are found (or the pool ends). Returns the indices, how
    many duplicates and how many excluded lines were passed over."""
    import numpy as np

    from ..select.base import choose
    want = len(idx) if (rule["top"] is not None or rule["fraction"] is not None) else None  # auto: N as well
    n = len(run.scores)
    window = len(idx) if want is None else min(n, want + max(100, want // 4))
    keep, skipped, excluded, seen = [], 0, 0, 0
    while True:
        ranked = idx if want is None else choose(run.scores, top=window)
        fresh = ranked[seen:]
        got = (rundir.records(run, {run.id_at(i) for i in fresh}, verify=False) if fetch is None
               else {i: v[:2] for i, v in fetch(fresh).items()})
        failed = (checks.failing([got[run.id_at(i)] for i in fresh]) if checks is not None
                  else [None] * len(fresh))
        for i, reason in zip(fresh, failed):
            text, target = got[run.id_at(i)]
            if exclude is not None and exclude.matches(text, target):
                excluded += 1
            elif reason is not None:
                checks.record(reason, (text, target))
            elif dedup is not None and dedup.is_duplicate(text if target is None else f"{text}\t{target}"):
                skipped += 1
            else:
                keep.append(int(i))
                if want is not None and len(keep) == want:
                    return np.asarray(keep, dtype=np.int64), skipped, excluded
        seen = len(ranked)
        if want is None or window >= n:
            return np.asarray(keep, dtype=np.int64), skipped, excluded
        window = min(n, 2 * window)


def _select(score_dir, out_dir, rule: dict, out_format: str | None, overwrite: bool, scored=None, dedup=None,
            exclude=None, checks=None) -> dict:
    """``scored``: the :class:`~domainsift.pipeline.score.ScoreJob` when this process scored the pool just
    now: its scores in memory (``scores.npy`` is not read back), the pool files' ``(size, mtime_ns)`` as
    it hashed them (a changed file is told by its stat, not by hashing it again), the selected lines'
    bytes it read already, the Ray workers' ``fetch`` (so that this process reads no pool file), the
    pool's estimated in-domain share (else the score directory's ``share.json``, which ``--top auto`` /
    ``--fraction auto`` need); ``dedup``: a :class:`~domainsift.dedup.Deduplicator`; ``exclude``: an
    :class:`~domainsift.dedup.Exclusion`."""
    kept = fetch = share = None
    if scored is None:
        run = rundir.load_scores(score_dir)
        rundir.verify_inputs(run)
    else:
        run, kept, fetch, share = scored.run, scored.kept, scored.fetch, scored.share
        rundir.verify_stats(run, scored.stats)
    _check_scores(run)
    out = out_dir or score_dir
    refuse_overwriting_inputs(list(run.pool["files"]) + list(run.pool["target_files"])
                              + (exclude.files if exclude is not None else []), out, rundir.OUTPUTS)
    if _auto(rule):
        rule, n_auto = _resolve_auto(rule, share if share is not None else rundir.read_share(score_dir),
                                     len(run.scores))
        idx = choose(run.scores, top=n_auto)
    elif rule.get("sample") is not None:
        idx = importance_sample(run.scores, rule["sample"], rule["temperature"], rule["sample_seed"],
                                run.probabilistic)
    else:
        idx = choose(run.scores, top=rule["top"], fraction=rule["fraction"], threshold=rule["threshold"],
                     positive=rule["positive"], probabilistic=run.probabilistic)
    extra = None
    if checks is not None and not run.pool.get("target_files") and not (run.pool.get("reader") or {}).get("field_target"):
        checks = None  # a pool of one side: no pair to check
    if dedup is not None or exclude is not None or checks is not None:
        asked = len(idx)
        idx, skipped, excluded = _distinct(run, idx, rule, dedup, fetch, exclude, checks)
        if (rule["top"] is not None or rule["fraction"] is not None) and len(idx) < asked:
            import logging
            failed = sum(checks.removed.values()) if checks is not None else 0
            logging.getLogger("domainsift").warning(
                "%d of the %d lines asked for: the pool has no more lines that are neither duplicates (%d passed "
                "over), lines of --exclude (%d) nor pairs that fail a pair check (%d)", len(idx), asked, skipped,
                excluded, failed)
        extra = {**({"dedup": {**dedup.describe(), "duplicates_removed": skipped}} if dedup is not None else {}),
                 **({"exclude": {**exclude.describe(), "lines_excluded": excluded}} if exclude is not None else {}),
                 **({"pair_checks": checks.describe()} if checks is not None else {})}
        if checks is not None and sum(checks.removed.values()):
            import logging
            logging.getLogger("domainsift").info(
                "pair checks: %s passed over (pairs that are not translations; --pair-checks none keeps them)",
                ", ".join(f"{n} {c}" for c, n in checks.removed.items() if n))
    rule = {k: v for k, v in {**rule, "positive": rule["positive"] or None}.items() if v is not None}
    if fetch is not None and kept is None:  # columnar rows have no bytes: written from their files
        kept = {i: (v[2], v[3]) for i, v in fetch(idx).items()}
    with rundir.claim(out, "selection", overwrite=overwrite, source=score_dir):
        return rundir.write_selection(out, run, idx, rule, out_format=out_format, kept=kept, extra=extra)


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


def score_then_select(spec) -> tuple[dict, dict]:
    """Score the pool of a one-target :class:`~domainsift.spec.RunSpec` (checked) and choose by its rule
    into the same directory; a ``top`` larger than the pool is refused once the pool is counted, before
    any fit. Returns the score signature and the selection."""
    given = spec.rule
    top, fraction, sample = given.top, given.fraction, given.resample
    from .score import score
    checks = given.pair_filter()
    rule = _recorded(given)  # checked with the spec
    index = deduplicator(given.dedup, given.dedup_threshold)  # a bad --dedup stops before any scoring
    left_out = exclusion(given.exclude, given.dedup, given.dedup_threshold)
    auto = _auto(rule)

    def share_of(n: int, estimate: dict | None):
        if auto:
            from ..share import ShareEstimate
            return ShareEstimate.from_dict(estimate).lines(n) / n
        return (top or sample) / n if (top or sample) else fraction

    from dataclasses import replace
    with ExitStack() as stack:  # a Ray session stays open for its workers to read the selection's lines
        job = score(replace(spec, estimate_share=auto),
                    None if auto else lambda n: check_n_against_pool(n, top if sample is None else sample, fraction),
                    share_of, stack, left_out)
        return job.signature, _select(job.out_dir, job.out_dir, rule, given.out_format, spec.overwrite, job, index,
                                      left_out, checks)


def plan_select(score_dir: str | os.PathLike, out_dir: str | os.PathLike | None = None, rule=None,
                keep_exclude: bool = True) -> str:
    """What :func:`run_select` would do (``select --from-scores DIR --plan``), as text: the rule, how many
    lines it takes, the exclusion kept, where it would write and what it would replace. Writes nothing."""
    rule = _with_kept_exclusion(score_dir, _given(rule), keep_exclude, planning=True).check()
    recorded, sample, exclude = _recorded(rule), rule.resample, rule.exclude
    deduplicator(rule.dedup, rule.dedup_threshold)
    run = rundir.load_scores(score_dir)
    out = out_dir or score_dir
    n = len(run.scores)
    if _auto(recorded):
        recorded, k = _resolve_auto(recorded, rundir.read_share(score_dir), n)
    elif sample is not None:
        check_n_against_pool(n, sample, None)
        k = sample
    else:
        check_n_against_pool(n, rule.top, rule.fraction)
        k = len(choose(run.scores, top=rule.top, fraction=rule.fraction, threshold=rule.threshold,
                       positive=rule.positive, probabilistic=run.probabilistic))
    given = " ".join(f"--{k2} {v}" for k2, v in recorded.items() if v not in (None, False) and k2 in
                     ("top", "fraction", "threshold", "sample")) or ("--positive" if rule.positive else "")
    lines = [f"plan: re-select from the scores in {score_dir} ({run.signature.get('method', '?')}, {n:,} pool lines); "
             "the pool is not scored again",
             f"  rule: {given.replace('--sample', '--resample')} -> {k:,} lines"
             + (" (N distinct lines, walking past duplicates and excluded lines)" if (rule.dedup or exclude is not None)
                and (rule.top is not None or rule.fraction is not None) else "")]
    if exclude is not None:
        ex = exclusion(exclude, rule.dedup, rule.dedup_threshold)
        lines.append(f"  exclude: {ex.n_lines:,} lines of {' '.join(ex.files) or '(lines)'}"
                     + (f" (kept from {', '.join(ex.kept_from)}; --no-exclude drops it)" if ex.kept_from else ""))
    if run.pool.get("target_files") and sample is None:
        checks = rule.pair_filter()
        lines.append("  pair checks: " + (f"{', '.join(checks.checks)} (a pair failing one is passed over; "
                                          f"--max-length-ratio {checks.max_ratio:g})" if checks else "none"))
    before = rundir.read_json(out, rundir.SELECTION) if os.path.isdir(out) else None
    lines.append(f"  writes: {out}" + (f" (replacing its selection of {before['n_selected']:,} lines)"
                                       if isinstance(before, dict) and "n_selected" in before else ""))
    lines.append("nothing was written (--plan)")
    return "\n".join(lines)
