"""The record of a sampler's weights over training (paper 004, Figure 2): a JSON
file (``sampling.json``) that the HTML report reads, and a picture."""

from __future__ import annotations

import os
from pathlib import Path

from .._internal.atomic import save_json


def history_record(sampler) -> dict:
    """The sampler's weight history with the domain names, sizes and signature; each entry also names
    its weights (``by_domain``)."""
    return {"signature": sampler.signature(), "domains": list(sampler.names),
            "sizes": [int(s) for s in sampler.sizes], "batch_size": sampler.batch_size,
            "position": int(sampler.position),
            "history": [{**h, "by_domain": dict(zip(map(str, sampler.names), h["weights"]))}
                        for h in sampler.history]}


def save_history(sampler, path: str | os.PathLike) -> Path:
    """Write :func:`history_record` as JSON (to a temporary name, then renamed)."""
    save_json(path, history_record(sampler))
    return Path(path)


def plot_weights(record: dict, path: str | os.PathLike, title: str | None = None) -> str:
    """One line per domain: its weight from the training batch at which it took effect."""
    from ..report.plots import _plt, _save, weight_steps
    plt = _plt()
    xs, series = weight_steps(record)
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, ys in zip(record["domains"], series):
        ax.step(xs, ys, where="post", label=name)
    ax.set_xlabel("training batch")
    ax.set_ylabel("sampling weight")
    ax.set_ylim(0, None)
    ax.set_title(title or record["signature"].get("signature", "domain weights"), fontsize=8)
    ax.legend(fontsize=7, ncol=2)
    return _save(fig, path)
