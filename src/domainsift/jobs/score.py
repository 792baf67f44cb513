"""``domainsift score``: fit a method and score the pool into a run directory (a
:class:`~domainsift.spec.RunSpec` without a rule, run by :func:`domainsift.jobs.run.run`; the stages:
:mod:`domainsift.pipeline.score`)."""

from __future__ import annotations

from ..pipeline.score import score  # noqa: F401  (the stage itself, returning its ScoreJob)

__all__ = ["score"]
