"""The supervised ceiling of the selection benchmark (issue 32, item 1): the product's own encoder
fine-tuned as a classifier with *gold* labels, so that "finetune selects at 0.86" can be called good
or poor.

Split. The 35,000-line pool (<D>.train.en of the seven domains) is cut in two halves by a seeded hash
of each line's text, so that no text is in both (the files repeat short lines); each half holds about
2,500 lines of every domain. Half A trains, half B is scored; the benchmark's protocol scaled to half
B: select as many lines as half B holds of the target (about 2,500, the benchmark's N = 5,000 of
35,000 scaled to the half), precision = the share from the target's file (= recall).

Classifier. `finetune` exactly as the product runs it (its defaults: all-MiniLM-L6-v2 int8, frozen
embeddings, lr 2e-5, head 1e-3, batches of 16 bucketed by length, 10% warm-up, 10% of positives held
out for the best epoch), but with the gold labels of half A: the target's 2,500 lines as the in-domain
set and the other six domains' 15,000 lines as the pool its negatives are drawn from (so every
negative is truly out of domain). --epochs (default 3) gives it about 1.5 times the steps of the
product's 10 epochs on 500 + 500 lines. Two seeds (the classifier's; the split stays fixed).

Beside it, on the same half B, the unsupervised methods as the product runs them with the
benchmark's in-domain set (<D>.test.en, 500 lines) and half B as the pool: finetune (default) and
cosine; so the gap is measured on the same lines.

    python bench/live/ceiling.py [--targets EMEA ...] [--seeds 0 1] [--epochs 3] [--methods gold-finetune ...]

Finished (target, method, seed) runs are kept in bench/work/ceiling/<target>/<method>-<seed>.json,
so a killed run resumes; the table is rebuilt from them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

import numpy as np
from _common import apply_threads, threads_option, CLASSIC, ROOT, SEVEN, data_file, write_results

from domainsift.io import save_json
from domainsift.io.corpus import read_corpus
from domainsift.select import get_selector

WORK = ROOT / "bench" / "work" / "ceiling"
SPLIT_SEED = 0


def halves(split_seed: int) -> tuple[list[str], list[str], list[str], list[str]]:
    """(texts A, domains A, texts B, domains B): every line goes to the half its text's seeded hash
    picks, so that no text is in both halves (the files repeat short lines: "Yes.", menu items),
    across domains too; each domain's half holds about 2,500 lines."""
    def half_of(text: str) -> int:
        return hashlib.blake2b(f"{split_seed}\t{text}".encode(), digest_size=8).digest()[0] & 1
    ta, da, tb, db = [], [], [], []
    for d in SEVEN:
        for t in read_corpus(data_file(d, "train")).texts:
            texts, domains = (ta, da) if half_of(t) == 0 else (tb, db)
            texts.append(t)
            domains.append(d)
    return ta, da, tb, db


def precision_at(scores: np.ndarray, gold: np.ndarray, n: int) -> float:
    top = np.argsort(-scores, kind="stable")[:n]
    return float(gold[top].mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", nargs="+", default=CLASSIC, choices=CLASSIC)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--epochs", type=int, default=3, help="epochs of the gold-label classifier")
    ap.add_argument("--methods", nargs="+", default=["gold-finetune", "finetune", "cosine"],
                    choices=["gold-finetune", "finetune", "cosine"])
    threads_option(ap)
    args = ap.parse_args()
    apply_threads(args)
    ta, da, tb, db = halves(SPLIT_SEED)
    da, db = np.array(da), np.array(db)
    for target in args.targets:
        gold_b = (db == target).astype(np.float64)
        for method in args.methods:
            for seed in (args.seeds if method != "cosine" else [0]):
                out = WORK / target / f"{method}-{seed}.json"
                if out.exists():
                    print(f"{target:>14} {method:<14} seed {seed} done before: "
                          f"{json.loads(out.read_text())['precision']:.4f}", flush=True)
                    continue
                t0 = time.time()
                if method == "gold-finetune":
                    sel = get_selector("finetune", seed=seed, epochs=args.epochs, progress=False)
                    sel.fit([t for t, d in zip(ta, da) if d == target], [t for t, d in zip(ta, da) if d != target])
                else:
                    sel = get_selector(method, progress=False, **({"seed": seed} if method == "finetune" else {}))
                    sel.fit(read_corpus(data_file(target, "test")).texts, tb)
                fit_s = time.time() - t0
                scores = np.asarray(sel.score(tb), dtype=np.float64)
                row = {"target": target, "method": method, "seed": seed,
                       "n": int(gold_b.sum()), "precision": round(precision_at(scores, gold_b, int(gold_b.sum())), 4),
                       "fit_seconds": round(fit_s, 1), "seconds": round(time.time() - t0, 1),
                       "params": sel.signature_params()}
                save_json(out, row)
                print(f"{target:>14} {method:<14} seed {seed} precision {row['precision']:.4f} "
                      f"({row['seconds']:.0f} s)", flush=True)
    report(args)


