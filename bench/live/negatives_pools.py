"""Benchmark "negatives on three pools": which default negatives for Domain-Finetune?

Pre-ranked negatives (from below the cut, 0.2, in the cosine ranking) protect the
classifier from training on in-domain lines labelled negative; random negatives
(the positive-unlabeled ablation) keep the order of p(in-domain | x) but hold the
target's own lines in proportion to its share of the pool. The shared 35,000-line
pool has the target at 1/7 (14.3%). Two more pools, built from the same shared
files, move that share:

- ``large``: the target a large share: 2,000 of its train lines + 800 of each of the
  six other domains (6,800 lines, 29.4% target); N = 2,000;
- ``small``: the target a small share: 200 of its train lines + 1,600 of each of the
  six others (9,800 lines, 2.0% target); N = 200.

Lines are a seeded sample (pool seed 0, fixed) of each file's train lines, kept in
file order, so that no pool is one film or one document. The in-domain set is
<D>.test.en (500 lines), as in the selection benchmark; precision = recall.
Each (pool, target, negatives, seed) is one real run directory made by the
library's own score / select / evaluate under bench/work/negatives_pools/; finished
runs are kept, so a killed benchmark resumes.

The shared pool's rows are read from bench/results/selection.json (``finetune`` and
``finetune-defaults-random-negatives``, seeds 0-4), which bench/live/selection.py made.

    python bench/live/negatives_pools.py [--pools large small] [--targets KDE4 ...] [--seeds 0 1]
"""

from __future__ import annotations

import domainsift as ds
import argparse
import json
import subprocess
import time
from pathlib import Path

import numpy as np
from _common import CLASSIC, RESULTS, ROOT, SEVEN, data_file, write_results

WORK = ROOT / "bench" / "work" / "negatives_pools"
POOL_SEED = 0
# pool -> (target lines, lines of each other domain); N = the target's lines
POOLS = {"large": (2000, 800), "small": (200, 1600)}
CHOICES = {"cut-0.2": {"negatives": "preranked", "neg_cut": 0.2},
           "random": {"negatives": "random"}}
# the shared pool's rows of the same two choices, by bench/live/selection.py's labels
# (finetune and finetune-neg-cut-0.2 pin the same setting: bench/live/selection.py's seed study pools them)
SHARED_LABELS = {"cut-0.2": ("finetune", "finetune-neg-cut-0.2"),
                 "random": ("finetune-defaults-random-negatives", "finetune-default")}


def build_pool(name: str, target: str) -> tuple[list[str], str, int]:
    """Write the pool's files (seeded samples of the shared train files) and return
    (files, the target's file, N)."""
    n_target, n_other = POOLS[name]
    out = WORK / "data" / f"{name}-{target}"
    files, target_file = [], None
    for d in SEVEN:
        path = out / f"{d}.en"
        files.append(str(path))
        if d == target:
            target_file = str(path)
        if path.exists():
            continue
        lines = Path(data_file(d, "train")).read_text(encoding="utf-8").splitlines()
        k = n_target if d == target else n_other
        keep = np.sort(np.random.default_rng(POOL_SEED).choice(len(lines), size=k, replace=False))
        from domainsift.io.corpus import write_lines
        write_lines(path, (lines[i] for i in keep))
    return files, target_file, n_target


def run_one(pool_name: str, target: str, choice: str, seed: int) -> dict:
    from domainsift.io import save_json
    from domainsift.io.corpus import read_corpus
    from domainsift.jobs.evaluate import evaluate_run
    from domainsift import Rule, run_select

    run_dir = WORK / "runs" / pool_name / target / f"{choice}-seed-{seed}"
    done = run_dir / "bench.json"
    if done.exists():
        return json.loads(done.read_text())
    files, target_file, n = build_pool(pool_name, target)
    pool = read_corpus(files)
    in_domain = read_corpus([data_file(target, "test")])
    t0 = time.time()
    sig = ds.run(ds.RunSpec.single("finetune", in_domain, pool, run_dir, params=dict(CHOICES[choice], progress=False), seed=seed)).signature
    run_select(run_dir, rule=Rule(top=n))
    ev = evaluate_run(run_dir, [target_file])
    row = {"pool": pool_name, "target": target, "choice": choice, "seed": seed, "n_pool": len(pool),
           "target_share": round(n / len(pool), 4), "N": n, "precision": ev["precision"],
           "seconds": round(time.time() - t0, 1), "params": CHOICES[choice],
           "signature": sig.get("signature"), "commit": _commit()}
    save_json(done, row)
    return row


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def shared_rows(targets: list[str]) -> list[dict]:
    """The shared pool's rows of both choices from bench/results/selection.json."""
    path = RESULTS / "selection.json"
    if not path.exists():
        return []
    out, seen = [], set()
    for r in json.loads(path.read_text())["rows"]:
        for choice, labels in SHARED_LABELS.items():
            key = (choice, r["target"], r.get("seed", 0))
            if r["target"] in targets and r.get("base_method", r["method"]) in labels and key not in seen:
                seen.add(key)
                out.append({"pool": "shared", "target": r["target"], "choice": choice, "seed": r.get("seed", 0),
                            "n_pool": 35000, "target_share": round(5000 / 35000, 4), "N": 5000,
                            "precision": r["precision"], "source": "bench/results/selection.json"})
    return out


