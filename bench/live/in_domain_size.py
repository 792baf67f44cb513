"""Benchmark "in-domain size": how many in-domain lines a method needs.

The selection benchmark's task (the seven domains' train files as the pool, 35,000 lines; each classic
target's 5,000 lines selected, N = 5,000; precision = the target's train lines among the top N), with the
in-domain set cut to ``n`` lines: a seeded draw of ``n`` of the 500 lines of <D>.test.en (draw d: numpy's
default_rng(d), without replacement; n = 500 is the whole file, one draw). Each method at its product
defaults (``domainsift.get_selector(method, seed=0)``), seed 0, through the public API.

    python bench/live/in_domain_size.py [--methods cosine moore-lewis] [--sizes 10 25 50 100 250 500]
                                        [--draws 3] [--targets EMEA ...] [--report-only]

Rows are kept per (method, target, n, draw) and a rerun makes only the missing ones (``finetune`` takes
about a minute a row: its training grows with n, its pass over the pool does not).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _common import CLASSIC, ROOT, SEVEN, data_file, earlier_rows, merge_rows, write_results

WORK = ROOT / "bench" / "work" / "in_domain_size"
N = 5000
SIZES = (10, 25, 50, 100, 250, 500)


def key(r: dict) -> tuple:
    return (r["method"], r["target"], r["n"], r["draw"])


def run(methods, sizes, draws, targets, rows) -> list[dict]:
    import domainsift as ds
    from domainsift import __version__
    from domainsift.select import get_selector
    pool = ds.read_corpus([data_file(d, "train") for d in SEVEN])
    done = {key(r) for r in rows}
    WORK.mkdir(parents=True, exist_ok=True)
    for target in targets:
        truth = np.array([Path(f).name == Path(data_file(target, "train")).name for f, _ in pool.ids])
        full = ds.read_corpus([data_file(target, "test")])
        for method in methods:
            for n in sizes:
                for draw in range(1 if n >= len(full) else draws):
                    k = (method, target, n, draw)
                    if k in done:
                        continue
                    pick = (np.arange(len(full)) if n >= len(full) else
                            np.sort(np.random.default_rng(draw).choice(len(full), size=n, replace=False)))
                    ind = full[pick]
                    t0 = time.time()
                    sel = get_selector(method, seed=0, progress=False,
                                       **({} if method == "moore-lewis" else {"cache_dir": str(WORK / "cache")}))
                    sel.fit(ind, pool if sel.fit_uses_pool else None)
                    s = np.asarray(sel.score(pool), dtype=np.float64)
                    top = np.argsort(-s, kind="stable")[:N]
                    row = {"method": method, "target": target, "n": int(len(ind)), "draw": draw,
                           "precision": round(float(truth[top].mean()), 4), "seconds": round(time.time() - t0, 1),
                           "version": __version__}
                    print(row, flush=True)
                    rows = merge_rows(rows, [row], key)
                    report(rows)  # after every row: a killed run keeps what it made
    return rows


def report(rows: list[dict]) -> None:
    methods = list(dict.fromkeys(r["method"] for r in rows))
    sizes = sorted({r["n"] for r in rows})
    md = ["# How many in-domain lines a method needs", "",
          f"The selection benchmark's task (pool: the seven train files, 35,000 lines; N = {N:,} of each classic "
          "target; precision = its train lines among the top N) with the in-domain set cut to n lines: a seeded "
          "draw of n of the 500 lines of <D>.test.en (draws 0, 1, ...: numpy default_rng(draw), no replacement; "
          "n = 500 is the whole file). Each method at the product's defaults, seed 0. Mean precision over the "
          "five targets, each target's precision first averaged over its draws; in brackets the lowest and "
          "highest draw-averaged target.", "",
          "| method | " + " | ".join(f"n = {n}" for n in sizes) + " |",
          "|---|" + "---|" * len(sizes)]
    for m in methods:
        cells = []
        for n in sizes:
            per = {}
            for r in rows:
                if r["method"] == m and r["n"] == n:
                    per.setdefault(r["target"], []).append(r["precision"])
            if len(per) < len(CLASSIC):
                cells.append("-" if not per else f"({len(per)} targets)")
                continue
            means = [float(np.mean(v)) for v in per.values()]
            draws = max(len(v) for v in per.values())
            cells.append(f"{np.mean(means):.4f} [{min(means):.3f}, {max(means):.3f}]"
                         + (f" ({draws} draws)" if draws > 1 else ""))
        md.append(f"| {m} | " + " | ".join(cells) + " |")
    md += ["", "Every row (target, n, draw), with the version that made it:", "",
           "| method | target | n | draw | precision | seconds | version |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (methods.index(r["method"]), CLASSIC.index(r["target"]), r["n"], r["draw"])):
        md.append(f"| {r['method']} | {r['target']} | {r['n']} | {r['draw']} | {r['precision']:.4f} | "
                  f"{r['seconds']} | {r['version']} |")
    write_results("in_domain_size", {"rows": rows}, "\n".join(md) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--methods", nargs="+", default=["cosine", "moore-lewis"])
    ap.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    ap.add_argument("--draws", type=int, default=3, help="draws of each n < 500")
    ap.add_argument("--targets", nargs="+", default=CLASSIC, choices=CLASSIC)
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    rows = earlier_rows("in_domain_size")
    if not args.report_only:
        rows = run(args.methods, args.sizes, args.draws, args.targets, rows)
    report(rows)


if __name__ == "__main__":
    main()
