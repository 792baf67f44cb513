"""The other runs' artifacts: an embedding (``embeddings.npy``, ``ids.tsv``), a clustering
(``clusters.tsv``, ``outliers.tsv``, ``map.json``, ``clustering.json``) and an evaluation (``eval.json``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._internal.atomic import save_json
from .layout import CLUSTERING, CLUSTERS, EMBEDDINGS, EMBED_IDS, EVAL, MAP, OUTLIERS, SIGNATURE


def write_embedding(out_dir: str | os.PathLike, vectors: np.ndarray, ids, sig: dict) -> Path:
    """An embed run: ``embeddings.npy`` (one row per kept line), ``ids.tsv`` (``file<TAB>line``)
    and ``signature.json`` last."""
    from .._internal.atomic import save_npy
    from ..io.corpus import write_lines
    out = Path(out_dir)
    (out / SIGNATURE).unlink(missing_ok=True)
    save_npy(out / EMBEDDINGS, vectors)
    write_lines(out / EMBED_IDS, (f"{f}\t{n}" for f, n in ids))
    save_json(out / SIGNATURE, sig)
    return out / EMBEDDINGS


def write_clustering(out_dir: str | os.PathLike, result: dict, ids, labels, outliers: list | None,
                     sentence_map: dict) -> Path:
    """A cluster run: ``clusters.tsv`` (the cluster of every line), ``outliers.tsv``, ``map.json``
    (the report's sentence map) and ``clustering.json`` last."""
    from ..io.corpus import write_lines
    out = Path(out_dir)
    (out / CLUSTERING).unlink(missing_ok=True)
    write_lines(out / CLUSTERS, ["file\tline\tcluster"] + [f"{f}\t{line}\t{int(c)}" for (f, line), c in zip(ids, labels)])
    result["assignments"] = {**result.get("assignments", {}), "file": CLUSTERS}
    if outliers is not None:
        # the columns of 0.11.0 first, in their places; then the margin (the rows are ranked by it) and the cluster
        write_lines(out / OUTLIERS, ["gold\tcluster_domain\tlength\ttext\tmargin\tcluster"] +
                    [f"{o['gold']}\t{o['cluster_domain']}\t{o['length']}\t{o['text']}\t{o.get('margin', '')}\t"
                     f"{o['cluster']}" for o in outliers])
    save_json(out / MAP, sentence_map)
    save_json(out / CLUSTERING, result)
    return out / CLUSTERING


def read_clusters(run_dir: str | os.PathLike) -> list[str]:
    """The cluster id of every line of a ``domainsift cluster`` run (its ``clusters.tsv``), in order."""
    from ..io.corpus import iter_raw_lines
    from .._internal.errors import InputError
    tsv = Path(run_dir) / CLUSTERS
    if not tsv.exists():
        raise InputError(f"{run_dir}: no {CLUSTERS} (is this a `domainsift cluster` output directory "
                         f"of version 0.4.0 or later?)")
    labels, header = [], None
    for n, line in iter_raw_lines(tsv):
        fields = line.split("\t")
        if header is None:
            header = fields
            if header[-1:] != ["cluster"]:
                raise InputError(f"{tsv}:1: expected a header ending in 'cluster', got {header}")
            continue
        if len(fields) != len(header) or not fields[-1].lstrip("-").isdigit():
            raise InputError(f"{tsv}:{n}: expected {len(header)} tab-separated fields ending in a cluster id")
        labels.append(fields[-1])
    return labels


def write_eval(run_dir: str | os.PathLike, result: dict) -> None:
    save_json(Path(run_dir) / EVAL, result)
