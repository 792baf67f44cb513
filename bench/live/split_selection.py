"""Benchmark "selection on the paper's split" (issue 46, item 6): the selection benchmark's default rows
on data cleaned as paper 000 cleaned its own (section 3.1, appendix A.2).

The shared data keep duplicates inside a train file and test sentences inside train (Tanzil 19, EMEA 12:
../shared/data/opus-multidomain/README.md). `domainsift split --across-domains` (the product's own
`split_corpus`) removes them: at most one pair per sentence within a domain's train, and no train pair
that shares a side with any domain's test. Then the selection benchmark's protocol on the cleaned files:
pool = the seven cleaned <D>.train.en; in-domain set = <D>.test.en (500 lines); select N_D = the size of
D's cleaned train file; precision = recall = the share of the selection from D's cleaned train file.
Rows: the product's defaults (cosine-default, finetune-default, moore-lewis) and paper 000's Moore–Lewis
(moore-lewis-paper), parameters pinned in bench/live/selection.py's METHODS, beside the same labels'
rows on the uncleaned data from bench/results/selection.json.

Runs are real run directories under bench/work/split_selection/<D>/<method>; finished ones are kept.

    python bench/live/split_selection.py [--methods ...] [--targets ...] [--seed S]
"""

from __future__ import annotations

import domainsift as ds
import argparse
import json
import shutil
import time

import numpy as np
from _common import CLASSIC, DATA, LANG, RESULTS, ROOT, SEVEN, write_results
from selection import CASCADE, METHODS

from domainsift import Cascade, read_corpus, Rule, run_select
from domainsift.jobs.evaluate import evaluate_run
from domainsift.jobs.split import SplitSettings, split_corpus

WORK = ROOT / "bench" / "work" / "split_selection"
SPLIT = WORK / "data"
DEFAULT_METHODS = ["cosine-default", "finetune-default", "moore-lewis", "moore-lewis-paper"]


def cleaned(domain: str, split: str) -> str:
    return str(SPLIT / f"{domain}.{split}.en")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", nargs="+", default=DEFAULT_METHODS, choices=list(METHODS))
    ap.add_argument("--targets", nargs="+", default=CLASSIC, choices=CLASSIC)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from domainsift.io import save_json

    if not (SPLIT / "report.json").exists():
        split_corpus(DATA, SPLIT, LANG, "en", SplitSettings(across_domains=True))
    split_report = json.loads((SPLIT / "report.json").read_text())
    pool = read_corpus([cleaned(d, "train") for d in SEVEN])
    sizes = {d: len(read_corpus([cleaned(d, "train")])) for d in SEVEN}
    for t in args.targets:
        in_domain = read_corpus([cleaned(t, "test")])
        for label in args.methods:
            name = label if args.seed == 0 else f"{label}-seed-{args.seed}"
            run_dir = WORK / t / name
            done = run_dir / "bench.json"
            if done.exists():
                continue
            method, params = METHODS[label]
            if run_dir.exists() and not (run_dir / ".resume").exists():
                shutil.rmtree(run_dir)
            t0 = time.time()
            cascade = Cascade(share=sizes[t] / len(pool)) if params.get(CASCADE) else None
            sig = ds.run(ds.RunSpec.single(method, in_domain, pool, run_dir, params={k: v for k, v in params.items() if k != CASCADE}, seed=args.seed, cascade=cascade)).signature
            run_select(run_dir, rule=Rule(top=sizes[t]))
            ev = evaluate_run(run_dir, [cleaned(t, "train")])
            row = {"target": t, "method": name, "base_method": label, "seed": args.seed, "N": sizes[t],
                   "precision": ev["precision"], "seconds": round(time.time() - t0, 1),
                   "signature": sig.get("signature")}
            save_json(done, row)
            print(f"{t:>14} {name:<24} N {sizes[t]}  precision {row['precision']:.3f}  {row['seconds']:>7.1f} s",
                  flush=True)
    report(len(pool), sizes, split_report)


def report(n_pool: int, sizes: dict, split_report: dict) -> None:
    rows = [json.loads(p.read_text()) for p in sorted(WORK.glob("*/*/bench.json"))]
    targets = [t for t in CLASSIC if any(r["target"] == t for r in rows)]
    methods = [m for m in list(METHODS) if any(r["method"] == m for r in rows)]
    cell = {(r["target"], r["method"]): r for r in rows}
    old = {(r["target"], r["method"]): r for r in json.loads((RESULTS / "selection.json").read_text())["rows"]}
    lines = ["# Selection on the paper's split (paper 000, section 3.1, on the shared data)", "",
             f"`domainsift split --across-domains` over the shared de-en data (within-domain duplicates and every "
             f"train pair sharing a side with any domain's test removed), then the selection benchmark: pool = the "
             f"seven cleaned <D>.train.en ({n_pool:,} lines); in-domain set = <D>.test.en (500 lines); N_D = D's "
             "cleaned train size; precision of the top N_D against the file of origin. 'before' is the same "
             "label's row on the uncleaned data (bench/results/selection.json: 35,000 lines, N = 5,000, with the "
             "version and machine that file names).", "",
             "| cleaned train lines | " + " | ".join(SEVEN) + " |", "|---|" + "---|" * len(SEVEN),
             "| | " + " | ".join(f"{sizes[d]:,}" for d in SEVEN) + " |", "",
             "| method | " + " | ".join(f"{t} (before → split)" for t in targets) + " | mean before | mean split |",
             "|---|" + "---|" * (len(targets) + 2)]
    for m in methods:
        cells, before, after = [], [], []
        for t in targets:
            r, o = cell.get((t, m)), old.get((t, m))
            if r:
                after.append(r["precision"])
            if o:
                before.append(o["precision"])
            cells.append(f"{o['precision']:.3f} → " if o else "- → ")
            cells[-1] += f"{r['precision']:.3f}" if r else "-"
        mb = f"{np.mean(before):.4f}" if len(before) == len(targets) else "-"
        ma = f"{np.mean(after):.4f}" if len(after) == len(targets) else "-"
        lines.append(f"| {m} | " + " | ".join(cells) + f" | {mb} | {ma} |")
    changes = []
    for m in methods:
        pairs = [(old[(t, m)]["precision"], cell[(t, m)]["precision"]) for t in targets
                 if (t, m) in old and (t, m) in cell]
        if len(pairs) == len(targets):
            changes.append(f"{m} {np.mean([b - a for a, b in pairs]):+.4f}")
    if changes:
        lines += ["", "Mean change of precision, split minus before: " + ", ".join(changes) + ". The before rows of "
                  "the encoder methods ran on another machine and version (bench/results/selection.md); "
                  "Moore–Lewis rows score alike across versions and machines."]
    lines += ["", "Seconds per target (scoring + selection + evaluation):", "",
              "| method | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets)]
    for m in methods:
        lines.append(f"| {m} | " + " | ".join(f"{cell[(t, m)]['seconds']:.0f}" if (t, m) in cell else "-"
                                              for t in targets) + " |")
    lines += ["", "The split's own report (counts before → after):", "", split_report.get("markdown", "").strip()
              if "markdown" in split_report else (SPLIT / "report.md").read_text().strip()]
    write_results("selection_split", {"rows": rows, "sizes": sizes, "split_settings": split_report["settings"]},
                  "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
