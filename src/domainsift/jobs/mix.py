"""``domainsift select --target NAME=FILE ...``: several targets in one run (the stages:
:mod:`domainsift.pipeline.mix`)."""

from ..pipeline.mix import parse_mix, parse_targets, select_mix  # noqa: F401

__all__ = ["parse_mix", "parse_targets", "select_mix"]
