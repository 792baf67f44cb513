"""``domainsift select``: score and choose in one go (a :class:`~domainsift.spec.RunSpec` with a rule, run
by :func:`domainsift.jobs.run.run`), or choose again from saved scores (the stages:
:mod:`domainsift.pipeline.choose`; several targets: :mod:`domainsift.jobs.mix`)."""

from __future__ import annotations

from ..pipeline.choose import plan_select, run_select  # noqa: F401

__all__ = ["plan_select", "run_select", "score_and_select"]


def score_and_select(method: str, in_domain, pool, out_dir, params: dict | None = None, seed: int = 0,
                     reader: dict | None = None, execution=None, cascade=None, overwrite: bool = False,
                     top: int | str | None = None, fraction: float | str | None = None, threshold: float | None = None,
                     positive: bool = False, out_format: str | None = None, dedup: str | None = None,
                     dedup_threshold: float | None = None, sample: int | None = None, temperature: float = 1.0,
                     sample_seed: int = 0, exclude=None) -> tuple[dict, dict]:
    """Score ``pool`` (as :func:`domainsift.jobs.score.run_score`) and select from it into the same
    directory (the rule as :func:`run_select` takes it); a ``top`` larger than the pool is refused once the
    pool is counted, before any fit. Returns the score signature and the selection. The same run as
    ``run(RunSpec.single(..., rule=Rule(...)))``."""
    from ..engine import Execution
    from ..spec import Rule, RunSpec
    from ..pipeline.run import run
    drawn = sample is not None
    rule = Rule(top=top, fraction=fraction, threshold=threshold, positive=positive, resample=sample,
                temperature=temperature if drawn else None, resample_seed=sample_seed if drawn else None,
                dedup=dedup, dedup_threshold=dedup_threshold, exclude=exclude, out_format=out_format)
    done = run(RunSpec.single(method, in_domain, pool, out_dir, rule=rule, params=params or {}, seed=seed,
                              reader=reader, execution=execution or Execution(), cascade=cascade,
                              overwrite=overwrite))
    return done.signature, done.selection[""]