def report(targets: list[str]) -> None:
    rows = [json.loads(p.read_text()) for p in sorted(WORK.glob("runs/*/*/*/bench.json"))]
    rows = [r for r in rows if r["target"] in targets] + shared_rows(targets)
    pools = [p for p in ("shared", "large", "small") if any(r["pool"] == p for r in rows)]
    lines = ["# Domain-Finetune negatives on three pools: the cut (0.2) against random negatives", "",
             "Pools: shared = <D>.train.en of the seven domains (35,000 lines, target 14.3%, N = 5,000; rows from "
             "bench/results/selection.json); large = 2,000 target lines + 800 of each other domain (target 29.4%, "
             "N = 2,000); small = 200 target lines + 1,600 of each other domain (target 2.0%, N = 200). "
             "In-domain set <D>.test.en (500 lines); finetune at its defaults otherwise (10 epochs of batch 16). "
             "Precision (= recall) of the top N. Each cell: mean over the seeds run (their number in brackets).", "",
             "| pool | target | cut 0.2 | random | random - cut |", "|---|---|---|---|---|"]
    summary = {}
    for p in pools:
        for t in targets:
            cells = {}
            for c in CHOICES:
                v = [r["precision"] for r in rows if (r["pool"], r["target"], r["choice"]) == (p, t, c)]
                cells[c] = v
            if not cells["cut-0.2"] and not cells["random"]:
                continue
            # compare only seeds both choices have run
            seeds = sorted({r["seed"] for r in rows if (r["pool"], r["target"], r["choice"]) == (p, t, "cut-0.2")}
                           & {r["seed"] for r in rows if (r["pool"], r["target"], r["choice"]) == (p, t, "random")})
            fmt = lambda v: f"{np.mean(v):.4f} ({len(v)})" if v else "-"  # noqa: E731
            diff = "-"
            if seeds:
                paired = [next(r["precision"] for r in rows if (r["pool"], r["target"], r["choice"], r["seed"])
                               == (p, t, "random", s))
                          - next(r["precision"] for r in rows if (r["pool"], r["target"], r["choice"], r["seed"])
                                 == (p, t, "cut-0.2", s)) for s in seeds]
                diff = f"{np.mean(paired):+.4f}"
                summary.setdefault(p, []).extend(paired)
            lines.append(f"| {p} | {t} | {fmt(cells['cut-0.2'])} | {fmt(cells['random'])} | {diff} |")
    lines += ["", "Mean paired difference (random - cut 0.2) per pool, over targets and seeds both choices ran:", "",
              "| pool | mean difference | pairs |", "|---|---|---|"]
    for p, v in summary.items():
        lines.append(f"| {p} | {np.mean(v):+.4f} | {len(v)} |")
    every = shared_rows(CLASSIC)
    if every:
        means = {c: np.mean([r["precision"] for r in every if r["choice"] == c]) for c in CHOICES}
        n = {c: len({r["seed"] for r in every if r["choice"] == c}) for c in CHOICES}
        lines += ["", f"The shared pool on all five classic targets (bench/results/selection.json): cut 0.2 "
                  f"{means['cut-0.2']:.4f} over seeds 0-{n['cut-0.2'] - 1}, random {means['random']:.4f} over seeds "
                  f"0-{n['random'] - 1} ({means['random'] - means['cut-0.2']:+.4f})."]
    write_results("negatives_pools", {"pools": POOLS, "pool_seed": POOL_SEED, "choices": CHOICES, "rows": rows,
                                      "mean_difference": {p: float(np.mean(v)) for p, v in summary.items()}},
                  "\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pools", nargs="+", default=list(POOLS), choices=list(POOLS))
    ap.add_argument("--targets", nargs="+", default=["KDE4", "OpenSubtitles"], choices=CLASSIC)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    if not args.report_only:
        for seed in args.seeds:
            for pool in args.pools:
                for target in args.targets:
                    for choice in CHOICES:
                        r = run_one(pool, target, choice, seed)
                        print(f"{pool:>6} {target:>14} {choice:>8} seed {seed}: precision {r['precision']:.4f}  "
                              f"({r['seconds']} s)", flush=True)
    report(args.targets)


if __name__ == "__main__":
    main()
