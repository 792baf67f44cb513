"""``domainsift select``: score and choose in one go (a :class:`~domainsift.spec.RunSpec` with a rule, run
by :func:`domainsift.jobs.run.run`), or choose again from saved scores (the stages:
:mod:`domainsift.pipeline.choose`; several targets: :mod:`domainsift.jobs.mix`)."""

from __future__ import annotations

from ..pipeline.choose import plan_select, run_select  # noqa: F401

__all__ = ["plan_select", "run_select"]
