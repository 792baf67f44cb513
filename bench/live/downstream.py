"""Benchmark "downstream": does the selection help a model of the target domain? Judged on text no
method has seen.

For each of the five classic targets D, <D>.test.en is cut in two by a seeded hash of each line
(:func:`halves`; equal lines fall on the same side): the *query* half is the in-domain set every method
selects with, the *judge* half measures the result, minus any judge line that also occurs in the pool
(a selection could otherwise win by picking the judge's own sentences). Each method of the
which-method table (labels and parameters pinned in bench/live/selection.py's METHODS and COMBOS, the
product's defaults included, the cascade too) selects N = 5,000 lines of the 35,000-line pool with the
query half; a 4-gram Kneser–Ney LM (VariKN) trained on each selection, on all 35,000 pool lines and on
the oracle <D>.train.en is measured by perplexity and OOV rate on the judge half. Precision of each
selection against the file of origin is reported beside it. Then the 7x7 cross-domain matrix (each
domain's LM on each domain's test), the cosine similarity of the domains' centroids under the default
encoder, and their Pearson correlation, with the scatter plot.

Runs are real run directories under bench/work/downstream/<D>/<method>, made through the library's
public API (run, RunSpec, run_select, combine_runs, evaluate_run); finished ones are kept, so a killed
benchmark resumes.

    python bench/live/downstream.py [--methods ...] [--targets ...] [--seed S]
"""

from __future__ import annotations

import domainsift as ds
import argparse
import hashlib
import json
import shutil
import time
from pathlib import Path

import numpy as np
from _common import CLASSIC, RESULTS, ROOT, SEVEN, data_file, write_results
from selection import CASCADE, COMBOS, METHODS, N, dsir_run

from domainsift import Cascade, read_corpus, Rule, run_select
from domainsift.embed import EmbedConfig
from domainsift.jobs.combine import combine_runs
from domainsift.jobs.downstream import cross_domain, format_matrix, run_downstream
from domainsift.jobs.evaluate import evaluate_run

WORK = ROOT / "bench" / "work" / "downstream"
# the which-method table's methods at the product's defaults, the cascade, Moore–Lewis both ways, the
# references; combinations after their members
DEFAULT_METHODS = ["cosine-default", "finetune-default", "cascade-finetune", "student", "moore-lewis",
                   "moore-lewis-paper", "random", "dsir", "finetune-default+moore-lewis",
                   "cosine-default+moore-lewis"]


def halves(target: str, out: Path, pool_lines: set, seed: int = 0) -> dict:
    """Cut <target>.test.en into a query half and a judge half by a seeded hash of each line (the same
    line always falls on the same side, so no sentence is in both); judge lines that also occur in the
    pool (``pool_lines``) are dropped. Writes out/query.en and out/judge.en; returns the counts."""
    query, judge, in_pool = [], [], 0
    with open(data_file(target, "test"), encoding="utf-8") as fh:
        for line in fh:
            text = line.rstrip("\n")
            side = hashlib.sha256(f"{seed}\t{text}".encode("utf-8")).digest()[0] & 1
            if side == 0:
                query.append(text)
            elif text in pool_lines:
                in_pool += 1
            else:
                judge.append(text)
    out.mkdir(parents=True, exist_ok=True)
    for name, lines in (("query.en", query), ("judge.en", judge)):
        tmp = out / (name + ".tmp")
        tmp.write_text("".join(t + "\n" for t in lines), encoding="utf-8")
        tmp.replace(out / name)
    assert not set(query) & set(judge)
    return {"query": len(query), "judge": len(judge), "judge_lines_in_pool_dropped": in_pool}