def report(args) -> None:
    rows = [json.loads(p.read_text()) for p in sorted(WORK.glob("*/*.json"))]
    noise_file = ROOT / "bench" / "results" / "label_noise.json"
    noise = json.loads(noise_file.read_text()) if noise_file.exists() else None
    methods = [m for m in ("gold-finetune", "finetune", "cosine") if any(r["method"] == m for r in rows)]
    targets = [t for t in CLASSIC if any(r["target"] == t for r in rows)]
    head = {"gold-finetune": "fine-tuned with gold labels (the ceiling)", "finetune": "finetune (the product)",
            "cosine": "cosine (the product)"}
    md = ["# The supervised ceiling of the selection benchmark", "",
          "The product's finetune (all-MiniLM-L6-v2, its defaults) trained with *gold* labels on half A of "
          "the 35,000-line pool (the target's 2,500 lines against the other domains' 15,000), scored on half B "
          f"(about 17,500 lines, 2,500 a domain, split by a seeded hash of the text so that no text is in both "
          f"halves; split seed {SPLIT_SEED}); precision of the top n = recall (n: half B's target lines). "
          f"Gold epochs: {args.epochs}. The product's own finetune and cosine on the same half B, with the "
          "benchmark's in-domain set (<D>.test.en, 500 lines) and half B as their pool. Mean over the seeds "
          "run (cosine has none). The gold rows: `--methods gold-finetune --seeds 0 1`; the product's: "
          "`--methods finetune cosine --seeds 0`. Each row's seconds (bench/results/ceiling.json) are one process of "
          "--threads 1 beside another benchmark's: not timings.", "",
          "| method | seeds | " + " | ".join(targets) + " | mean |", "|---|---|" + "---|" * (len(targets) + 1)]
    summary = {}
    for m in methods:
        per = {t: [r["precision"] for r in rows if r["method"] == m and r["target"] == t] for t in targets}
        if not all(per.values()):
            continue
        seeds = sorted({r["seed"] for r in rows if r["method"] == m})
        means = {t: float(np.mean(v)) for t, v in per.items()}
        summary[m] = {"per_target": means, "mean": float(np.mean(list(means.values()))), "seeds": seeds}
        md.append(f"| {head[m]} | {','.join(map(str, seeds))} | " + " | ".join(f"{means[t]:.3f}" for t in targets)
                  + f" | {summary[m]['mean']:.4f} |")
    if noise:
        by = {r["target"]: r for r in noise["rows"]}
        md += ["", "Label noise (`bench/results/label_noise.md`, the whole pool): the target's lines whose text "
               "is in another domain's file too (normalised: lower-cased, punctuation stripped), and of "
               "finetune's wrong selections (N = 5,000) the share whose text the target's own file holds.", "",
               "| | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets),
               "| lines shared with another domain | " + " | ".join(
                   f"{by[t]['shared_normalised'] / by[t]['lines']:.1%}" for t in targets) + " |",
               "| wrong selections that are in-domain text | " + " | ".join(
                   f"{by[t]['wrong_in_target_normalised'] / max(by[t]['wrong'], 1):.1%}" for t in targets) + " |"]
    write_results("ceiling", {"rows": rows, "summary": summary, "split_seed": SPLIT_SEED,
                              "epochs": args.epochs}, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
