"""``domainsift score`` and ``select`` (one target or several): the one entry point a
:class:`~domainsift.spec.RunSpec` runs through (:mod:`domainsift.pipeline.run`)."""

from ..pipeline.run import RunResult, format_plan, plan, run  # noqa: F401

__all__ = ["RunResult", "format_plan", "plan", "run"]