def run_method(label: str, target: str, query_file: Path, pool, seed: int) -> dict:
    """One (target, method) selection of N lines with the query half; kept once finished."""
    from domainsift.io import save_json
    name = label if seed == 0 else f"{label}-seed-{seed}"
    run_dir = WORK / target / name
    done = run_dir / "bench.json"
    if done.exists():
        return json.loads(done.read_text())
    gold = [data_file(target, "train")]
    t0 = time.time()
    if label in COMBOS:
        members = [WORK / target / (m if seed == 0 else f"{m}-seed-{seed}") for m in COMBOS[label]]
        shutil.rmtree(run_dir, ignore_errors=True)
        sig = combine_runs(members, run_dir)
    else:
        method, params = METHODS[label]
        if run_dir.exists() and (method is None or not (run_dir / ".resume").exists()):
            shutil.rmtree(run_dir)
        if method is None:
            dsir_run(str(query_file), pool, run_dir, seed=seed)
            sig = json.loads((run_dir / "signature.json").read_text())
        else:
            cascade = Cascade(share=N / len(pool)) if params.get(CASCADE) else None
            sig = ds.run(ds.RunSpec.single(method, read_corpus([str(query_file)]), pool, run_dir, params={k: v for k, v in params.items() if k != CASCADE}, seed=seed, cascade=cascade)).signature
    run_select(run_dir, rule=Rule(top=N))
    ev = evaluate_run(run_dir, gold)
    row = {"target": target, "method": name, "base_method": label, "seed": seed, "precision": ev["precision"],
           "seconds": round(time.time() - t0, 1), "signature": sig.get("signature")}
    save_json(done, row)
    print(f"{target:>14} {name:<30} precision {row['precision']:.3f}  {row['seconds']:>7.1f} s", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", nargs="+", default=DEFAULT_METHODS, choices=list(METHODS) + list(COMBOS))
    ap.add_argument("--targets", nargs="+", default=CLASSIC, choices=CLASSIC)
    ap.add_argument("--seed", type=int, default=0, help="the methods' seed (the halves are cut by seed 0)")
    ap.add_argument("--order", type=int, default=4, help="the judge LM's n-gram order")
    ap.add_argument("--no-crossdomain", action="store_true", help="skip the cross-domain matrix (kept from "
                    "the results file)")
    ap.add_argument("--report-only", action="store_true", help="rewrite the tables from bench/results/downstream.json")
    args = ap.parse_args()
    if args.report_only:
        old = json.loads((RESULTS / "downstream.json").read_text())
        return report(old["targets"], old["halves"], old["crossdomain"], old["order"],
                      command=old["command"].replace(" (tables rewritten by --report-only)", "")
                      + " (tables rewritten by --report-only)")

    all_pool = WORK / "pool.all.en"
    all_pool.parent.mkdir(parents=True, exist_ok=True)
    if not all_pool.exists():
        with open(str(all_pool) + ".tmp", "w", encoding="utf-8") as out:
            for d in SEVEN:
                with open(data_file(d, "train"), encoding="utf-8") as fh:
                    shutil.copyfileobj(fh, out)
        Path(str(all_pool) + ".tmp").replace(all_pool)
    pool = read_corpus([data_file(d, "train") for d in SEVEN])
    assert len(pool) == 35000, len(pool)

    per_target, splits, precision = {}, {}, {}
    pool_lines = set(pool.texts)
    for t in args.targets:
        splits[t] = halves(t, WORK / t, pool_lines)
        for label in args.methods:
            row = run_method(label, t, WORK / t / "query.en", pool, args.seed)
            precision[f"{t}/{row['method']}"] = row["precision"]
        names = [label if args.seed == 0 else f"{label}-seed-{args.seed}" for label in args.methods]
        runs = [str(WORK / t / n) for n in names]
        res = run_downstream(runs, str(WORK / t / "judge.en"),
                             [("all 35k", str(all_pool)), ("oracle", data_file(t, "train"))], order=args.order)
        for r, n in zip(res["rows"], names + [None, None]):
            if n:
                r["name"] = n
                r["precision"] = precision[f"{t}/{n}"]
        per_target[t] = res["rows"]
        print(t, [(r["name"], round(r["perplexity"], 1)) for r in res["rows"]], flush=True)

    old = RESULTS / "downstream.json"
    if args.no_crossdomain and old.exists() and "crossdomain" in json.loads(old.read_text()):
        cd = json.loads(old.read_text())["crossdomain"]
    else:
        emb = EmbedConfig(progress=False).build()
        cd = cross_domain([(d, data_file(d, "train")) for d in SEVEN], [(d, data_file(d, "test")) for d in SEVEN],
                          order=args.order, embedder=emb, out_dir=ROOT / "bench" / "work" / "crossdomain")
        RESULTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cd["plot"], RESULTS / "crossdomain.png")
        print(format_matrix(cd))
    report(per_target, splits, cd, args.order)


