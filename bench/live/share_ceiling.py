"""Benchmark "share ceiling" (issue 49): can any estimator read a domain's share off an encoder's vectors?

The share estimate (``domainsift.share``, bbe) is the ratio of the pool's share above a score to the
in-domain set's share above it, at the best score: exact when the top of the ranking holds in-domain
lines only, an over-estimate by ``(1 - a) q_rest(t) / q_in(t)`` otherwise. ``bench/results/share.md``
finds the subtitle domains (OpenSubtitles, TED2020, QED) over-estimated by up to 0.32 even with an
in-domain set drawn from the pool's own lines. Is that the estimator, or the lines?

Here the classifier is given what no user has: the true labels. On the same pools (the shared pool,
every target 14.3%, and the half pool, the target 50%; the product's 20,000-line seeded sample), a
logistic regression on the frozen MiniLM vectors tells the target's pool lines from the other pool
lines (``domainsift.share.crossfit_scores``: the product's classifier and folds, trained on the labels
instead of on the in-domain set), and bbe reads the share off its held-out scores, the target's pool
lines standing for the in-domain set. Where even this estimate is over, no positive-unlabeled
estimator on these vectors can be right: the top of the best ranking the vectors allow is not pure.
Also reported: the purity of that ranking's top 1% and 5% of the sample.

``--finetune TARGET ...``: the same question for a fine-tuned encoder (the product's default finetune, seed
0) on the shared pool: the pool's lines split in two seeded halves; finetune learns 500 of the target's
lines of one half (the in-domain set, as large as the benchmarks') against the other domains' lines of that
half (the pool: its random negatives are never the target's), and scores the other half, where bbe reads the share (the target's
lines of that half standing for the in-domain set) and the purity of the top is counted.

``--encoder mpnet``: the frozen study on all-mpnet-base-v2's vectors (bench/live/mpnet.py assembles it from
PyPI) instead of MiniLM's: whether a larger encoder tells the subtitle domains apart.

    python bench/live/share_ceiling.py [--pools shared half] [--encoder mpnet] [--finetune QED TED2020] [--report-only]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from _common import ROOT, SEVEN, data_file, earlier_rows, merge_rows, read_lines, write_results

WORK = ROOT / "bench" / "work" / "share_ceiling"
FIT_LINES = 500  # --finetune: the target's lines it learns from, as many as the benchmarks' in-domain sets


def measure(pools: list[str], seed: int = 0, encoder: str = "minilm") -> list[dict]:
    from domainsift import EmbedConfig
    from domainsift import __version__
    from domainsift.share import SAMPLE_LINES, crossfit_scores, estimate_from_scores
    WORK.mkdir(parents=True, exist_ok=True)
    model = "minilm"
    if encoder == "mpnet":
        from mpnet import model_dir
        model = str(model_dir())
    enc = EmbedConfig(embedder=model, cache_dir=str(WORK / "cache"), progress=False).build()
    vec = {d: enc.encode(read_lines(data_file(d, "train"))) for d in SEVEN}
    from share import pools as share_pools  # share.py's pools, drawn as it draws them
    rows = []
    for pool, target, take in share_pools(vec):
        if pool not in pools:
            continue
        x = np.concatenate([vec[d][take[d]] for d in take])
        is_t = np.concatenate([np.full(len(take[d]), d == target) for d in take])
        n = len(x)
        keep = (np.sort(np.random.default_rng([seed, 10]).choice(n, SAMPLE_LINES, replace=False))
                if n > SAMPLE_LINES else np.arange(n))
        xs, ys = x[keep], is_t[keep]
        s_t, s_rest = crossfit_scores(xs[ys], xs[~ys], seed=seed)  # target's pool lines vs the others
        scores = np.concatenate([s_t, s_rest])
        labels = np.concatenate([np.ones(len(s_t), bool), np.zeros(len(s_rest), bool)])
        est = estimate_from_scores(s_t, scores, "bbe", seed=seed)
        order = np.argsort(-scores, kind="stable")
        purity = {f"top {p:g}": float(labels[order[:max(1, int(round(p * len(scores))))]].mean())
                  for p in (0.01, 0.05)}
        row = {"version": __version__, "pool": pool, "target": target, "seed": seed,
               **({"encoder": encoder} if encoder != "minilm" else {}),
               "true_share": round(float(ys.mean()), 4), "n_sample": int(len(keep)),
               "supervised": {"share": round(est.share, 4), "low": round(est.low, 4), "high": round(est.high, 4)},
               "purity": {k: round(v, 4) for k, v in purity.items()}}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def measure_finetune(targets: list[str], seed: int = 0) -> list[dict]:
    import domainsift as ds
    from domainsift import __version__
    from domainsift.select import get_selector
    from domainsift.share import estimate_from_scores
    pool = ds.read_corpus([data_file(d, "train") for d in SEVEN])
    domain = np.array([next(d for d in SEVEN if f.endswith(f"/{d}.train.en")) for f, _ in pool.ids])
    half = np.random.default_rng([seed, 30]).permutation(len(pool)) % 2 == 0  # the fit half
    rows = []
    for target in targets:
        is_t = domain == target
        mine = np.flatnonzero(half & is_t)  # as many lines as an in-domain set of the benchmarks (500)
        fit_in = pool[[int(i) for i in np.sort(np.random.default_rng([seed, 31]).choice(mine, FIT_LINES, replace=False))]]
        fit_pool = pool[[int(i) for i in np.flatnonzero(half & ~is_t)]]
        judged = np.flatnonzero(~half)
        sel = get_selector("finetune", seed=seed, progress=False).fit(fit_in, fit_pool)
        scores = np.asarray(sel.score(pool[[int(i) for i in judged]]), dtype=np.float64)
        labels = is_t[judged]
        est = estimate_from_scores(scores[labels], scores, "bbe", seed=seed)
        order = np.argsort(-scores, kind="stable")
        purity = {f"top {p:g}": round(float(labels[order[:max(1, int(round(p * len(scores))))]].mean()), 4)
                  for p in (0.01, 0.05)}
        row = {"version": __version__, "pool": "shared", "target": target, "seed": seed, "classifier": "finetune",
               "true_share": round(float(labels.mean()), 4), "n_sample": int(len(judged)),
               "supervised": {"share": round(est.share, 4), "low": round(est.low, 4), "high": round(est.high, 4)},
               "purity": purity}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def report(rows: list[dict]) -> None:
    import json as _json
    from _common import RESULTS
    share = {(r["pool"], r["target"]): r["estimates"]["bbe"]["share"]
             for r in _json.loads((RESULTS / "share.json").read_text())["rows"] if "estimates" in r}
    md = ["# The share's ceiling: MiniLM frozen and fine-tuned, mpnet frozen (issue 49)", "",
          "supervised: bbe on the held-out scores of the product's classifier (logistic regression on the frozen "
          "MiniLM vectors, 5 folds, `domainsift.share.crossfit_scores`) trained on the true labels (the target's "
          "pool lines against the other pool lines of the product's 20,000-line seeded sample), the target's "
          "pool lines standing for the in-domain set: the estimate with the best ranking these vectors allow and "
          "an in-domain set drawn exactly as the pool's in-domain lines. product: the product's estimate "
          "(in-domain set <D>.test.en; `bench/results/share.md`). purity: the share of the target among the "
          "supervised ranking's top 1% / 5% of the sample. true: the target's share of the sample. Rows made by "
          "`python bench/live/share_ceiling.py` (this table) and `python bench/live/share_ceiling.py --pools --finetune "
          "QED TED2020 OpenSubtitles` (the fine-tuned table) and `python bench/live/share_ceiling.py --encoder mpnet` "
          "(the mpnet table), at the version each row names.", "",
          "| pool | target | true | supervised [95%] | error | product | error | purity top 1% | top 5% |",
          "|---|---|---|---|---|---|---|---|---|"]
    tuned = [r for r in rows if r.get("classifier") == "finetune"]
    larger = [r for r in rows if r.get("encoder", "minilm") != "minilm"]
    rows = [r for r in rows if r.get("classifier") != "finetune" and r.get("encoder", "minilm") == "minilm"]
    for r in sorted(rows, key=lambda r: (r["pool"] != "shared", r["pool"], SEVEN.index(r["target"]))):
        s, t = r["supervised"], r["true_share"]
        p = share.get((r["pool"], r["target"]))
        md.append(f"| {r['pool']} | {r['target']} | {t:.3f} | {s['share']:.3f} [{s['low']:.3f}, {s['high']:.3f}] | "
                  f"{s['share'] - t:+.3f} | " + (f"{p:.3f} | {p - t:+.3f}" if p is not None else "- | -")
                  + f" | {r['purity']['top 0.01']:.3f} | {r['purity']['top 0.05']:.3f} |")
    frozen = {(r["pool"], r["target"]): r for r in rows}
    if tuned:
        md += versus_frozen(tuned, frozen, "fine-tuned", "A fine-tuned encoder instead of the frozen vectors "
                            "(`--finetune`; shared pool): the default finetune (seed 0) learns 500 of the target's lines "
                            "of one seeded half of the pool against the other domains' lines of that half, and scores "
                            "the other half (true: the target's share of that half).")
    if larger:
        md += versus_frozen(larger, frozen, "mpnet", "A larger encoder, frozen (`--encoder mpnet`: all-mpnet-base-v2, "
                            "768-d, 110M parameters, bench/live/mpnet.py), the same supervised estimate on the same "
                            "samples.")
    write_results("share_ceiling", {"rows": rows + tuned + larger}, "\n".join(md) + "\n")


def versus_frozen(rows: list[dict], frozen: dict, name: str, intro: str) -> list[str]:
    """A table of ``rows`` (another encoder's supervised estimates) beside frozen MiniLM's on the same pool and
    target."""
    md = ["", intro, "", f"| pool | target | true | {name}, supervised [95%] | error | purity top 1% | top 5% | "
          "MiniLM: error | purity top 1% |", "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["pool"] != "shared", r["pool"], SEVEN.index(r["target"]))):
        s, t = r["supervised"], r["true_share"]
        f = frozen.get((r["pool"], r["target"]))
        md.append(f"| {r['pool']} | {r['target']} | {t:.3f} | {s['share']:.3f} [{s['low']:.3f}, {s['high']:.3f}] | "
                  f"{s['share'] - t:+.3f} | {r['purity']['top 0.01']:.3f} | {r['purity']['top 0.05']:.3f} | "
                  + (f"{f['supervised']['share'] - f['true_share']:+.3f} | {f['purity']['top 0.01']:.3f}"
                     if f else "- | -") + " |")
    return md


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pools", nargs="*", default=["shared", "half"], choices=["shared", "half"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--encoder", default="minilm", choices=["minilm", "mpnet"],
                    help="the frozen vectors' encoder (mpnet: all-mpnet-base-v2 from PyPI, bench/live/mpnet.py)")
    ap.add_argument("--finetune", nargs="*", default=None, metavar="TARGET",
                    help="also a fine-tuned encoder's ceiling for these targets (shared pool; minutes each)")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    rows = earlier_rows("share_ceiling")
    key = lambda r: (r["pool"], r["target"], r["seed"], r.get("classifier", "frozen"), r.get("encoder", "minilm"))  # noqa: E731
    if not args.report_only:
        if args.pools:
            rows = merge_rows(rows, measure(args.pools, args.seed, args.encoder), key)
        if args.finetune:
            rows = merge_rows(rows, measure_finetune(args.finetune, args.seed), key)
    report(rows)


if __name__ == "__main__":
    main()
