"""``domainsift select --target NAME=FILE ...``: several targets in one run (a
:class:`~domainsift.spec.RunSpec` of several targets, run by :func:`domainsift.jobs.run.run`; the stages:
:mod:`domainsift.pipeline.mix`)."""

from __future__ import annotations

from ..pipeline.mix import parse_mix, parse_targets  # noqa: F401

__all__ = ["parse_mix", "parse_targets"]
