"""How far can the default encoder's frozen vectors separate the domains of the selection pool?

A reference ceiling for the selection benchmark, not a selection method: a
logistic regression is trained on the *gold* labels of the 35,000-line pool
(target domain vs. the rest), with 5-fold stratified cross-validation so every
line is scored by a model that did not see it; the top N = 5,000 lines by that
out-of-fold probability are compared with the gold domain. A PU selector sees
only 500 in-domain lines and no labels, so this supervised linear probe on the
same vectors bounds what a linear classifier on frozen vectors can reach.

    python bench/archive/selection_ceiling.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import sys  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))  # the shared helpers: bench/live/_common.py
from _common import CLASSIC, SEVEN, data_file, write_results

N = 5000


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    from domainsift.io.corpus import read_corpus
    from domainsift.embed import get_embedder
    from domainsift.embed.cache import default_cache_dir

    pool = read_corpus([data_file(d, "train") for d in SEVEN])
    labels = np.array([SEVEN.index(Path(f).name.split(".")[0]) for f, _ in pool.ids])  # <D>.train.en
    vectors = get_embedder("minilm", cache_dir=default_cache_dir()).encode(pool.texts)
    rows = []
    for target in CLASSIC:
        y = (labels == SEVEN.index(target)).astype(int)
        cv = StratifiedKFold(5, shuffle=True, random_state=0)
        p = cross_val_predict(LogisticRegression(C=10, max_iter=2000), vectors, y, cv=cv,
                              method="predict_proba")[:, 1]
        top = np.argsort(-p, kind="stable")[:N]
        rows.append({"target": target, "precision": round(float(y[top].mean()), 4)})
        print(rows[-1], flush=True)
    mean = float(np.mean([r["precision"] for r in rows]))
    md = ["# Supervised ceiling of frozen all-MiniLM-L6-v2 vectors on the selection pool", "",
          "Logistic regression (C = 10) on the gold labels of the 35,000-line pool, target vs. rest, "
          "5-fold stratified cross-validation (seed 0); precision of the top 5,000 by out-of-fold "
          "probability. Not a selection method: it uses all labels. It bounds what a linear probe on "
          "the frozen vectors can separate.", "",
          "| " + " | ".join(CLASSIC) + " | mean |", "|" + "---|" * (len(CLASSIC) + 1),
          "| " + " | ".join(f"{r['precision']:.3f}" for r in rows) + f" | {mean:.3f} |"]
    write_results("selection_ceiling", {"N": N, "rows": rows, "mean": round(mean, 4)}, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
