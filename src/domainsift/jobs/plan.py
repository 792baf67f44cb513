"""``score --plan`` / ``select --plan``: what a run will do and cost, before it runs (the cost model and
the warnings: :mod:`domainsift.pipeline.plan`)."""

from ..pipeline.plan import format_plan, plan_run  # noqa: F401

__all__ = ["format_plan", "plan_run"]
