"""Which layer of the default encoder tells the selection pool's domains apart, frozen?

A linear probe in the selection setting (../shared/docs/BENCHMARKS.md, "selection"):
for each of the five classic targets, a logistic regression (C = 10, balanced
classes) on the 500 in-domain lines (<D>.test.en) against negatives drawn from
the bottom two thirds of the Domain-Cosine ranking (10 draws of 500, pooled,
as Domain-Finetune's 10 epochs draw them), on the frozen mean-pooled, L2-normalised
vectors of one layer; precision of the top N = 5,000 of the 35,000-line pool.
Two seeds (the negatives drawn). "last" is the encoder's own sentence vector.
Not a selection method shipped as such: it asks where the domain signal sits
before fine-tuning (bench/finetune_variants.py (removed; in git history) asks whether fine-tuning keeps it).

    python bench/archive/layer_probe.py [--layers 0 2 3 last]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import sys  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))  # the shared helpers: bench/live/_common.py
from _common import CLASSIC, SEVEN, data_file, write_results

N = 5000
SEEDS = (0, 1)


def main() -> None:
    from sklearn.linear_model import LogisticRegression

    from domainsift.io.corpus import read_corpus
    from domainsift.embed import get_embedder
    from domainsift.embed.cache import default_cache_dir

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", nargs="+", default=["0", "2", "3", "last"])
    args = ap.parse_args()

    pool = read_corpus([data_file(d, "train") for d in SEVEN])
    labels = np.array([SEVEN.index(Path(f).name.split(".")[0]) for f, _ in pool.ids])
    cache = default_cache_dir()
    last = get_embedder("minilm", cache_dir=cache, progress=False)

    def unit(a):
        return a / np.linalg.norm(a, axis=1, keepdims=True)

    X_last = unit(last.encode(pool.texts))
    ind = {t: read_corpus([data_file(t, "test")]).texts for t in CLASSIC}
    m = len(X_last)
    rows = []
    for layer in args.layers:
        emb = last if layer == "last" else get_embedder("minilm", layer=int(layer), cache_dir=cache,
                                                        progress=False, normalize=False)
        X = X_last if layer == "last" else unit(emb.encode(pool.texts))
        per_target = {}
        for t in CLASSIC:
            P_last = unit(last.encode(ind[t]))
            P = P_last if layer == "last" else unit(emb.encode(ind[t]))
            cos = X_last @ P_last.mean(0)  # the pre-ranking is Domain-Cosine's, whatever the layer probed
            bottom = np.lexsort((np.arange(m), -cos))[m // 3:]
            precs = []
            for seed in SEEDS:
                rng = np.random.default_rng(seed)
                negs = np.unique(np.concatenate([rng.choice(bottom, size=len(P), replace=False)
                                                 for _ in range(10)]))
                clf = LogisticRegression(C=10, max_iter=5000, class_weight="balanced")
                clf.fit(np.vstack([P, X[negs]]), np.r_[np.ones(len(P)), np.zeros(len(negs))])
                top = np.argsort(-clf.decision_function(X), kind="stable")[:N]
                precs.append(float((labels[top] == SEVEN.index(t)).mean()))
            per_target[t] = round(float(np.mean(precs)), 4)
        mean = round(float(np.mean(list(per_target.values()))), 4)
        rows.append({"layer": layer, **per_target, "mean": mean})
        print(rows[-1], flush=True)
    md = ["# Frozen layers of all-MiniLM-L6-v2 as a domain probe on the selection pool", "",
          "Logistic regression (C = 10, balanced) on the 500 in-domain lines against negatives from the bottom "
          "two thirds of the Domain-Cosine ranking (10 draws of 500, pooled), on one layer's frozen mean-pooled "
          f"L2-normalised vectors; precision of the top {N} of 35,000; mean over seeds {', '.join(map(str, SEEDS))}. "
          "Layer 0 is the embedding layer; 'last' is the encoder's sentence vector (layer 6).", "",
          "| layer | " + " | ".join(CLASSIC) + " | mean |", "|" + "---|" * (len(CLASSIC) + 2)]
    md += [f"| {r['layer']} | " + " | ".join(f"{r[t]:.3f}" for t in CLASSIC) + f" | {r['mean']:.4f} |" for r in rows]
    write_results("layer_probe", {"N": N, "seeds": list(SEEDS), "rows": rows}, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
