"""Does the selection help? A cheap downstream check on held-out in-domain text.

For each selection (and each reference corpus) an n-gram language model is
trained on the selected sentences (VariKN, Kneser–Ney, the same library as
``moore-lewis``) and measured by perplexity and OOV rate on a held-out
in-domain test file: lower perplexity means the data fits the target better.
This is Moore & Lewis's own criterion and far cheaper than training MT.

:func:`cross_domain` gives the analog of paper 000's Table 4 (each domain's LM
on each domain's test) and Figure 4 (its link to the cosine similarity of the
domains' encoder centroids).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import rundir
from ..io.corpus import read_corpus
from .._internal.errors import DomainsiftError
from ..lm import NgramLM


def selection_texts(run_dir: str | os.PathLike) -> list[str]:
    """The selected sentences of a run directory (the scored side), in pool order, read from pool
    files verified to be the ones that were scored."""
    return [text for text, _ in rundir.selection_records(run_dir)]


def run_names(run_dirs: Sequence[str]) -> list[str]:
    """A run's name is its method; its directory name when two runs share a method."""
    methods = [rundir.read_signature(d)["method"] for d in run_dirs]
    return [m if methods.count(m) == 1 else Path(d).name for m, d in zip(methods, run_dirs)]


def parse_named(items: Sequence[str], option: str) -> list[tuple[str, str]]:
    out = []
    for it in items or []:
        if "=" not in it:
            raise DomainsiftError(f"{option} expects NAME=FILE, got '{it}'")
        name, path = it.split("=", 1)
        out.append((name, path))
    return out


def lm_row(name: str, train_texts: Sequence[str], test_texts: Sequence[str], order: int) -> dict:
    lm = NgramLM(order=order).fit(train_texts)
    r = lm.perplexity(test_texts)
    return {"name": name, "perplexity": r["perplexity"], "oov_rate": r["oov_rate"],
            "n_sentences": len(train_texts), "n_test_tokens": r["n_tokens"]}


def run_downstream(run_dirs: Sequence[str], test_file: str, references: Sequence[tuple[str, str]] = (),
                   order: int = 4, out_dir: str | os.PathLike | None = None) -> dict:
    """Perplexity of an LM trained on each selection and reference, on ``test_file``."""
    test = read_corpus(test_file).texts
    rows = []
    for name, d in zip(run_names(run_dirs), run_dirs):
        texts = selection_texts(d)
        if not texts:
            raise DomainsiftError(f"{d}: the selection is empty")
        rows.append({**lm_row(name, texts, test, order), "run_dir": str(d)})
    for name, path in references:
        rows.append({**lm_row(name, read_corpus(path).texts, test, order), "file": str(path)})
    from .._internal.signature import make_signature
    result = {"test": str(test_file), "order": order, "rows": rows,
              "signature": make_signature("downstream", model="n-gram (VariKN)", order=order)}
    if out_dir:
        rundir.write_json(out_dir, rundir.DOWNSTREAM, result)
    return result


def format_rows(rows: Sequence[dict]) -> str:
    w = max(len(r["name"]) for r in rows)
    lines = [f"{'name':<{w}}  perplexity  OOV rate  sentences", f"{'-' * w}  ----------  --------  ---------"]
    for r in rows:
        lines.append(f"{r['name']:<{w}}  {r['perplexity']:>10.1f}  {r['oov_rate']:>8.3f}  {r['n_sentences']:>9}")
    return "\n".join(lines)


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    from scipy.stats import pearsonr
    return float(pearsonr(np.asarray(x, float), np.asarray(y, float))[0])


def cross_domain(train: Sequence[tuple[str, str]], test: Sequence[tuple[str, str]], order: int = 4,
                 embedder=None, max_centroid: int = 2000, out_dir: str | os.PathLike | None = None,
                 plot: bool = True) -> dict:
    """The matrix of perplexities of each domain's LM (rows) on each domain's test (columns),
    the cosine similarity of the domains' train centroids, and their Pearson correlation.

    The correlation is taken over the off-diagonal pairs, between centroid similarity
    and log perplexity (similar domains should give lower perplexity: a negative r).
    """
    train, test = dict(train), dict(test)
    domains = list(train)
    if set(domains) != set(test):
        raise DomainsiftError(f"--train and --test name different domains: {sorted(train)} vs {sorted(test)}")
    if len(domains) < 2:
        raise DomainsiftError("a cross-domain matrix needs at least two domains")
    train_texts = {d: read_corpus(train[d]).texts for d in domains}
    test_texts = {d: read_corpus(test[d]).texts for d in domains}
    ppl = np.zeros((len(domains), len(domains)))
    for i, a in enumerate(domains):
        lm = NgramLM(order=order).fit(train_texts[a])
        for j, b in enumerate(domains):
            ppl[i, j] = lm.perplexity(test_texts[b])["perplexity"]
    sim = None
    r = None
    if embedder is not None:
        cents = []
        for d in domains:
            v = np.asarray(embedder.encode(train_texts[d][:max_centroid]), dtype=np.float64)
            v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
            c = v.mean(0)
            cents.append(c / np.linalg.norm(c))
        cents = np.array(cents)
        sim = cents @ cents.T
        off = ~np.eye(len(domains), dtype=bool)
        r = pearson(sim[off], np.log(ppl[off]))
    result = {"domains": domains, "order": order, "perplexity": ppl.tolist(),
              "centroid_similarity": sim.tolist() if sim is not None else None,
              "pearson_similarity_vs_log_perplexity": r,
              "model": getattr(embedder, "name", None)}
    if out_dir:
        out = Path(out_dir)
        if plot and sim is not None:
            from ..report.plots import scatter_plot
            off = ~np.eye(len(domains), dtype=bool)
            labels = [f"{domains[i]}→{domains[j]}" for i in range(len(domains)) for j in range(len(domains)) if i != j]
            result["plot"] = scatter_plot(sim[off], np.log(ppl[off]), labels, rundir.path(out, rundir.CROSSDOMAIN_PNG),
                                          "centroid cosine similarity (train LM domain, test domain)",
                                          "log perplexity", title=f"Pearson r = {r:.2f}")
        rundir.write_json(out, rundir.CROSSDOMAIN, result)
    return result


def format_matrix(result: dict) -> str:
    doms = result["domains"]
    w = max(8, max(len(d) for d in doms))
    lines = ["LM trained on (rows), perplexity on test of (columns):",
             " " * w + "".join(f"{d[:10]:>12}" for d in doms)]
    for d, row in zip(doms, result["perplexity"]):
        lines.append(f"{d:<{w}}" + "".join(f"{v:>12.1f}" for v in row))
    if result["pearson_similarity_vs_log_perplexity"] is not None:
        lines.append(f"Pearson r (centroid similarity vs log perplexity, off-diagonal): "
                     f"{result['pearson_similarity_vs_log_perplexity']:.3f}")
    return "\n".join(lines)
