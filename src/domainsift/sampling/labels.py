"""Domain labels for the sampler: gold labels from a file, or the clusters that
``domainsift cluster`` found (paper 004's unsupervised setting)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError


def read_domains(path: str | os.PathLike) -> list[str]:
    """One domain label per example, in the order of the examples.

    ``path`` is a ``domainsift cluster`` output directory (its ``clusters.tsv``: the
    cluster of every input line, for the first k, PCA and seed) or a text file with
    one label per line."""
    p = Path(path)
    if p.is_dir():
        tsv = p / "clusters.tsv"
        if not tsv.exists():
            raise InputError(f"{p}: no clusters.tsv (is this a `domainsift cluster` output directory "
                             f"of version 0.4.0 or later?)")
        labels = []
        with open(tsv, encoding="utf-8") as fh:
            header = fh.readline().rstrip("\n").split("\t")
            if header[-1:] != ["cluster"]:
                raise InputError(f"{tsv}:1: expected a header ending in 'cluster', got {header}")
            for n, line in enumerate(fh, 2):
                fields = line.rstrip("\n").split("\t")
                if len(fields) != len(header) or not fields[-1].lstrip("-").isdigit():
                    raise InputError(f"{tsv}:{n}: expected {len(header)} tab-separated fields ending in a cluster id")
                labels.append(fields[-1])
        return labels
    if not p.exists():
        raise InputError(f"{p}: no such file or directory")
    labels = []
    with open(p, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            label = line.strip()
            if not label:
                raise InputError(f"{p}:{n}: empty domain label")
            labels.append(label)
    return labels
