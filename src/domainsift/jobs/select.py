"""``domainsift select``: score and choose in one go, or choose again from saved scores (the stages:
:mod:`domainsift.pipeline.choose`; several targets: :mod:`domainsift.jobs.mix`)."""

from ..pipeline.choose import plan_select, run_select, score_and_select  # noqa: F401

__all__ = ["plan_select", "run_select", "score_and_select"]
