"""Benchmark "second stage" (issue 48, item 2): a frozen classifier on the first layers of the encoder,
between the cascade's student and its fine-tuned teacher, against the candidates the teacher must score.

The teacher: the default finetune's scores of a pool (seed 0, in-domain set <D>.test.en), as
bench/live/candidates.py saved them under bench/work/candidates/teacher/ (run that first). Every head is
fitted on the same seeded sample of 20,000 pool lines (60% of a smaller pool) scored by the teacher, with 0.18.0's rule (the
teacher's top 1.25 N and the in-domain set against every other sample line; logistic regression,
balanced classes, standardised features); everything is measured on the pool lines outside that sample
(lines no head was fitted on). For a selection of ``share`` of those lines (N), the guarantee is that the
teacher's candidates hold N of its top 1.25 N.

- **student**: the product's features (static token vectors distilled from MiniLM, their mean);
  ``needed``: the fewest of its top lines that hold the guarantee, as a share of the lines.
- **layer k**: the frozen default encoder's layer k, mean-pooled and L2-normalised (the layers above k
  are never run); ``alone``: what it needs ranking every line by itself; ``after the student``: the
  fewest of its top lines, among the student's top ``stage1`` lines, that hold the guarantee, where
  ``stage1`` is the student's own need times 1.2 (a plan's margin) -- the lines the fine-tuned teacher
  would then score.
- **cost**: milliseconds a line for layer k and for the whole encoder (the teacher's cost is the whole
  encoder's), on 2,000 of the student's top lines (the lines a second stage would see), same backend,
  one process, alternately, 2 rounds. The teacher's pass per pool line: ``stage1 x t_full`` today, and
  ``stage1 x t_k + stage2 x t_full`` with a second stage.

    python bench/archive/second_stage.py [--pools shared small large] [--layers 1 2 3] [--shares 0.01 0.05]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from _common import CLASSIC, ROOT, data_file, write_results  # noqa: E402
from student_heads import logistic  # noqa: E402  (the student's head, as student_heads.py fits it)

WORK = ROOT / "bench" / "work" / "candidates" / "teacher"
SAMPLE = 20000
SLACK = 0.25
MARGIN = 1.2
FIT_AT_MOST = 0.6  # of a pool smaller than the sample (the negatives-study pools): the rest is measured
TARGETS = {"shared": CLASSIC, "small": ["KDE4", "OpenSubtitles"], "large": ["KDE4", "OpenSubtitles"]}


def needed_among(rank: np.ndarray, allowed: np.ndarray, teacher: np.ndarray, share: float) -> float | None:
    """The fewest lines, best first by ``rank`` among the ``allowed`` ones, that hold N of the teacher's
    top 1.25 N (N: ``share`` of all lines), as a share of all lines; None when the allowed lines do not."""
    n = len(teacher)
    n_top = max(1, int(round(share * n)))
    top = np.zeros(n, bool)
    top[np.argsort(-teacher, kind="stable")[:int(np.ceil((1 + SLACK) * n_top))]] = True
    idx = np.flatnonzero(allowed)
    order = idx[np.argsort(-rank[idx], kind="stable")]
    hits = np.cumsum(top[order])
    if not len(hits) or hits[-1] < n_top:
        return None
    return float((np.searchsorted(hits, n_top) + 1) / n)


def unit(a):
    return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)


def main() -> None:
    from domainsift.embed import get_embedder, model_path
    from domainsift.embed.cache import default_cache_dir
    from domainsift.embed.static import distilled
    from domainsift.rundir import load_scores
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pools", nargs="+", default=["shared", "small", "large"])
    ap.add_argument("--layers", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--shares", nargs="+", type=float, default=[0.01, 0.05])
    args = ap.parse_args()
    cache = default_cache_dir()
    static = distilled(model_path("minilm"), None, progress=False)
    enc = {k: get_embedder("minilm", layer=k, cache_dir=cache, progress=False, normalize=False)
           for k in args.layers + [-1]}
    texts_of: dict[str, list[str]] = {}

    def line(f, ln):
        f = os.path.realpath(str(f))
        if f not in texts_of:
            texts_of[f] = Path(f).read_text(encoding="utf-8").splitlines()
        return texts_of[f][ln - 1]

    rows, costs = [], []
    for pool in args.pools:
        for target in TARGETS[pool]:
            run = load_scores(WORK / pool / target)
            texts = [line(f, ln) for f, ln in run.ids]
            t = np.asarray(run.scores, dtype=np.float64)
            n = len(t)
            ind = Path(data_file(target, "test")).read_text(encoding="utf-8").splitlines()
            perm = np.random.default_rng(0).permutation(n)
            k_sample = min(SAMPLE, int(FIT_AT_MOST * n))
            pick, unseen = np.sort(perm[:k_sample]), np.sort(perm[k_sample:])
            feats = {"student": (static.encode(texts, dtype=np.float64), static.encode(ind, dtype=np.float64))}
            for k in args.layers:
                feats[k] = (unit(enc[k].encode(texts).astype(np.float64)), unit(enc[k].encode(ind).astype(np.float64)))
            ts = t[pick]
            order = np.argsort(-ts, kind="stable")
            tu = t[unseen]
            for share in args.shares:
                wide = int(np.ceil((1 + SLACK) * max(1, int(round(share * k_sample)))))
                score = {name: logistic(x_in, x[pick], order[:wide], order[wide:], x[unseen])
                         for name, (x, x_in) in feats.items()}
                everything = np.ones(len(unseen), bool)
                s_need = needed_among(score["student"], everything, tu, share)
                stage1 = min(1.0, MARGIN * s_need)
                first = np.zeros(len(unseen), bool)
                first[np.argsort(-score["student"], kind="stable")[:int(np.ceil(stage1 * len(unseen)))]] = True
                row = {"pool": pool, "target": target, "share": share, "n_sample": k_sample, "n_unseen": int(len(unseen)),
                       "student": round(s_need, 4), "stage1": round(stage1, 4)}
                for k in args.layers:
                    alone = needed_among(score[k], everything, tu, share)
                    after = needed_among(score[k], first, tu, share)
                    row[f"layer{k}_alone"] = round(alone, 4)
                    row[f"layer{k}_after"] = None if after is None else round(after, 4)
                rows.append(row)
                print(row, flush=True)
            # cost, on the student's top 2,000 lines of the whole pool (the lines a second stage sees)
            s_all = logistic(feats["student"][1], feats["student"][0][pick], order[:wide], order[wide:],
                             feats["student"][0])
            sample = [texts[i] for i in np.argsort(-s_all, kind="stable")[:2000]]
            timing = {}
            for k in list(args.layers) + [-1]:
                raw = enc[k].embedder  # under the cache: time the encoder itself
                raw.encode(sample[:64])  # export / load before the clock
                timing[k] = []
            for _ in range(2):
                for k in timing:
                    t0 = time.perf_counter()
                    enc[k].embedder.encode(sample)
                    timing[k].append(time.perf_counter() - t0)
            costs.append({"pool": pool, "target": target,
                          **{("full" if k == -1 else f"layer{k}"): round(1000 * min(v) / len(sample), 3)
                             for k, v in timing.items()}})
            print(costs[-1], flush=True)
    mean = lambda key, g: float(np.mean([r[key] for r in g]))  # noqa: E731
    md = ["# A second stage between the cascade's student and its teacher: frozen first layers", "",
          "Teacher: the default finetune (seed 0) over each pool; every head fitted on the same seeded "
          f"{SAMPLE:,}-line sample (60% of a smaller pool) with the teacher's top 1.25 N against the rest; measured on the lines outside "
          "the sample. **student**: the fewest of the student's top lines that hold N of the teacher's top "
          f"1.25 N (share of the lines); **stage 1**: that times {MARGIN} (a plan's margin); **layer k alone**: "
          "the same need for the frozen layer-k classifier ranking every line; **after**: the fewest of its top "
          "lines among the student's stage 1 that hold it (the lines the fine-tuned teacher would score). "
          "Means over the pool's targets.", "",
          "| pool | share | targets | student | stage 1 | " + " | ".join(
              f"layer {k} alone | layer {k} after" for k in args.layers) + " |",
          "|---|---|---|---|---|" + "---|---|" * len(args.layers)]
    for pool in args.pools:
        for share in args.shares:
            g = [r for r in rows if r["pool"] == pool and r["share"] == share]
            cells = []
            for k in args.layers:
                after = [r[f"layer{k}_after"] for r in g]
                cells += [f"{mean(f'layer{k}_alone', g):.4f}",
                          "not held" if None in after else f"{np.mean(after):.4f}"]
            md.append(f"| {pool} | {share:g} | {len(g)} | {mean('student', g):.4f} | {mean('stage1', g):.4f} | "
                      + " | ".join(cells) + " |")
    md += ["", "Cost, ms a line on the student's top 2,000 lines of each pool (best of 2 rounds), and the "
           "teacher's pass per 1,000 pool lines at a 1% selection (means over targets): today "
           "stage 1 x full; with a second stage, stage 1 x layer k + after x full.", "",
           "| layer | ms a line | vs full | teacher's pass per 1,000 pool lines, shared pool (ms) |", "|---|---|---|---|"]
    full = float(np.mean([c["full"] for c in costs]))
    g = [r for r in rows if r["pool"] == "shared" and r["share"] == args.shares[0]]
    if g:
        md.append(f"| full (today) | {full:.2f} | 1.00 | {1000 * mean('stage1', g) * full:.0f} |")
    for k in args.layers:
        c = float(np.mean([x[f"layer{k}"] for x in costs]))
        cell = "-"
        if g and None not in [r[f"layer{k}_after"] for r in g]:
            cell = f"{1000 * (mean('stage1', g) * c + mean(f'layer{k}_after', g) * full):.0f}"
        md.append(f"| layer {k} | {c:.2f} | {c / full:.2f} | {cell} |")
    write_results("second_stage", {"sample": SAMPLE, "margin": MARGIN, "rows": rows, "costs": costs},
                  "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
