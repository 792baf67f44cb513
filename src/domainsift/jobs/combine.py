"""``domainsift combine``: one score directory from several runs of the same pool, and a selection from
it (the stages: :mod:`domainsift.pipeline.combine`)."""

from ..pipeline.combine import combine, combine_runs  # noqa: F401

__all__ = ["combine", "combine_runs"]
