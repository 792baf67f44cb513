"""``domainsift cluster``: PCA + GMM over sentence vectors, purity, maps (the stages:
:mod:`domainsift.pipeline.cluster`)."""

from ..pipeline.cluster import Grid, cluster_files, format_cluster_table, format_summary_table, run_cluster  # noqa: F401

__all__ = ["Grid", "cluster_files", "format_cluster_table", "format_summary_table", "run_cluster"]
