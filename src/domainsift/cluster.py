"""Unsupervised domain clustering: optional PCA, then a GMM (or k-means).

Following paper 000 (section 2): a Gaussian mixture with full covariance and at
most 150 EM iterations over (optionally PCA-reduced) sentence vectors, for
several numbers of clusters ``k`` and seeds. With gold labels, a clustering is
scored by purity: each cluster is assigned its majority gold label, and purity
is the share of sentences whose gold label is their cluster's.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ._internal.errors import DomainsiftError

log = logging.getLogger(__name__)


def reduce(x: np.ndarray, pca: int | None, seed: int = 0):
    """PCA to ``pca`` dims (None or 0: no reduction). Returns (x_reduced, fitted PCA or None)."""
    if not pca:
        return x, None
    from sklearn.decomposition import PCA
    n_comp = min(pca, x.shape[0], x.shape[1])
    model = PCA(n_components=n_comp, random_state=seed)
    return model.fit_transform(x), model


def fit_clusters(x: np.ndarray, k: int, seed: int = 0, algorithm: str = "gmm",
                 max_iter: int = 150, n_init: int = 3):
    """Cluster ``x`` (n, dim) into ``k`` groups. Returns (labels (n,), fitted model).

    ``n_init`` EM (or k-means) restarts per seed; the best likelihood wins.
    """
    if k < 1 or k > len(x):
        raise DomainsiftError(f"k={k} must be between 1 and the number of sentences ({len(x)})")
    if algorithm == "gmm":
        from sklearn.mixture import GaussianMixture
        model = GaussianMixture(n_components=k, covariance_type="full", max_iter=max_iter,
                                random_state=seed, n_init=n_init)
    elif algorithm == "kmeans":
        from sklearn.cluster import KMeans
        model = KMeans(n_clusters=k, random_state=seed, n_init=n_init, max_iter=max(max_iter, 300))
    else:
        raise DomainsiftError(f"unknown clustering algorithm '{algorithm}' (gmm or kmeans)")
    labels = model.fit_predict(x.astype(np.float64))
    return labels, model


def confusion(gold: Sequence, clusters: Sequence[int]):
    """Counts of (gold label, cluster). Returns (matrix (n_gold, n_clusters), gold names, cluster ids)."""
    gold = np.asarray(gold)
    clusters = np.asarray(clusters)
    names = sorted(set(gold.tolist()))
    ids = sorted(set(clusters.tolist()))
    gi = {g: i for i, g in enumerate(names)}
    ci = {c: i for i, c in enumerate(ids)}
    mat = np.zeros((len(names), len(ids)), dtype=np.int64)
    for g, c in zip(gold.tolist(), clusters.tolist()):
        mat[gi[g], ci[c]] += 1
    return mat, names, ids


def purity(gold: Sequence, clusters: Sequence[int]) -> float:
    """Share of sentences whose gold label is the majority label of their cluster."""
    if len(gold) != len(clusters):
        raise ValueError("gold and clusters differ in length")
    if len(gold) == 0:
        raise ValueError("purity of an empty clustering")
    mat, _, _ = confusion(gold, clusters)
    return float(mat.max(axis=0).sum() / mat.sum())


def cluster_majority(gold: Sequence, clusters: Sequence[int]) -> dict:
    """Map each cluster id to its majority gold label (ties: the first label in sorted order)."""
    mat, names, ids = confusion(gold, clusters)
    return {c: names[int(mat[:, j].argmax())] for j, c in enumerate(ids)}


def outliers(texts: Sequence[str], gold: Sequence, clusters: Sequence[int],
             affinity: np.ndarray | None = None) -> list[dict]:
    """Sentences placed in a cluster whose majority is another domain (paper 000, Table 2), the surest
    first: ranked by their ``margin`` (see :func:`margins`; without ``affinity``, in input order)."""
    major = cluster_majority(gold, clusters)
    margin = margins(affinity, clusters, gold, major) if affinity is not None else None
    rows = []
    for i, (t, g, c) in enumerate(zip(texts, gold, clusters)):
        if major[c] != g:
            rows.append({"index": i, "text": t, "gold": g, "cluster": int(c), "cluster_domain": major[c],
                         "length": len(t.split()),
                         **({"margin": round(float(margin[i]), 4)} if margin is not None else {})})
    if margin is not None:
        rows.sort(key=lambda r: (-r["margin"], r["index"]))
    return rows


def margins(affinity: np.ndarray, clusters: Sequence[int], gold: Sequence, major: dict) -> np.ndarray:
    """How surely each sentence sits in its cluster rather than in one of its own domain's: its
    affinity (a GMM's posterior probability) to its cluster minus the largest to a cluster whose
    majority is its gold domain (0 when no cluster's majority is). In [-1, 1]; an outlier's is >= 0."""
    affinity = np.asarray(affinity, dtype=np.float64)
    clusters = np.asarray(clusters)
    n, k = affinity.shape
    own = affinity[np.arange(n), clusters]
    out = np.empty(n)
    by_domain: dict = {}
    for c, d in major.items():
        by_domain.setdefault(d, []).append(int(c))
    for i, g in enumerate(gold):
        cols = by_domain.get(g, [])
        out[i] = own[i] - (affinity[i, cols].max() if cols else 0.0)
    return out


def affinities(model, x: np.ndarray) -> np.ndarray:
    """Each sentence's affinity to each cluster, (n, k) in [0, 1]: a GMM's posterior probabilities; for
    k-means, a softmax of negative squared distances scaled by the mean squared distance to the nearest
    centre (k-means has no posterior of its own)."""
    x = np.asarray(x, dtype=np.float64)
    if hasattr(model, "predict_proba"):
        return model.predict_proba(x)
    d2 = model.transform(x) ** 2
    scale = max(float(d2.min(axis=1).mean()), 1e-12)
    z = -(d2 - d2.min(axis=1, keepdims=True)) / scale
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@dataclass
class ClusteringResult:
    """All runs of a grid. ``runs``: one dict per (k, pca, seed) with its purity."""

    runs: list[dict] = field(default_factory=list)
    confusions: list[dict] = field(default_factory=list)
    labels: dict = field(default_factory=dict)  # (k, pca, seed) -> cluster labels
    affinity: dict = field(default_factory=dict)  # the first (k, pca, seed) -> (n, k) affinities
    reduced: dict = field(default_factory=dict)  # pca -> the vectors the clusterings were fitted on
    models: dict = field(default_factory=dict)  # (k, pca, first seed) -> the fitted model (the maps' runs)

    def summary(self) -> list[dict]:
        """Purity mean ± std over seeds for every (k, pca)."""
        groups: dict = {}
        for r in self.runs:
            groups.setdefault((r["k"], r["pca"]), []).append(r["purity"])
        return [{"k": k, "pca": p, "purity_mean": float(np.mean(v)), "purity_std": float(np.std(v)),
                 "n_seeds": len(v)} for (k, p), v in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0))]


def cluster_grid(x: np.ndarray, gold: Sequence | None, ks: Sequence[int] = (5,),
                 pcas: Sequence[int | None] = (50,), seeds: Sequence[int] = (0,),
                 algorithm: str = "gmm", n_init: int = 3, progress: bool = False) -> ClusteringResult:
    """Cluster ``x`` (n, dim) for every k × PCA setting × seed; score against ``gold`` if given."""
    from tqdm.auto import tqdm
    res = ClusteringResult()
    grid = [(p, k, s) for p in pcas for k in ks for s in seeds]
    reduced: dict = {}
    for p, k, s in tqdm(grid, desc="cluster", disable=not progress, leave=False):
        p = p or None
        if p not in reduced:
            reduced[p] = reduce(x, p, seed=0)[0]
        labels, model = fit_clusters(reduced[p], k, seed=s, algorithm=algorithm, n_init=n_init)
        if not res.affinity:  # the first run's: ranks its outliers
            res.affinity[(int(k), p, int(s))] = affinities(model, reduced[p])
        if int(s) == int(list(seeds)[0]):  # the runs the maps draw
            res.models[(int(k), p, int(s))] = model
        run = {"k": int(k), "pca": p, "seed": int(s), "algorithm": algorithm, "n_init": n_init}
        if gold is not None:
            run["purity"] = purity(gold, labels)
            mat, names, ids = confusion(gold, labels)
            res.confusions.append({"k": int(k), "pca": p, "seed": int(s), "domains": names,
                                   "clusters": [int(c) for c in ids], "matrix": mat.tolist()})
        res.runs.append(run)
        res.labels[(int(k), p, int(s))] = labels
    res.reduced = reduced
    return res


def projection(z: np.ndarray, model=None) -> tuple[np.ndarray, list[dict] | None]:
    """The 2-D map of the vectors ``z`` a clustering was fitted on (PCA to 2 components, seeded) and,
    for a Gaussian mixture, each component's 2-sigma ellipse as paper 000 draws it (section 2.5): its
    mean and full covariance projected through the same PCA (``{cluster, x, y, width, height, angle}``,
    angle in radians); None for a model without covariances (k-means)."""
    from sklearn.decomposition import PCA
    z = np.asarray(z, dtype=np.float64)
    if z.shape[1] < 2 or len(z) < 2:
        return np.zeros((len(z), 2)), None
    pca = PCA(n_components=2, random_state=0).fit(z)
    xy = pca.transform(z)
    cov = getattr(model, "covariances_", None)
    if cov is None or getattr(model, "covariance_type", None) != "full":
        return xy, None
    c = pca.components_  # (2, dim): the projection is linear, so a Gaussian stays one
    return xy, [{"cluster": j, **ellipse((mu - pca.mean_) @ c.T, c @ sigma @ c.T)}
                for j, (mu, sigma) in enumerate(zip(model.means_, cov))]


def ellipse(mean, cov) -> dict:
    """The 2-sigma ellipse of a 2-D Gaussian: centre, width and height (four standard deviations along
    each axis) and angle in radians."""
    vals, vecs = np.linalg.eigh(np.asarray(cov, dtype=np.float64))
    vals = np.clip(vals, 0.0, None)
    return {"x": float(mean[0]), "y": float(mean[1]), "width": float(4 * np.sqrt(vals[1])),
            "height": float(4 * np.sqrt(vals[0])), "angle": float(np.arctan2(vecs[1, 1], vecs[0, 1]))}


def points_ellipse(pts: np.ndarray) -> dict | None:
    """The 2-sigma ellipse of the points' own Gaussian (a clustering without covariances: k-means)."""
    pts = np.asarray(pts, dtype=np.float64)
    return ellipse(pts.mean(0), np.cov(pts.T)) if len(pts) >= 3 else None


def outlier_summary(texts: Sequence[str], gold: Sequence, clusters: Sequence[int]) -> dict:
    """Paper 000's outlier statistics (section 2.6): how many sentences sit in a cluster whose majority
    is another domain, their mean length in words against the rest's, and the share of each that holds
    a digit."""
    major = cluster_majority(gold, clusters)
    out = np.array([major[c] != g for g, c in zip(gold, clusters)], dtype=bool)
    words = np.array([len(t.split()) for t in texts], dtype=np.float64)
    digits = np.array([any(ch.isdigit() for ch in t) for t in texts], dtype=bool)

    def mean(a, m):
        return round(float(a[m].mean()), 4) if m.any() else None

    return {"count": int(out.sum()), "of": int(len(out)),
            "mean_words_outliers": mean(words, out), "mean_words_rest": mean(words, ~out),
            "share_with_digits_outliers": mean(digits.astype(float), out),
            "share_with_digits_rest": mean(digits.astype(float), ~out)}