def verdict(per_target: dict, a: str, b: str) -> str:
    """One sentence: does ``a`` beat ``b`` on the judge, target by target?"""
    ppl = {t: {r["name"]: r["perplexity"] for r in rows} for t, rows in per_target.items()}
    both = [t for t, p in ppl.items() if a in p and b in p]
    wins = [t for t in both if ppl[t][a] < ppl[t][b]]
    return f"{a} has the lower judge perplexity than {b} on {len(wins)} of {len(both)} targets" + \
        (f" ({', '.join(wins)})" if wins else "")


def report(per_target: dict, splits: dict, cd: dict, order: int, command: str | None = None) -> None:
    names = []
    for rows in per_target.values():
        for r in rows:
            if r["name"] not in names:
                names.append(r["name"])
    cell = {(t, r["name"]): r for t, rows in per_target.items() for r in rows}
    targets = list(per_target)
    lines = ["# Downstream check: LM perplexity on held-out in-domain text no method has seen", "",
             "Each <D>.test.en is cut by a seeded hash of each line into a query half (the in-domain set every "
             "method selects with) and a judge half (the held-out text, minus its lines that also occur in the "
             "pool); no line is in both. Every method selects N = 5,000 of the 35,000-line pool with the query "
             f"half; a {order}-gram Kneser–Ney LM (VariKN) trained on each selection, on all 35,000 pool lines and "
             "on the oracle <D>.train.en is measured on the judge half: perplexity (OOV tokens left out) with the "
             "OOV rate, and the selection's precision against the file of origin, as "
             "`perplexity (OOV rate) precision`. Lower perplexity is better. Labels and their pinned parameters: "
             "bench/live/selection.py (METHODS, COMBOS); moore-lewis is the product's default (order 3, VariKN "
             "pruning 1e-4, per-token cross-entropy), moore-lewis-paper paper 000's setting (order 5, no pruning, "
             "sentence log-probabilities).", "",
             "| halves | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets),
             "| query lines / judge lines (judge lines in the pool dropped) | " + " | ".join(
                 f"{splits[t]['query']} / {splits[t]['judge']} ({splits[t]['judge_lines_in_pool_dropped']})"
                 for t in targets) + " |", "",
             "| training data | " + " | ".join(targets) + " | mean perplexity | mean precision |",
             "|---|" + "---|" * (len(targets) + 2)]
    for n in names:
        cells, ppl, prec = [], [], []
        for t in targets:
            r = cell.get((t, n))
            if r is None:
                cells.append("-")
                continue
            ppl.append(r["perplexity"])
            if "precision" in r:
                prec.append(r["precision"])
            p = f" {r['precision']:.3f}" if "precision" in r else ""
            cells.append(f"{r['perplexity']:.1f} ({r['oov_rate']:.3f}){p}")
        mean = f"{np.mean(ppl):.1f}" if len(ppl) == len(targets) else "-"
        mean_p = f"{np.mean(prec):.4f}" if len(prec) == len(targets) else "-"
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {mean} | {mean_p} |")
    lines += ["", "In one sentence: " + verdict(per_target, "finetune-default", "moore-lewis") + "; "
              + verdict(per_target, "finetune-default", "moore-lewis-paper") + "; "
              + verdict(per_target, "oracle", "moore-lewis") + ".", "",
              "Why an n-gram LM as the judge: it is Moore & Lewis's own criterion (cross-entropy of in-domain "
              "text under a model of the selected data), needs no GPU and runs in seconds; an MT model, as in the "
              "paper's Table 6, would measure translation quality too but costs hours per selection. Perplexities "
              "of models with different vocabularies are compared together with their OOV rates. Before 0.14.0 "
              "this table judged on the whole <D>.test.en, the very text the methods selected with, so Moore–Lewis "
              "(whose in-domain LM is trained on it) beat the oracle: its rows are in git history.", "",
              "## Cross-domain matrix (analog of the paper's Table 4)", "",
              "Rows: the domain whose <D>.train.en trained the LM; columns: the whole <D>.test.en it is measured on.", "",
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
    write_results("downstream", {**({"command": command} if command else {}), "order": order, "halves": splits,
                                 "targets": per_target, "crossdomain": cd},
                  "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
