"""A test set kept out of the selection (``select --exclude``): how many of its lines a selection walks past,
on the shared pool and on the pool that holds the test file itself (``--pool $D/*.en``, the case the overlap
warning is for).

    python bench/live/exclude.py          # writes bench/results/exclude.md

Method: Moore-Lewis at the product's defaults (seconds a run; its signature in the .json), seed 0. In-domain set and excluded
set: <D>.test.en (500 lines). Pools: "shared", the seven domains' <D>.train.en (35,000 lines); "with
its test file", the same plus <D>.test.en. Select N = 5,000. Columns: the pool's lines that repeat a test
line (after normalising, as ``--dedup exact`` compares: counted over the whole pool with the product's
``Exclusion``), the test lines among the plain selection, the lines the excluding selection passed over,
and precision against the oracle (<D>.train.en) without and with ``--exclude``. Only the product's
public API (run, RunSpec, run_select, evaluate_run, Exclusion).
"""

from __future__ import annotations

import domainsift as ds
import argparse
import json
import time

from _common import ROOT, SEVEN, data_file, read_lines, write_results

WORK = ROOT / "bench" / "work" / "exclude"
N = 5000
POOLS = {"shared": "shared", "with-test": "with its test file"}


def main() -> None:
    from domainsift import Rule, run_select
    from domainsift.dedup import Exclusion
    from domainsift.io.corpus import read_corpus
    from domainsift.jobs.evaluate import evaluate_run
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", nargs="+", default=SEVEN, choices=SEVEN)
    args = ap.parse_args()
    rows = []
    train = [data_file(d, "train") for d in SEVEN]
    for pool_name in POOLS:
        for target in args.targets:
            test = data_file(target, "test")
            run_dir = WORK / pool_name / target
            files = train + ([test] if pool_name == "with-test" else [])
            pool = read_corpus(files)
            in_domain = read_corpus([test])
            sig = ds.run(ds.RunSpec.single("moore-lewis", in_domain, pool, run_dir / "scores", params={"progress": False}, seed=0, overwrite=True)).signature
            plain = run_select(run_dir / "scores", run_dir / "plain", rule=Rule(top=N), overwrite=True)
            t = time.time()
            ex = run_select(run_dir / "scores", run_dir / "exclude", rule=Rule(top=N, exclude=in_domain), overwrite=True)
            seconds = time.time() - t
            exclusion = Exclusion.of(in_domain)
            repeating = sum(exclusion.matches(x) for x in pool.texts)
            test_lines = set(read_lines(test))
            leaked = sum(x in test_lines for x in read_lines(plain["outputs"][0]))
            leaked_ex = sum(exclusion.matches(x) for x in read_lines(ex["outputs"][0]))
            gold = [data_file(target, "train")]
            row = {"pool": pool_name, "target": target, "order": sig["order"], "signature": sig["signature"], "n_pool": len(pool), "pool_lines_repeating": repeating,
                   "test_lines_selected": leaked, "test_lines_selected_with_exclude": leaked_ex,
                   "lines_excluded": ex["exclude"]["lines_excluded"], "n_selected": ex["n_selected"],
                   "precision": round(evaluate_run(run_dir / "plain", gold)["precision"], 4),
                   "precision_with_exclude": round(evaluate_run(run_dir / "exclude", gold)["precision"], 4),
                   "select_seconds": round(seconds, 2), "plain_n_selected": plain["n_selected"]}
            rows.append(row)
            print(json.dumps(row))
    table = ["# A test set kept out of the selection (`select --exclude`)", "",
             f"Moore-Lewis (order {rows[0]['order']}, the product's defaults), in-domain and excluded set <D>.test.en (500 lines), N = {N:,}, seed 0. "
             "Pool lines repeating a test line: after normalising (case, punctuation, spaces), over the whole "
             "pool. Test lines selected: lines of the selection equal to one of <D>.test.en's (without "
             "`--exclude`: verbatim; with it: after normalising). Passed over: the lines `--exclude` left out "
             "while the selection walked to its 5,000 lines. Precision against <D>.train.en; the "
             "selection's seconds with `--exclude` (reading the selected lines, comparing them).", "",
             "| pool | target | pool lines | pool lines repeating a test line | test lines selected | "
             "with --exclude | passed over | precision | with --exclude | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        table.append(f"| {POOLS[r['pool']]} | {r['target']} | {r['n_pool']:,} | {r['pool_lines_repeating']} | "
                     f"{r['test_lines_selected']} | {r['test_lines_selected_with_exclude']} | {r['lines_excluded']} | "
                     f"{r['precision']:.4f} | {r['precision_with_exclude']:.4f} | {r['select_seconds']:.2f} |")
    write_results("exclude", {"rows": rows}, "\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
