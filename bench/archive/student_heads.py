"""Benchmark "student heads" (issue 48, item 2): what the cascade's student learns, against the candidates
it needs at small selections.

The teacher: the default finetune's scores of the shared pool (35,000 lines, seed 0, in-domain set
<D>.test.en), as bench/live/candidates.py saved them under bench/work/candidates/teacher/shared/ (run
that first). The student's features are the product's (static token vectors distilled from MiniLM,
their mean over a line's tokens); each head is fitted here, on a seeded sample of the pool (20,000
lines unless said) scored by the teacher, and scores the whole pool. Measured for a selection of
``share`` of the pool (N lines): **needed**, the fewest of the student's top lines that hold N of the
teacher's top 1.25 N (the cascade's guarantee; what a perfect plan hands the teacher), over the whole
pool and over the 5,000 lines outside a 30,000-line seeded set that holds every sample (lines no head
was fitted on).

Heads (logistic regression, balanced classes, standardised features, unless said):

- ``top vs bottom two thirds``: the in-domain set and the teacher's top share of the sample against
  its bottom two thirds (the product's head to 0.17.0);
- ``top vs rest``: against every other sample line; ``top 1.25 vs rest``: the top (1 + slack) N
  (0.18.0's: the lines the candidates must hold); ``top 3 vs rest``: the top 3 N;
- ``+ length``: the log of the line's token count as one more feature;
- ``ridge on logit`` / ``MLP on logit``: a regression of the teacher's logit (one hidden layer of
  256 for the MLP, fitted for the 1% selection only) over the sample, no in-domain set.

    python bench/archive/student_heads.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from _common import CLASSIC, ROOT, SEVEN, data_file, write_results  # noqa: E402

TEACHERS = ROOT / "bench" / "work" / "candidates" / "teacher" / "shared"
SHARES = (0.01, 0.05, 0.1429)
SLACK = 0.25


def needed(student: np.ndarray, teacher: np.ndarray, share: float) -> float:
    """The share of the lines, best first by the student, that holds N of the teacher's top 1.25 N."""
    n = len(teacher)
    n_top = max(1, int(round(share * n)))
    top = np.argsort(-teacher, kind="stable")[:min(n, int(np.ceil((1 + SLACK) * n_top)))]
    pos = np.empty(n, np.int64)
    pos[np.argsort(-student, kind="stable")] = np.arange(n)
    return float((np.sort(pos[top])[n_top - 1] + 1) / n)


def logistic(x_in, xs, pos, neg, x_all):
    from sklearn.linear_model import LogisticRegression
    x = np.vstack([x_in, xs[pos], xs[neg]])
    y = np.r_[np.ones(len(x_in) + len(pos)), np.zeros(len(neg))]
    mu, sd = x.mean(0), np.maximum(x.std(0), 1e-8)
    lr = LogisticRegression(C=1.0, class_weight="balanced", max_iter=3000, random_state=0).fit((x - mu) / sd, y)
    return ((x_all - mu) / sd) @ lr.coef_[0]


def regression(kind, xs, ts, x_all):
    p = np.clip(ts, 1e-6, 1 - 1e-6)
    y = np.log(p / (1 - p))
    mu, sd = xs.mean(0), np.maximum(xs.std(0), 1e-8)
    if kind == "ridge":
        from sklearn.linear_model import Ridge
        model = Ridge(alpha=1.0)
    else:
        from sklearn.neural_network import MLPRegressor
        model = MLPRegressor(hidden_layer_sizes=(256,), alpha=1e-3, max_iter=200, early_stopping=True,
                             random_state=0)
    return model.fit((xs - mu) / sd, y).predict((x_all - mu) / sd)


def main() -> None:
    from domainsift.embed import model_path
    from domainsift.embed.static import distilled
    from domainsift.rundir import load_scores
    static = distilled(model_path("minilm"), None, progress=False)
    lines = {os.path.basename(data_file(d, "train")): Path(data_file(d, "train")).read_text(encoding="utf-8")
             .splitlines() for d in SEVEN}
    rows = []
    for target in CLASSIC:
        run = load_scores(TEACHERS / target)
        texts = [lines[os.path.basename(str(f))][ln - 1] for f, ln in run.ids]
        t = np.asarray(run.scores, dtype=np.float64)
        n = len(t)
        ind = Path(data_file(target, "test")).read_text(encoding="utf-8").splitlines()
        x_all = static.encode(texts, dtype=np.float64)
        x_in = static.encode(ind, dtype=np.float64)
        length = np.log1p(np.asarray(static.token_ids(texts)[1], dtype=np.float64))
        length_in = np.log1p(np.asarray(static.token_ids(ind)[1], dtype=np.float64))
        perm = np.random.default_rng(0).permutation(n)
        unseen = np.sort(perm[30000:])
        for k in (10000, 20000, 30000):
            pick = np.sort(perm[:k])
            ts, xs = t[pick], x_all[pick]
            order = np.argsort(-ts, kind="stable")
            for share in SHARES:
                n_top = max(1, int(round(share * k)))
                wide = int(np.ceil((1 + SLACK) * n_top))
                heads = {"top vs bottom two thirds": lambda: logistic(x_in, xs, order[:n_top],
                                                                      order[k - int(round(2 / 3 * k)):], x_all),
                         "top 1.25 vs rest": lambda: logistic(x_in, xs, order[:wide], order[wide:], x_all)}
                if k == 20000:
                    heads.update({
                        "top vs rest": lambda: logistic(x_in, xs, order[:n_top], order[n_top:], x_all),
                        "top 3 vs rest": lambda: logistic(x_in, xs, order[:3 * n_top], order[3 * n_top:], x_all),
                        "top 1.25 vs rest + length": lambda: logistic(
                            np.c_[x_in, length_in], np.c_[xs, length[pick]], order[:wide], order[wide:],
                            np.c_[x_all, length]),
                        "ridge on logit": lambda: regression("ridge", xs, ts, x_all)})
                    if share == SHARES[0]:  # minutes a fit on 2 cores: the 1% selection only
                        heads["MLP on logit"] = lambda: regression("mlp", xs, ts, x_all)
                for head, fit in heads.items():
                    s = fit()
                    rows.append({"target": target, "sample": k, "share": share, "head": head,
                                 "needed": round(needed(s, t, share), 4),
                                 "needed_unseen": round(needed(s[unseen], t[unseen], share), 4)})
                    print(rows[-1], flush=True)
    md = ["# What the cascade's student learns, against the candidates it needs", "",
          "Teacher: the default finetune on the shared pool (35,000 lines, seed 0); the product's static "
          "features; each head fitted on a seeded sample of the pool scored by the teacher. **needed**: the "
          "fewest of the student's top lines that hold N of the teacher's top 1.25 N, as a share of the pool "
          "(whole pool / the 5,000 lines outside every sample); mean over the five classic targets.", "",
          "| sample | head | " + " | ".join(f"{s:g}: whole / unseen" for s in SHARES) + " |",
          "|---|---|" + "---|" * len(SHARES)]
    for k in (20000, 10000, 30000):
        for head in dict.fromkeys(r["head"] for r in rows if r["sample"] == k):
            cells = []
            for share in SHARES:
                g = [r for r in rows if (r["sample"], r["head"], r["share"]) == (k, head, share)]
                cells.append(f"{np.mean([r['needed'] for r in g]):.4f} / {np.mean([r['needed_unseen'] for r in g]):.4f}"
                             if g else "–")
            md.append(f"| {k:,} | {head} | " + " | ".join(cells) + " |")
    write_results("student_heads", {"rows": rows}, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
