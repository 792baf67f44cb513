"""``domainsift cluster``: embed a corpus, cluster it for every k x PCA x seed, score the clusters against
gold domains, write the results (atomically, with a ``signature.json`` saying how they were made)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import rundir
from ..cluster import cluster_grid, cluster_majority, confusion, outlier_summary, outliers, projection
from ..io.corpus import Corpus
from ..embed import EmbedConfig
from .._internal.errors import DomainsiftError
from .._internal.safety import refuse_overwriting_inputs
from .._internal.signature import make_signature
from .embed import embed_corpus

log = logging.getLogger(__name__)


def cluster_files(files: Sequence[str | os.PathLike], out_dir: str | os.PathLike, labels: str | None = None,
                  gold: bool = True, max_per_file: int | None = None, distinct: bool = False,
                  reader: dict | None = None, **kw) -> dict:
    """``domainsift cluster``: read ``files`` (the first ``max_per_file`` lines of each, ``distinct`` ones),
    take each record's gold domain from ``labels`` (a file of one label per record) or from its file's
    name, and :func:`run_cluster` (``kw``: its options). The result adds ``n_sentences`` and ``n_gold``."""
    from ..io.corpus import file_labels, read_corpus, read_labels
    check_pcas(kw["grid"].pcas if "grid" in kw else ())  # before reading
    corpus = read_corpus(files, max_per_file=max_per_file, distinct=distinct, **(reader or {}))
    domains = read_labels(labels, len(corpus)) if labels else file_labels(corpus.ids, corpus.files)
    result = run_cluster(corpus, domains if gold else None, out_dir, **kw)
    result["n_sentences"] = len(corpus)
    result["n_gold"] = len(set(domains)) if gold else None
    return result


MAX_OUTLIERS = 500  # rows of outliers.tsv (the surest first); clustering.json counts them all


@dataclass(frozen=True)
class Grid:
    """The clusterings a run makes: every ``k`` x PCA dimension (``pcas``; 0 or None: none) x seed, with
    ``algorithm`` (``gmm`` or ``kmeans``) and ``n_init`` restarts (``cluster --k --pca --seeds
    --algorithm --n-init``)."""

    ks: Sequence[int] = (5,)
    pcas: Sequence[int | None] = (50,)
    seeds: Sequence[int] = (0, 1, 2, 3, 4)
    algorithm: str = "gmm"
    n_init: int = 3


def check_pcas(pcas: Sequence[int | None]) -> None:
    """PCA dimensions are >= 0 (0 or None: no PCA); otherwise a one-line error."""
    bad = [p for p in pcas if p is not None and p < 0]
    if bad:
        raise DomainsiftError(f"--pca takes dimensions >= 0 (0 = no PCA), got {min(bad)}")


def run_cluster(corpus: Corpus, gold: Sequence[str] | None, out_dir: str | os.PathLike, grid: Grid = Grid(),
                config: EmbedConfig = EmbedConfig(), plots: bool = True,
                vectors: np.ndarray | None = None, overwrite: bool = False, max_outliers: int = MAX_OUTLIERS) -> dict:
    """Embed, cluster for every k × PCA × seed of ``grid``, score against ``gold``, write results and plots.
    ``outliers.tsv`` holds the ``max_outliers`` surest outliers (by margin); ``clustering.json`` counts them all.

    Writes ``clustering.json`` (``runs``, ``summary``, ``confusions``, ``outliers``,
    ``assignments``, ``signature``), ``outliers.tsv``, ``clusters.tsv`` (the cluster of every
    sentence for the first k, PCA and seed: ``file``, ``line``, ``cluster``) and PNG plots for
    the first seed of each (k, PCA).
    """
    check_pcas(grid.pcas)
    grid = replace(grid, pcas=[None if not p else p for p in grid.pcas])
    too_big = [k for k in grid.ks if k > len(corpus)]
    if too_big:
        raise DomainsiftError(f"--k {too_big[0]} is more clusters than the {len(corpus)} sentences")
    if not grid.seeds:
        raise DomainsiftError("give at least one seed")
    out = Path(out_dir)
    refuse_overwriting_inputs(corpus.files, out, rundir.CLUSTER_OUTPUTS)
    with rundir.claim(out, "cluster", overwrite=overwrite):
        return _cluster_into(out, corpus, gold, grid, config, plots, vectors, max_outliers)


def cluster_table(gold, clusters) -> list[dict]:
    """Which cluster holds which domain: each cluster's size, majority domain and its share, and its
    count of every domain (the first run's; what ``cluster`` prints)."""
    mat, names, ids = confusion(gold, clusters)
    rows = []
    for j, c in enumerate(ids):
        col = mat[:, j]
        top = int(col.argmax())
        rows.append({"cluster": int(c), "size": int(col.sum()), "majority": names[top],
                     "share": round(float(col[top] / max(1, col.sum())), 4),
                     "counts": {names[i]: int(v) for i, v in enumerate(col) if v}})
    return rows


def format_cluster_table(rows: list[dict]) -> str:
    lines = ["cluster   size  majority domain (share)   other domains",
             "-------  -----  ------------------------  -------------"]
    for r in rows:
        others = ", ".join(f"{d} {n}" for d, n in sorted(r["counts"].items(), key=lambda kv: -kv[1])
                           if d != r["majority"])
        lines.append(f"{r['cluster']:>7}  {r['size']:>5}  {r['majority'] + ' (' + format(r['share'], '.2f') + ')':<24}"
                     f"  {others or '-'}")
    return "\n".join(lines)


def _cluster_into(out: Path, corpus, gold, grid: Grid, config, plots, vectors, max_outliers) -> dict:
    ks, pcas, seeds, algorithm, n_init = grid.ks, grid.pcas, grid.seeds, grid.algorithm, grid.n_init
    emb = None
    if vectors is None:
        vectors, emb = embed_corpus(corpus, config)
    res = cluster_grid(vectors, gold, ks=ks, pcas=pcas, seeds=seeds, algorithm=algorithm,
                       n_init=n_init, progress=config.progress)
    out.mkdir(parents=True, exist_ok=True)
    model_params = config.signature_params(emb) if emb is not None else {"model": config.embedder}
    sig = make_signature("cluster", seed=list(seeds)[0], inputs=[os.path.realpath(f) for f in corpus.files], n_sentences=len(corpus),
                         k=list(ks), pca=list(pcas), seeds=list(seeds), algorithm=algorithm,
                         n_init=n_init,
                         **model_params, **({"strip_id": True} if corpus.strip_id else {}))
    result = {"signature": sig, "n_sentences": len(corpus), "runs": res.runs,
              "summary": res.summary() if gold is not None else [], "confusions": res.confusions}
    # the first (k, PCA, seed): its labels go to clusters.tsv, the outliers and the sentence map
    k0, p0, s0 = int(ks[0]), (pcas[0] or None), int(seeds[0])
    first = res.labels[(k0, p0, s0)]
    result["assignments"] = {"k": k0, "pca": p0, "seed": s0}
    pictures = []
    outl = None
    if gold is not None:
        outl = outliers(corpus.texts, gold, first, res.affinity.get((k0, p0, s0)))
        result["outliers"] = {"k": k0, "pca": p0, "seed": s0, "count": len(outl), "written": min(len(outl), max_outliers),
                              "ranked_by": "margin", "summary": outlier_summary(corpus.texts, gold, first),
                              "examples": outl[:200]}
        outl = outl[:max_outliers]
        result["clusters_by_domain"] = cluster_table(gold, first)
    if plots:
        from ..report.plots import confusion_plot, pca_map
        seed0 = seeds[0]
        for p in pcas:
            for k in ks:
                labels = res.labels[(int(k), p or None, int(seed0))]
                tag = f"k{k}_pca{p or 'none'}"
                pictures.append(pca_map(res.reduced[p or None], gold, labels, out / f"map_{tag}.png",
                                        title=f"{model_params['model']}: k={k}, PCA={p or 'none'}",
                                        model=res.models.get((int(k), p or None, int(seed0)))))
                if gold is not None:
                    conf = next(c for c in res.confusions if c["k"] == k and c["pca"] == (p or None)
                                and c["seed"] == seed0)
                    pictures.append(confusion_plot(conf["matrix"], conf["domains"], conf["clusters"],
                                                   out / f"confusion_{tag}.png",
                                                   title=f"k={k}, PCA={p or 'none'}, seed {seed0}"))
    result["pictures"] = pictures
    rundir.write_clustering(out, result, corpus.ids, first, outl,
                            sentence_map(res.reduced[p0], corpus.texts, gold, first, model=res.models.get((k0, p0, s0))))
    return result


MAP_POINTS = 3000


def sentence_map(vectors: np.ndarray, texts, gold, clusters, max_points: int = MAP_POINTS, seed: int = 0,
                 model=None) -> dict:
    """A 2-D PCA map of (a seeded sample of at most ``max_points``) sentences, for the HTML report:
    coordinates, text, gold domain and cluster of each point, from the vectors the clustering was
    fitted on; with a GMM ``model``, each component's 2-sigma ellipse projected through the same PCA
    (:func:`domainsift.cluster.projection`)."""
    n = len(texts)
    keep = np.arange(n) if n <= max_points else np.sort(
        np.random.default_rng(seed).choice(n, max_points, replace=False))
    xy, gaussians = projection(vectors, model)
    xy = xy[keep]
    return {"n_total": n, "n_shown": int(len(keep)), "seed": seed, "projection": "PCA, 2 components",
            **({"ellipses": [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in e.items()}
                             for e in gaussians], "ellipses_from": "the GMM's means and covariances"}
               if gaussians else {}),
            "x": np.round(xy[:, 0], 4).tolist(), "y": np.round(xy[:, 1], 4).tolist(),
            "text": [texts[i][:300] for i in keep], "gold": [str(gold[i]) for i in keep] if gold is not None else None,
            "cluster": [int(clusters[i]) for i in keep],
            # each cluster's majority domain over every sentence (not the sample): the map's cluster colours
            "cluster_majority": ({str(c): str(d) for c, d in cluster_majority(gold, clusters).items()}
                                 if gold is not None else None)}


def format_summary_table(summary: list[dict]) -> str:
    lines = ["   k    PCA   purity (mean ± std over seeds)", "----  -----  ------------------------------"]
    for r in summary:
        lines.append(f"{r['k']:>4}  {str(r['pca'] or 'none'):>5}  {r['purity_mean']:.3f} ± {r['purity_std']:.3f}"
                     f"  (n={r['n_seeds']})")
    return "\n".join(lines)
