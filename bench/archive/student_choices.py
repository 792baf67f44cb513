"""Benchmark "student choices": which features, head and sample size make the cascade's student.

On the selection benchmark's pool (the seven <D>.train.en, 35,000 lines; in-domain set <D>.test.en,
N = 5,000), the teacher's scores are those of the finished full runs under bench/work/selection/
(``finetune-default`` and ``cosine-default``, seed 0: run bench/live/selection.py first). For each
target, teacher, feature set, head and sample size, a student is trained on a seeded sample of the
pool scored by the teacher and scores the whole pool. Measured:

- ``precision``: the student alone, the share of its top N from the target's file;
- ``recall@kN``: the share of the teacher's top N (over the whole pool) inside the student's top k*N;
- ``M99``: the candidates needed for 99% of the teacher's top N, over the whole pool (the oracle);
- ``planned``: the candidates the product's rule plans from the sample alone (held-out quarter);
- ``cascade``: the precision of the teacher's top N among the planned candidates.

Features: ``static`` (token vectors distilled from the encoder, :mod:`domainsift.embed.static`: the
product's), ``hashed`` (word 1-2-grams hashed into 2^18 columns, l2-normalised; ``both`` side by side
was measured on KDE4 only, 30x slower to fit and no better, and left out). Heads: ``pu`` (no
teacher: in-domain set against random sample lines, the issue's starting point), ``top-bottom``
(logistic regression: in-domain set and the teacher's top share of the sample against its bottom two
thirds: the product's) and ``rank`` (ridge regression on the teacher's rank, Gaussianised). Seed 0.

    python bench/archive/student_choices.py [--targets EMEA ...] [--teachers finetune cosine]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))  # the shared helpers: bench/live/_common.py
from _common import CLASSIC, ROOT, data_file, write_results

from domainsift.io.corpus import read_corpus

WORK = ROOT / "bench" / "work" / "selection"
N = 5000


def pool_in_score_order(run_dir):
    """The pool's texts in the order of the run's scores, and each one's file index."""
    pool = json.loads((run_dir / "pool.json").read_text())
    ids = np.load(run_dir / "ids.npy")
    by_id = {}
    for k, f in enumerate(pool["files"]):
        c = read_corpus([f])
        by_id.update(((k, line), t) for (_, line), t in zip(c.ids, c.texts))
    return [by_id[(int(k), int(line))] for k, line in ids], ids[:, 0], pool["files"]


def student(head: str, features: str, static):
    """The product's student (static features, head ``top-bottom``) or a variant this benchmark compares."""
    from domainsift.select.student import Student

    class Hashed(Student):  # word 1-2-grams hashed into 2^18 columns (scikit-learn), sparse, not standardised
        def featurize(self, texts):
            from sklearn.feature_extraction.text import HashingVectorizer
            return HashingVectorizer(n_features=2 ** 18, ngram_range=(1, 2), alternate_sign=False, norm="l2",
                                     dtype=np.float32).transform(list(texts))

        def training_set(self, x_in, x_sample, t_sample, share):
            import scipy.sparse as sp
            n = len(t_sample)
            order = np.argsort(-t_sample, kind="stable")
            pos, neg = order[:max(1, round(share * n))], order[n - round(2 / 3 * n):]
            return sp.vstack([x_in, x_sample[pos], x_sample[neg]]), np.r_[np.ones(x_in.shape[0] + len(pos)),
                                                                          np.zeros(len(neg))]

        def fit_head(self, x_in, x_sample, t_sample, share, seed=0):
            from sklearn.linear_model import LogisticRegression
            x, y = self.training_set(x_in, x_sample, t_sample, share)
            lr = LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000, random_state=seed).fit(x, y)
            self.coef_, self.intercept_ = lr.coef_[0].astype(np.float64), float(lr.intercept_[0])
            return self

        def score_features(self, x):
            return np.asarray(x @ self.coef_).ravel() + self.intercept_

    base = Hashed if features == "hashed" else Student

    class PU(base):  # no teacher: the in-domain set against random sample lines
        def training_set(self, x_in, x_sample, t_sample, share):
            import scipy.sparse as sp
            stack = sp.vstack if hasattr(x_in, "toarray") else np.vstack
            return stack([x_in, x_sample]), np.r_[np.ones(x_in.shape[0]), np.zeros(x_sample.shape[0])]

    class Rank(base):  # ridge regression on the teacher's Gaussianised rank; the in-domain set at the top
        def fit_head(self, x_in, x_sample, t_sample, share, seed=0):
            import scipy.sparse as sp
            from scipy.stats import norm
            from sklearn.linear_model import Ridge
            n = len(t_sample)
            rank = np.empty(n)
            rank[np.argsort(t_sample, kind="stable")] = np.arange(n)
            y = np.r_[np.full(x_in.shape[0], norm.ppf((n - 0.5) / n)), norm.ppf((rank + 0.5) / n)]
            if hasattr(x_in, "toarray"):
                x = sp.vstack([x_in, x_sample])
            else:
                x = np.vstack([x_in, x_sample])
                self.scale_ = (x.mean(0), np.maximum(x.std(0), 1e-8))
                x = (x - self.scale_[0]) / self.scale_[1]
            r = Ridge(alpha=1.0).fit(x, y)
            self.coef_, self.intercept_ = r.coef_.astype(np.float64), float(r.intercept_)
            return self
    return {"pu": PU, "rank": Rank, "top-bottom": base}[head](static)


