"""Quick comparison of Domain-Finetune settings on a stratified subsample of the selection pool.

The full selection benchmark scores 35,000 lines per target (about 5 minutes of
CPU per run); to compare training settings faster this uses 1,000 lines of each
domain's train file (seeded sample, 7,000 lines), the same in-domain sets
(<D>.test.en, 500 lines), selects N = 1,000 and reports precision. Results are
appended to bench/work/finetune_variants/results.jsonl as each (variant, target)
finishes, so a killed run resumes; the tables are rebuilt from that file.

    python bench/finetune_variants.py --variant ep5 --params '{"epochs": 5}' [--targets ...]
    python bench/finetune_variants.py --report-only
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _common import CLASSIC, ROOT, SEVEN, data_file, write_results

from domainsift.select import get_selector
from finetune_experimental import register

register()

WORK = ROOT / "bench" / "work" / "finetune_variants"
PER_DOMAIN = 1000
# every screen's parameters are --params over this base, written out in full: finetune as it stood when
# the screens ran (the paper's cut, 1/3), run through the benchmark's finetune-experimental, which also
# takes the options that left the product (pooling, rounds, head_init)
BASE = {"epochs": 10, "lr": 2e-5, "head_lr": 1e-3, "batch_size": 16, "negatives": "preranked", "neg_ratio": 1.0,
        "neg_cut": 1 / 3, "bucket": 20, "holdout": 0.1, "warmup": 0.1, "max_length": 128}
# rows run as "the library's defaults" without pinning them: their label no longer says what ran
STALE_PREFIX = "defaults-"


def subsample_pool(seed: int = 0):
    texts, labels = [], []
    for i, d in enumerate(SEVEN):
        lines = [line.rstrip("\n") for line in open(data_file(d, "train"), encoding="utf-8")]
        idx = np.random.default_rng(seed).choice(len(lines), PER_DOMAIN, replace=False)
        texts += [lines[k] for k in idx]
        labels += [i] * PER_DOMAIN
    return texts, np.array(labels)


def report() -> None:
    path = WORK / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    have = {(r["variant"], r["target"]) for r in rows}
    old = ROOT / "bench" / "results" / "finetune_variants.json"
    if old.exists():  # earlier screens (bench/work is not versioned), as they were measured
        rows += [r for r in json.loads(old.read_text())["rows"] if (r["variant"], r["target"]) not in have]
    dropped = sorted({r["variant"] for r in rows if r["variant"].startswith(STALE_PREFIX)})
    rows = [r for r in rows if not r["variant"].startswith(STALE_PREFIX)]
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    cell = {(r["variant"], r["target"]): r for r in rows}
    lines = ["# Domain-Finetune settings on a 7,000-line subsample of the selection pool", "",
             f"{PER_DOMAIN} seeded lines of each of the seven <D>.train.en files; in-domain set <D>.test.en; "
             f"N = {PER_DOMAIN}; precision of the top N. A screening run for training settings, not the "
             "benchmark figure (bench/results/selection.md is). Parameters not listed are BASE in "
             "bench/finetune_variants.py (finetune with the paper's cut, 1/3, as when the screens ran); "
             "a dash: that target was not run (a screen stopped early once its first targets had answered).", "",
             "| variant | parameters | " + " | ".join(CLASSIC) + " | mean |", "|---|---|" + "---|" * (len(CLASSIC) + 1)]
    for v in variants:
        vals = [cell.get((v, t), {}).get("precision") for t in CLASSIC]
        got = [x for x in vals if x is not None]
        mean = f"{np.mean(got):.3f}" if len(got) == len(CLASSIC) else "-"
        params = next(r["params"] for r in rows if r["variant"] == v)
        lines.append(f"| {v} | `{json.dumps(params)}` | " +
                     " | ".join(f"{x:.3f}" if x is not None else "-" for x in vals) + f" | {mean} |")
    if dropped:
        lines += ["", f"Left out: {', '.join(dropped)}: run as 'the library's defaults' of their day, not pinned."]
    lines += ["", "Seconds per target (training + scoring 7,000 lines, 2-core CPU, other jobs may have shared it):", "",
              "| variant | " + " | ".join(CLASSIC) + " |", "|---|" + "---|" * len(CLASSIC)]
    for v in variants:
        lines.append(f"| {v} | " + " | ".join(f"{cell[(v, t)]['seconds']:.0f}" if (v, t) in cell else "-"
                                              for t in CLASSIC) + " |")
    write_results("finetune_variants", {"per_domain": PER_DOMAIN, "rows": rows}, "\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", help="a name for this setting")
    ap.add_argument("--params", default="{}", help="FinetuneSelector parameters as JSON")
    ap.add_argument("--targets", nargs="+", default=CLASSIC, choices=CLASSIC)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    if args.report_only:
        return report()
    if not args.variant:
        ap.error("--variant is required")
    params = json.loads(args.params)
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / "results.jsonl"
    done = {(r["variant"], r["target"]) for r in map(json.loads, path.read_text().splitlines())} \
        if path.exists() else set()
    pool, labels = subsample_pool()
    for target in args.targets:
        if (args.variant, target) in done:
            continue
        j = SEVEN.index(target)
        in_domain = [line.rstrip("\n") for line in open(data_file(target, "test"), encoding="utf-8")]
        t0 = time.time()
        sel = get_selector("finetune-experimental", seed=args.seed, progress=False,
                           **{**BASE, **params}).fit(in_domain, pool)
        scores = sel.score(pool)
        top = np.argsort(-scores, kind="stable")[:PER_DOMAIN]
        row = {"variant": args.variant, "params": params, "target": target,
               "precision": round(float((labels[top] == j).mean()), 4), "seconds": round(time.time() - t0, 1)}
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)
    report()


if __name__ == "__main__":
    main()
