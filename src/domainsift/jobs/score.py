"""``domainsift score``: fit a method and score the pool into a run directory (the stages:
:mod:`domainsift.pipeline.score`)."""

from ..pipeline.score import run_score, score  # noqa: F401

__all__ = ["run_score", "score"]
