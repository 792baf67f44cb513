"""PNG plots of a clustering (paper 000, Figures 1-3) and of a correlation scatter."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from .._internal.atomic import atomic_path


def _plt():
    from .._internal.optional import require
    require("matplotlib", "plots").use("Agg")
    return require("matplotlib.pyplot", "plots", "matplotlib")


def _save(fig, path) -> str:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return str(path)


def _draw(ax, e: dict | None, color) -> None:
    from matplotlib.patches import Ellipse
    if e:
        ax.add_patch(Ellipse((e["x"], e["y"]), e["width"], e["height"], angle=float(np.degrees(e["angle"])),
                             fill=False, lw=1.5, color=color))


def pca_map(x: np.ndarray, gold: Sequence | None, clusters: Sequence[int], path: str | Path,
            title: str = "", model=None) -> str:
    """2-D PCA map of the vectors the clustering was fitted on, coloured by gold domain (left) and by
    cluster (right) with each cluster's 2-sigma ellipse: the GMM's own (``model``'s mean and covariance
    projected through the same PCA, as paper 000 draws them), or the points' for k-means."""
    plt = _plt()
    from ..cluster import points_ellipse, projection
    xy, gaussians = projection(x, model)
    clusters = np.asarray(clusters)
    ncols = 2 if gold is not None else 1
    fig, axes = plt.subplots(1, ncols, figsize=(6.5 * ncols, 5.5), squeeze=False)
    n_groups = max(len(set(clusters.tolist())), len(set(gold)) if gold is not None else 0)
    cmap = plt.get_cmap("tab10" if n_groups <= 10 else "tab20")
    if gold is not None:
        ax = axes[0, 0]
        gold = np.asarray(gold)
        for i, g in enumerate(sorted(set(gold.tolist()))):
            m = gold == g
            ax.scatter(xy[m, 0], xy[m, 1], s=4, alpha=0.6, color=cmap(i % 20), label=str(g))
        ax.legend(markerscale=3, fontsize=8, loc="best")
        ax.set_title("by gold domain")
    ax = axes[0, -1]
    major = None
    if gold is not None:  # a cluster takes the colour of its majority domain on the left panel
        from ..cluster import cluster_majority
        major, names = cluster_majority(gold, clusters), sorted(set(gold.tolist()))
    for i, c in enumerate(sorted(set(clusters.tolist()))):
        m = clusters == c
        colour = cmap((names.index(major[c]) if major else i) % 20)
        ax.scatter(xy[m, 0], xy[m, 1], s=4, alpha=0.6, color=colour,
                   label=f"cluster {c}" + (f" ({major[c]})" if major else ""))
        _draw(ax, gaussians[int(c)] if gaussians else points_ellipse(xy[m]), colour)
    what = "the GMM's 2-sigma ellipses" if gaussians else "2-sigma ellipses of the points"
    ax.set_title(f"by cluster, coloured by its majority domain ({what})" if major else f"by cluster ({what})")
    if len(set(clusters.tolist())) <= 15:
        ax.legend(markerscale=3, fontsize=7, loc="best")
    if title:
        fig.suptitle(title)
    return _save(fig, path)


def confusion_plot(matrix, domains: Sequence[str], clusters: Sequence[int], path: str | Path,
                   title: str = "") -> str:
    """Heatmap of gold domain × cluster counts (paper 000, Figure 3)."""
    plt = _plt()
    m = np.asarray(matrix)
    fig, ax = plt.subplots(figsize=(1.0 + 0.55 * m.shape[1], 1.2 + 0.5 * m.shape[0]))
    im = ax.imshow(m, cmap="Blues", aspect="auto")
    ax.set_xticks(range(len(clusters)), [str(c) for c in clusters])
    ax.set_yticks(range(len(domains)), [str(d) for d in domains])
    ax.set_xlabel("cluster")
    ax.set_ylabel("gold domain")
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j]:
                ax.text(j, i, str(m[i, j]), ha="center", va="center", fontsize=7,
                        color="white" if m[i, j] > m.max() / 2 else "black")
    fig.colorbar(im, ax=ax, fraction=0.04)
    if title:
        ax.set_title(title)
    return _save(fig, path)


def scatter_plot(xs, ys, labels: Sequence[str], path: str | Path, xlabel: str, ylabel: str,
                 title: str = "") -> str:
    """A labelled scatter plot with a least-squares line."""
    plt = _plt()
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.scatter(xs, ys, s=18)
    for x, y, lab in zip(xs, ys, labels):
        ax.annotate(lab, (x, y), fontsize=6, alpha=0.7)
    if len(xs) > 1 and np.ptp(xs) > 0:
        a, b = np.polyfit(xs, ys, 1)
        grid = np.linspace(xs.min(), xs.max(), 10)
        ax.plot(grid, a * grid + b, lw=1, color="gray")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return _save(fig, path)


def weight_steps(record: dict) -> tuple[list[int], list[list[float]]]:
    """The history as step series: the batches at which weights took effect, closed by the last
    batch drawn (so the final weights show their span), and each domain's weights at them."""
    hist = record["history"]
    xs = [h["batch"] for h in hist]
    xs.append(max(record.get("position", 0), xs[-1]))
    series = []
    for d in range(len(record["domains"])):
        ys = [h["weights"][d] for h in hist]
        series.append(ys + ys[-1:])
    return xs, series
