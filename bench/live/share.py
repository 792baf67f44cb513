"""Benchmark "share" (issue 49): how much of a pool is in-domain, estimated against the truth.

Pools, all built from the shared <D>.train.en files (seeded samples, pool seed 0, in file order):

- shared: the seven train files whole (35,000 lines; every target 14.3%);
- small / large: the negatives-study pools (bench/live/negatives_pools.py): 200 target lines + 1,600
  of each other domain (2.0%), 2,000 + 800 of each other (29.4%); targets KDE4 and OpenSubtitles;
- zero: the six other domains' train files (30,000 lines, the target removed: 0%);
- half: 5,000 target lines + 5,000 of the six others (834 or 833 each: 50%).

The in-domain set is <D>.test.en (500 lines), as in the selection benchmark. True share: the share of
the pool's lines that come from the target's file. Each estimator runs through the library's
``domainsift.share`` on the same cross-fitted classifier (5 folds, logistic regression on the frozen
MiniLM vectors, the pool a seeded sample of at most 20,000 lines as the product draws it), with a
95% bootstrap interval.

``--fraction auto``: on the shared pool, the default finetune's score runs of the downstream benchmark
(bench/work/downstream/<D>/finetune-default, seed 0, its in-domain set the query half of <D>.test.en;
run bench/live/downstream.py first) are selected by ``run_select`` with N = the share estimated from
that same query half (``ShareEstimate.lines``: what ``--fraction auto`` selects) and with the true N
(5,000), and evaluated against the oracle (the target's train file).

Two studies (``--study``; bbe, seed 0), each a table of its own:

- ``train-set``: the in-domain set drawn from the target's own train file (500 lines, seeded, held out of
  the pool) instead of <D>.test.en, on the shared and half pools: what the estimate does when the
  in-domain set is drawn as the pool's in-domain lines are (the test files come from other documents).
- ``chargram``: the classifier on hashed character 2-4-grams (tf-idf, logistic regression, cross-fitted
  as the product's) instead of the frozen MiniLM vectors, on the shared and zero pools: whether a
  classifier that reads surface form tells the subtitle domains apart where the vectors do not.

    python bench/live/share.py [--estimators bbe elkan-noto] [--study] [--report-only]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _common import CLASSIC, RESULTS, ROOT, SEVEN, data_file, write_results
from _common import read_lines as lines_of

WORK = ROOT / "bench" / "work" / "share"
POOL_SEED = 0
MIXED = {"small": (200, 1600), "large": (2000, 800)}
MIXED_TARGETS = ["KDE4", "OpenSubtitles"]


def pools(train: dict) -> list[tuple[str, str, dict]]:
    """``(pool, target, {domain: line indices})`` for every pool and target studied."""
    out = []
    for t in SEVEN:
        out.append(("shared", t, {d: np.arange(len(train[d])) for d in SEVEN}))
    for name, (k_t, k_o) in MIXED.items():
        for t in MIXED_TARGETS:
            out.append((name, t, {d: np.sort(np.random.default_rng(POOL_SEED).choice(
                len(train[d]), size=k_t if d == t else k_o, replace=False)) for d in SEVEN}))
    for t in SEVEN:
        out.append(("zero", t, {d: np.arange(len(train[d])) for d in SEVEN if d != t}))
    for t in SEVEN:
        others = [d for d in SEVEN if d != t]
        sizes = {d: 5000 // 6 + (1 if i < 5000 % 6 else 0) for i, d in enumerate(others)}
        out.append(("half", t, {t: np.arange(len(train[t])), **{d: np.sort(np.random.default_rng(POOL_SEED).choice(
            len(train[d]), size=sizes[d], replace=False)) for d in others}}))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--estimators", nargs="+", default=["bbe", "elkan-noto"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--study", action="store_true", help="also the train-set and chargram studies")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    rows_file = WORK / "rows.json"
    rows = json.loads(rows_file.read_text()) if rows_file.exists() else {}
    if not args.report_only:
        from domainsift import EmbedConfig
        from domainsift.share import SAMPLE_LINES, crossfit_scores, estimate_from_scores
        enc = EmbedConfig(embedder="minilm").build()
        train = {d: lines_of(data_file(d, "train")) for d in SEVEN}
        vec = {d: enc.encode(train[d]) for d in SEVEN}
        test = {d: enc.encode(lines_of(data_file(d, "test"))) for d in SEVEN}
        for pool, target, take in pools(train):
            key = f"{pool}|{target}|{args.seed}"
            if key in rows and all(e in rows[key]["estimates"] for e in args.estimators):
                continue
            domains = list(take)
            x = np.concatenate([vec[d][take[d]] for d in domains])
            is_t = np.concatenate([np.full(len(take[d]), d == target) for d in domains])
            # the product's draw: a seeded sample of at most SAMPLE_LINES pool lines
            if len(x) > SAMPLE_LINES:
                keep = np.sort(np.random.default_rng([args.seed, 10]).choice(len(x), SAMPLE_LINES, replace=False))
            else:
                keep = np.arange(len(x))
            s_in, s_pool = crossfit_scores(test[target], x[keep], seed=args.seed)
            row = rows.get(key, {"pool": pool, "target": target, "seed": args.seed, "n_pool": int(len(x)),
                                 "true_share": float(is_t.mean()), "n_sample": int(len(keep)), "estimates": {}})
            for e in args.estimators:
                est = estimate_from_scores(s_in, s_pool, e, seed=args.seed)
                row["estimates"][e] = {"share": est.share, "low": est.low, "high": est.high}
            rows[key] = row
            print(f"{pool:7s} {target:14s} true {row['true_share']:.3f} " + "  ".join(
                f"{e} {v['share']:.3f} [{v['low']:.3f}, {v['high']:.3f}]" for e, v in row["estimates"].items()),
                flush=True)
            rows_file.write_text(json.dumps(rows, indent=1))
        auto_rows(rows, vec, enc, args)
        rows_file.write_text(json.dumps(rows, indent=1))
        if args.study:
            study_rows(rows, train, vec, test, args, rows_file)
    report(rows, args)


def add_positive(row: dict, run: Path, target: str) -> None:
    """``--positive`` (p > 0.5 of the classifier trained on the in-domain set against as many random pool
    lines), and the same probability calibrated to the estimated share a: the posterior of in-domain
    a * p / (1 - p) > 0.5, i.e. the threshold p >= 1 / (1 + 2a)."""
    from domainsift.jobs.evaluate import evaluate_run
    from domainsift import Rule, run_select
    a = row["estimate"]["share"]
    for name, rule in (("positive", {"positive": True}), ("calibrated", {"threshold": 1 / (1 + 2 * a)})):
        out = WORK / "auto" / target / name
        run_select(run, out, rule=Rule(**rule), overwrite=True)
        ev = evaluate_run(out, [data_file(target, "train")])
        row[name] = {k: ev[k] for k in ("precision", "recall", "f1", "n_selected")}


def auto_rows(rows: dict, vec: dict, enc, args) -> None:
    """F1 of selecting the estimated share against the true N, default finetune, shared pool."""
    from domainsift.jobs.evaluate import evaluate_run
    from domainsift import Rule, run_select
    from domainsift.share import SAMPLE_LINES, crossfit_scores, estimate_from_scores
    x = np.concatenate([vec[d] for d in SEVEN])
    keep = np.sort(np.random.default_rng([args.seed, 10]).choice(len(x), SAMPLE_LINES, replace=False))
    for target in CLASSIC:
        key = f"auto|{target}|{args.seed}"
        run = ROOT / "bench" / "work" / "downstream" / target / "finetune-default"
        query = run.parent / "query.en"
        if not (run / "scores.npy").exists() or not query.exists():
            continue
        if key in rows:
            row = rows[key]
            if "calibrated" not in row:  # --positive, and the posterior calibrated to the estimated share
                add_positive(row, run, target)
            continue
        q = lines_of(str(query))
        s_in, s_pool = crossfit_scores(enc.encode(q), x[keep], seed=args.seed)
        est = estimate_from_scores(s_in, s_pool, "bbe", seed=args.seed)
        n_auto = est.lines(len(x))
        row = {"pool": "auto", "target": target, "seed": args.seed, "n_query": len(q), "true_n": 5000,
               "estimate": est.to_dict(), "n_auto": n_auto}
        for name, n in (("auto", n_auto), ("true_n", 5000)):
            out = WORK / "auto" / target / name
            run_select(run, out, rule=Rule(top=n), overwrite=True)
            ev = evaluate_run(out, [data_file(target, "train")])
            row[name] = {k: ev[k] for k in ("precision", "recall", "f1", "n_selected")}
        add_positive(row, run, target)
        rows[key] = row
        print(f"auto {target}: share {est.share:.3f} N {n_auto} F1 {row['auto']['f1']:.4f} vs true N "
              f"{row['true_n']['f1']:.4f}", flush=True)


STUDY_HELD = 500  # train-set study: in-domain lines drawn from the target's train file


def chargram_scores(in_texts: list[str], pool_texts: list[str], seed: int, folds: int = 5):
    """Cross-fitted probabilities as ``domainsift.share.crossfit_scores`` makes them (the same folds,
    logistic regression without class weights), on hashed character 2-4-grams (tf-idf fitted on each
    fold's training lines) instead of vectors."""
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
    from sklearn.linear_model import LogisticRegression
    hv = HashingVectorizer(analyzer="char_wb", ngram_range=(2, 4), n_features=2 ** 20, alternate_sign=False,
                           norm=None)
    x_in, x_pool = hv.transform(in_texts), hv.transform(pool_texts)
    rng = np.random.default_rng(seed)
    fold_in, fold_pool = rng.permutation(x_in.shape[0]) % folds, rng.permutation(x_pool.shape[0]) % folds
    s_in, s_pool = np.empty(x_in.shape[0]), np.empty(x_pool.shape[0])
    for k in range(folds):
        tr_in, tr_pool = fold_in != k, fold_pool != k
        x = sp.vstack([x_in[tr_in], x_pool[tr_pool]]).tocsr()
        y = np.concatenate([np.ones(int(tr_in.sum())), np.zeros(int(tr_pool.sum()))])
        tf = TfidfTransformer(sublinear_tf=True).fit(x)
        clf = LogisticRegression(C=1.0, max_iter=2000, random_state=seed).fit(tf.transform(x), y)
        s_in[~tr_in] = clf.predict_proba(tf.transform(x_in[~tr_in]))[:, 1]
        s_pool[~tr_pool] = clf.predict_proba(tf.transform(x_pool[~tr_pool]))[:, 1]
    return s_in, s_pool


def study_rows(rows: dict, train: dict, vec: dict, test: dict, args, rows_file: Path) -> None:
    """The two studies of the module docstring, a row per (study, pool, target)."""
    from domainsift.share import SAMPLE_LINES, crossfit_scores, estimate_from_scores
    tests = {d: lines_of(data_file(d, "test")) for d in SEVEN}
    plan = {"train-set": ("shared", "half"), "chargram": ("shared", "zero")}
    for pool, target, take in pools(train):
        for study, where in plan.items():
            key = f"study|{study}|{pool}|{target}|{args.seed}"
            if pool not in where or key in rows:
                continue
            take_ = dict(take)
            if study == "train-set":
                held = np.sort(np.random.default_rng([args.seed, 20]).choice(take[target], STUDY_HELD, replace=False))
                take_[target] = np.setdiff1d(take[target], held)
            domains = list(take_)
            is_t = np.concatenate([np.full(len(take_[d]), d == target) for d in domains])
            n = len(is_t)
            keep = (np.sort(np.random.default_rng([args.seed, 10]).choice(n, SAMPLE_LINES, replace=False))
                    if n > SAMPLE_LINES else np.arange(n))
            x = np.concatenate([vec[d][take_[d]] for d in domains])
            base = crossfit_scores(test[target], x[keep], seed=args.seed)  # the product's, on the same pool
            if study == "train-set":
                s_in, s_pool = crossfit_scores(vec[target][held], x[keep], seed=args.seed)
            else:
                texts = [train[d][i] for d in domains for i in take_[d]]
                s_in, s_pool = chargram_scores(tests[target], [texts[i] for i in keep], args.seed)
            est = estimate_from_scores(s_in, s_pool, "bbe", seed=args.seed)
            ref = estimate_from_scores(*base, "bbe", seed=args.seed)
            rows[key] = {"pool": "study", "study": study, "on": pool, "target": target, "seed": args.seed,
                         "true_share": float(is_t.mean()), "n_pool": int(n),
                         "estimate": {"share": est.share, "low": est.low, "high": est.high},
                         "baseline": {"share": ref.share, "low": ref.low, "high": ref.high}}
            print(f"study {study} {pool} {target}: true {is_t.mean():.3f} est {est.share:.3f} "
                  f"(MiniLM, test set: {ref.share:.3f})", flush=True)
            rows_file.write_text(json.dumps(rows, indent=1))


def study_report(study: list) -> list[str]:
    md = ["", "## Two studies: where the estimate's error comes from (bbe, seed 0)", "",
          "'baseline': the product's estimate (MiniLM vectors, in-domain set <D>.test.en) on the same pool. "
          "train-set: the in-domain set is 500 lines of the target's train file, held out of the pool (the "
          "pool and its true share lose them); chargram: the classifier reads hashed character 2-4-grams "
          "(tf-idf) instead of the vectors, in-domain set <D>.test.en. The chargram rows' baseline is the "
          "first table's shared and zero rows made again by this version (the first table's rows were made "
          "by 0.15.0; the estimator has not changed since).", "",
          "| study | pool | target | true | estimate [95%] | error | baseline | baseline error |",
          "|---|---|---|---|---|---|---|---|"]
    errs: dict = {}
    for r in sorted(study, key=lambda r: (r["study"], r["on"], SEVEN.index(r["target"]))):
        e, b, t = r["estimate"], r["baseline"], r["true_share"]
        errs.setdefault((r["study"], r["on"]), []).append((abs(e["share"] - t), abs(b["share"] - t)))
        md.append(f"| {r['study']} | {r['on']} | {r['target']} | {t:.3f} | {e['share']:.3f} [{e['low']:.3f}, "
                  f"{e['high']:.3f}] | {e['share'] - t:+.3f} | {b['share']:.3f} | {b['share'] - t:+.3f} |")
    md += ["", "| study | pool | mean / max error | baseline mean / max error |", "|---|---|---|---|"]
    for (st, on), v in errs.items():
        a, b = np.array(v).T
        md.append(f"| {st} | {on} | {a.mean():.3f} / {a.max():.3f} | {b.mean():.3f} / {b.max():.3f} |")
    return md


def report(rows: dict, args) -> None:
    auto = [r for r in rows.values() if r["pool"] == "auto"]
    study = [r for r in rows.values() if r["pool"] == "study"]
    rows = {k: r for k, r in rows.items() if r["pool"] not in ("auto", "study")}
    ests = sorted({e for r in rows.values() for e in r["estimates"]})
    md = ["# The in-domain share of a pool, estimated (issue 49)", "",
          "Estimate (95% bootstrap interval) against the true share; |error| = |estimate - true|. "
          "Classifier: logistic regression on frozen MiniLM vectors, 5-fold cross-fitted; pool: a seeded "
          "sample of at most 20,000 lines. In-domain set <D>.test.en.", ""]
    md.append("| pool | target | true | " + " | ".join(f"{e} | error" for e in ests) + " |")
    md.append("|---|---|---|" + "---|---|" * len(ests))
    summary = {e: {} for e in ests}
    for r in rows.values():
        cells = []
        for e in ests:
            v = r["estimates"].get(e)
            if v is None:
                cells += ["", ""]
                continue
            err = abs(v["share"] - r["true_share"])
            summary[e].setdefault(r["pool"], []).append(err)
            cells += [f"{v['share']:.3f} [{v['low']:.3f}, {v['high']:.3f}]", f"{err:.3f}"]
        md.append(f"| {r['pool']} | {r['target']} | {r['true_share']:.3f} | " + " | ".join(cells) + " |")
    md += ["", "| estimator | " + " | ".join(f"{p} mean / max error" for p in ["shared", "small", "large", "zero", "half"])
           + " | all: mean / max |", "|---|" + "---|" * 6]
    for e in ests:
        cells = [f"{np.mean(v):.3f} / {np.max(v):.3f}" if (v := summary[e].get(p)) else "" for p in
                 ["shared", "small", "large", "zero", "half"]]
        allv = [x for v in summary[e].values() for x in v]
        md.append(f"| {e} | " + " | ".join(cells) + f" | {np.mean(allv):.3f} / {np.max(allv):.3f} |")
    if auto:
        md += ["", "## --fraction auto with the default finetune (shared pool, seed 0)", "",
               "In-domain set: the query half of <D>.test.en (the downstream benchmark's); the share estimated "
               "from it (bbe); N = share x 35,000; F1 against the target's 5,000 train lines.", "",
               "| target | estimated share [95%] | N auto | precision | recall | F1 auto | F1 at the true N | "
               "difference |", "|---|---|---|---|---|---|---|---|"]
        for r in auto:
            e, a, t = r["estimate"], r["auto"], r["true_n"]
            md.append(f"| {r['target']} | {e['share']:.3f} [{e['low']:.3f}, {e['high']:.3f}] | {r['n_auto']} | "
                      f"{a['precision']:.4f} | {a['recall']:.4f} | {a['f1']:.4f} | {t['f1']:.4f} | "
                      f"{a['f1'] - t['f1']:+.4f} |")
        fa, ft = np.mean([r["auto"]["f1"] for r in auto]), np.mean([r["true_n"]["f1"] for r in auto])
        md.append(f"| mean | | | | | {fa:.4f} | {ft:.4f} | {fa - ft:+.4f} |")
        md += ["", "`--positive` on the same runs (p > 0.5 of the classifier trained on the in-domain set against "
               "as many random pool lines), and that probability calibrated to the estimated share a (the "
               "posterior a p / (1 - p) > 0.5, run as `--threshold 1/(1+2a)`):", "",
               "| target | --positive: N | F1 | calibrated: N | F1 |", "|---|---|---|---|---|"]
        for r in auto:
            p, c = r["positive"], r["calibrated"]
            md.append(f"| {r['target']} | {p['n_selected']} | {p['f1']:.4f} | {c['n_selected']} | {c['f1']:.4f} |")
        fp, fc = np.mean([r["positive"]["f1"] for r in auto]), np.mean([r["calibrated"]["f1"] for r in auto])
        md.append(f"| mean | | {fp:.4f} | | {fc:.4f} |")
    if study:
        md += study_report(study)
    write_results("share", {"rows": list(rows.values()), "auto": auto, **({"study": study} if study else {})},
                  "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
