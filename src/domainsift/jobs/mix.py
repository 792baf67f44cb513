"""``domainsift select --target NAME=FILE ...``: several targets in one run (a
:class:`~domainsift.spec.RunSpec` of several targets, run by :func:`domainsift.jobs.run.run`; the stages:
:mod:`domainsift.pipeline.mix`)."""

from __future__ import annotations

import os

from ..pipeline.mix import parse_mix, parse_targets  # noqa: F401

__all__ = ["parse_mix", "parse_targets", "select_mix"]


def select_mix(method: str, targets: dict, pool, out_dir: str | os.PathLike, mix: dict | None = None,
               top: int | str | None = None, fraction: float | str | None = None, params: dict | None = None,
               seed: int = 0, reader: dict | None = None, execution=None, cascade=None,
               overwrite: bool = False, exclude=None, dedup: str | None = None,
               dedup_threshold: float | None = None) -> dict:
    """Score ``pool`` against every target (``{name: Corpus}``) and select a mixture
    (:mod:`domainsift.pipeline.mix` says how). ``mix``: ``{name: weight}`` (default equal); exactly one of
    ``top`` / ``fraction`` (a number, or ``"auto"``: each target its estimated share); ``dedup`` (``exact``
    or ``near``): no two lines of the mixture duplicate each other; ``exclude``: a Corpus, a file or a list
    of lines no target gets. Returns ``mix.json``'s contents. The same run as
    ``run(RunSpec(method, targets, pool, out_dir, rule=Rule(top=...), mix=mix))``."""
    from ..engine import Execution
    from ..spec import Rule, RunSpec
    from ..pipeline.run import run
    rule = Rule(top=top, fraction=fraction, dedup=dedup, dedup_threshold=dedup_threshold, exclude=exclude)
    return run(RunSpec(method, targets, pool, out_dir, rule=rule, mix=mix, params=params or {}, seed=seed,
                       reader=reader, execution=execution or Execution(), cascade=cascade,
                       overwrite=overwrite)).mix
