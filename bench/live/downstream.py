"""Benchmark "downstream": does the selection help a model of the target domain?

For each of the five classic targets of the "selection" benchmark, a 4-gram
Kneser–Ney LM (VariKN) is trained on each method's N=5,000 selection (the run
directories that bench/live/selection.py leaves under bench/work/selection/), on
all 35,000 pool lines, and on the oracle <D>.train.en, and measured by
perplexity and OOV rate on <D>.test.en. The "random" method's selection is the
random 5,000 reference. Then the 7x7 cross-domain matrix (each domain's LM on
each domain's test), the cosine similarity of the domains' centroids under the
default encoder, and their Pearson correlation, with the scatter plot.

    python bench/live/selection.py && python bench/live/downstream.py
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from _common import CLASSIC, RESULTS, ROOT, SEVEN, data_file, write_results

from domainsift.jobs.downstream import cross_domain, format_matrix, run_downstream
from domainsift.embed import EmbedConfig

SEL = ROOT / "bench" / "work" / "selection"
METHOD_ORDER = ["cosine", "finetune", "finetune-random-negatives", "moore-lewis", "dsir", "random"]
# rows whose label no longer names what was run; the report leaves them out until they are rerun
STALE = {"finetune": "run when finetune's default cut was the paper's 1/3; the label now means the 0.2 cut"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--order", type=int, default=4)
    ap.add_argument("--targets", nargs="+", default=CLASSIC, choices=CLASSIC)
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the tables from bench/results/downstream.json (stale rows left out)")
    args = ap.parse_args()
    if args.report_only:
        old = json.loads((RESULTS / "downstream.json").read_text())
        return report(old["targets"], old["crossdomain"], old["order"])

    all_pool = ROOT / "bench" / "work" / "pool.all.en"
    all_pool.parent.mkdir(parents=True, exist_ok=True)
    with open(all_pool, "w", encoding="utf-8") as out:
        for d in SEVEN:
            with open(data_file(d, "train"), encoding="utf-8") as fh:
                shutil.copyfileobj(fh, out)

    per_target = {}
    for t in args.targets:
        runs = [str(SEL / t / m) for m in METHOD_ORDER if (SEL / t / m / "selected.ids.tsv").exists()]
        res = run_downstream(runs, data_file(t, "test"), [("all 35k", str(all_pool)),
                                                          ("oracle", data_file(t, "train"))], order=args.order)
        for r, d in zip(res["rows"], runs + [None, None]):
            if d:
                r["name"] = Path(d).name  # the benchmark's method label (two finetune variants)
        per_target[t] = res["rows"]
        print(t, [(r["name"], round(r["perplexity"], 1)) for r in res["rows"]], flush=True)

    emb = EmbedConfig(progress=False).build()
    cd = cross_domain([(d, data_file(d, "train")) for d in SEVEN], [(d, data_file(d, "test")) for d in SEVEN],
                      order=args.order, embedder=emb, out_dir=ROOT / "bench" / "work" / "crossdomain")
    RESULTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cd["plot"], RESULTS / "crossdomain.png")
    print(format_matrix(cd))
    report(per_target, cd, args.order)


def report(per_target: dict, cd: dict, order: int) -> None:
    dropped = sorted({r["name"] for rows in per_target.values() for r in rows if r["name"] in STALE})
    per_target = {t: [r for r in rows if r["name"] not in STALE] for t, rows in per_target.items()}
    names = []
    for rows in per_target.values():
        for r in rows:
            if r["name"] not in names:
                names.append(r["name"])
    cell = {(t, r["name"]): r for t, rows in per_target.items() for r in rows}
    lines = ["# Downstream check: LM perplexity on held-out in-domain text", "",
             f"A {order}-gram Kneser–Ney LM (VariKN) trained on each selection of N = 5,000 lines "
             "(bench/live/selection.py), on all 35,000 pool lines, and on the oracle <D>.train.en; perplexity on "
             "<D>.test.en (OOV tokens left out, OOV rate in brackets). Lower is better.", "",
             "| training data | " + " | ".join(per_target) + " |", "|---|" + "---|" * len(per_target)]
    for n in names:
        lines.append(f"| {n} | " + " | ".join(
            f"{cell[(t, n)]['perplexity']:.1f} ({cell[(t, n)]['oov_rate']:.3f})" if (t, n) in cell else "-"
            for t in per_target) + " |")
    lines += [f"\nLeft out: {n} ({STALE[n]})." for n in dropped]
    lines += ["", "Why an n-gram LM as the judge: it is Moore & Lewis's own criterion (cross-entropy of in-domain "
              "text under a model of the selected data), needs no GPU and runs in seconds; an MT model, as in the "
              "paper's Table 6, would measure translation quality too but costs hours per selection. Perplexities "
              "of models with different vocabularies are compared together with their OOV rates.", "",
              "## Cross-domain matrix (analog of the paper's Table 4)", "",
              "Rows: the domain whose <D>.train.en trained the LM; columns: the <D>.test.en it is measured on.", "",
              "| LM \\ test | " + " | ".join(cd["domains"]) + " |", "|---|" + "---|" * len(cd["domains"])]
    for d, row in zip(cd["domains"], cd["perplexity"]):
        lines.append(f"| {d} | " + " | ".join(f"{v:.0f}" for v in row) + " |")
    lines += ["", "Cosine similarity of the domains' centroids (all-MiniLM-L6-v2, first 2,000 train lines):", "",
              "| | " + " | ".join(cd["domains"]) + " |", "|---|" + "---|" * len(cd["domains"])]
    for d, row in zip(cd["domains"], cd["centroid_similarity"]):
        lines.append(f"| {d} | " + " | ".join(f"{v:.2f}" for v in row) + " |")
    lines += ["", f"Pearson correlation between centroid similarity and log perplexity over the 42 off-diagonal "
              f"pairs (analog of the paper's Figure 4): **r = {cd['pearson_similarity_vs_log_perplexity']:.3f}** "
              "(negative: more similar domains give lower perplexity; the paper correlates similarity with BLEU, "
              "so its sign is positive, 0.81). Plot: `bench/results/crossdomain.png`."]
    write_results("downstream", {"order": order, "targets": per_target, "crossdomain": cd},
                  "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
