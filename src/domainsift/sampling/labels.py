"""Domain labels for the sampler: gold labels from a file, or the clusters that
``domainsift cluster`` found (paper 004's unsupervised setting)."""

from __future__ import annotations

import os
from pathlib import Path

from .._internal.errors import InputError


def read_domains(path: str | os.PathLike) -> list[str]:
    """One domain label per example, in the order of the examples.

    ``path`` is a ``domainsift cluster`` output directory (its ``clusters.tsv``: the
    cluster of every input line, for the first k, PCA and seed) or a text file with
    one label per line."""
    p = Path(path)
    from .. import rundir
    if p.is_dir():
        return rundir.read_clusters(p)
    if p.name == rundir.CLUSTERS and p.is_file():  # the clusters file itself, not its folder: its header
        return rundir.read_clusters(p.parent)    # row is not a label
    if not p.exists():
        raise InputError(f"{p}: no such file or directory")
    from ..io.corpus import read_label_lines
    return read_label_lines(p)