HELD_OUT = 0.25  # 0.8.0's plan: one held-out quarter of the sample
RECALL = 0.99  # 0.8.0's plan: 99% of the teacher's top share (0.9.0 plans on slack: select.student.plan_share)


def recall_curve(student_scores: np.ndarray, teacher_scores: np.ndarray, share: float) -> float:
    """The share of the lines the student must keep (best first) to hold ``RECALL`` of the teacher's
    top ``share`` of the same lines (0.8.0's plan rule, with which this study was measured)."""
    n = len(teacher_scores)
    n_top = max(1, int(round(share * n)))
    top = np.argsort(-teacher_scores, kind="stable")[:n_top]
    pos = np.empty(n, np.int64)
    pos[np.argsort(-student_scores, kind="stable")] = np.arange(n)
    need = int(np.ceil(RECALL * n_top))
    return float((np.sort(pos[top])[need - 1] + 1) / n)


def planned_candidates(head, features, static, x_in, xs, ts, share, n_pool, seed=0) -> int:
    """0.8.0's rule: fit on three quarters of the sample, keep enough candidates for 99% of the
    teacher's top share on the held-out quarter."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(ts))
    n_held = int(round(HELD_OUT * len(ts)))
    held, train = np.sort(order[:n_held]), np.sort(order[n_held:])
    first = student(head, features, static).fit_head(x_in, xs[train], ts[train], share, seed)
    need = recall_curve(first.score_features(xs[held]), ts[held], share)
    return int(min(n_pool, max(N, np.ceil(need * n_pool))))


def main() -> None:
    from domainsift.embed.static import distilled
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", nargs="+", default=CLASSIC)
    ap.add_argument("--teachers", nargs="+", default=["finetune", "cosine"])
    ap.add_argument("--samples", nargs="+", type=int, default=[5000, 20000])
    args = ap.parse_args()
    static = distilled("minilm")
    rows = []
    for target in args.targets:
        in_domain = read_corpus([data_file(target, "test")]).texts
        for teacher in args.teachers:
            run_dir = WORK / target / f"{teacher}-default"
            texts, fidx, files = pool_in_score_order(run_dir)
            gold = fidx == files.index(data_file(target, "train"))
            t = np.load(run_dir / "scores.npy")
            teacher_top = np.argsort(-t, kind="stable")[:N]
            in_top = np.zeros(len(t), bool)
            in_top[teacher_top] = True
            for features in ("static", "hashed"):
                st = student("top-bottom", features, static)
                x_pool, x_in = st.featurize(texts), st.featurize(in_domain)
                for head in ("pu", "top-bottom", "rank"):
                    for sample in args.samples if head != "pu" else args.samples[:1]:
                        t0 = time.time()
                        rng = np.random.default_rng(0)
                        pick = np.sort(rng.choice(len(texts), size=sample, replace=False))
                        ts = t[pick]
                        share = N / len(texts)
                        planned = planned_candidates(head, features, static, x_in, x_pool[pick], ts, share,
                                                     len(texts))
                        s = student(head, features, static).fit_head(x_in, x_pool[pick], ts, share).score_features(x_pool)
                        order = np.argsort(-s, kind="stable")
                        rec = {k: float(in_top[order[:int(k * N)]].sum() / N) for k in (1, 1.5, 2, 3)}
                        pos = np.empty(len(s), np.int64)
                        pos[order] = np.arange(len(s))
                        m99 = int(np.sort(pos[teacher_top])[int(np.ceil(0.99 * N)) - 1] + 1)
                        cand = order[:planned]
                        top = cand[np.argsort(-t[cand], kind="stable")[:N]]
                        row = {"target": target, "teacher": teacher, "features": features, "head": head,
                               "sample": sample, "precision": float(gold[order[:N]].mean()),
                               **{f"recall@{k}N": round(v, 4) for k, v in rec.items()},
                               "M99": m99, "planned": int(planned),
                               "planned_recall": float(in_top[cand].sum() / N),
                               "cascade": float(gold[top].mean()), "seconds": round(time.time() - t0, 1)}
                        rows.append(row)
                        print(json.dumps(row), flush=True)
    table(rows)


def table(rows) -> None:
    keys = sorted({(r["teacher"], r["features"], r["head"], r["sample"]) for r in rows},
                  key=lambda k: (k[0], ["static", "hashed", "both"].index(k[1]), k[2], k[3]))
    md = ["# Student choices (features, head, sample size) for the cascade", "",
          "Pool of bench/live/selection.py (35,000 lines), N = 5,000, seed 0; the teacher's scores are its full runs. "
          "Means over the targets run: the student alone's precision; recall of the teacher's top N in the "
          "student's top 1.5N and 2N; M99 (oracle candidates for 99% of the teacher's top N); planned "
          "(candidates the product's rule plans from the sample); the recall and the cascade's precision "
          "at the planned candidates.", "",
          "| teacher | features | head | sample | student precision | recall@1.5N | recall@2N | M99 | planned "
          "| recall at planned | cascade precision |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for k in keys:
        rs = [r for r in rows if (r["teacher"], r["features"], r["head"], r["sample"]) == k]
        m = lambda f: float(np.mean([r[f] for r in rs]))  # noqa: E731
        md.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {m('precision'):.4f} | {m('recall@1.5N'):.3f} | "
                  f"{m('recall@2N'):.3f} | {m('M99'):.0f} | {m('planned'):.0f} | {m('planned_recall'):.3f} | "
                  f"{m('cascade'):.4f} |")
    md.append("")
    md.append(f"Targets: {', '.join(sorted({r['target'] for r in rows}))}.")
    write_results("student_choices", {"rows": rows}, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
