"""Benchmark "finetune layers" (issue 48, item 1): the fine-tuned teacher on the encoder's lower K layers.

A cascade's teacher costs what its encoder costs a line (bench/results/teacher_cost.md: 16 ms per 100
tokens on the 2-core EPYC, the same for finetune and cosine). ``finetune --layers K`` fine-tunes and
scores the lower K of the encoder's 6 layers only (the layers above are dropped from the model), so a
line costs about what the frozen layer-K encoder costs (bench/results/second_stage.md measures that
ratio on the lines a cascade's teacher sees). This benchmark asks what it costs in precision.

The selection setting (../shared/docs/BENCHMARKS.md): the shared pool (the seven <D>.train.en, 35,000
lines), in-domain set <D>.test.en, precision of the top N = 5,000 against <D>.train.en, the five classic
targets; ``ds.run(ds.RunSpec.single("finetune", ...))`` at the product's defaults but ``layers``. The whole encoder's
rows (``layers`` 0) are bench/live/candidates.py's teacher runs when that benchmark has left them under
bench/work/candidates/teacher/shared (the same call), else run here. Seconds are the run's own (fit:
training and its sample; pass: scoring the 35,000 lines).

    python bench/live/finetune_layers.py [--layers 2 3] [--seeds 0] [--report-only]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil

import numpy as np
from _common import CLASSIC, ROOT, SEVEN, data_file, write_results, earlier_rows

WORK = ROOT / "bench" / "work" / "finetune_layers"
WHOLE = ROOT / "bench" / "work" / "candidates" / "teacher" / "shared"
N = 5000


def run_dir(target: str, layers: int, seed: int):
    if layers == 0:
        saved = WHOLE / (target if seed == 0 else f"{target}-seed-{seed}")
        if (saved / "scores.npy").exists():
            return saved
    return WORK / f"{target}-layers-{layers}-seed-{seed}"


def measure(target: str, layers: int, seed: int) -> dict:
    import domainsift as ds
    from domainsift.rundir import load_scores
    out = run_dir(target, layers, seed)
    if not (out / "scores.npy").exists():
        shutil.rmtree(out, ignore_errors=True)
        corpus = ds.read_corpus([data_file(d, "train") for d in SEVEN])
        in_domain = ds.read_corpus([data_file(target, "test")])
        params = {"progress": False, **({"layers": layers} if layers else {})}
        ds.run(ds.RunSpec.single("finetune", in_domain, corpus, out, params=params, seed=seed)).signature
    run = load_scores(out)
    truth = os.path.realpath(data_file(target, "train"))
    top = np.argsort(-np.asarray(run.scores, dtype=np.float64), kind="stable")[:N]
    hits = sum(os.path.realpath(str(run.id_at(i)[0])) == truth for i in top.tolist())
    sig = json.loads((out / "signature.json").read_text())
    timings = json.loads((out / "run.json").read_text()).get("timings", {})
    return {"target": target, "layers": layers, "seed": seed, "precision": round(hits / N, 4),
            "version": sig.get("version"), "isa": sig.get("isa"),
            "fit_seconds": timings.get("fit_seconds"), "pass_seconds": timings.get("pass_seconds")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    rows = earlier_rows("finetune_layers")
    if not args.report_only:
        for seed in args.seeds:
            for layers in [0] + args.layers:
                for target in CLASSIC:
                    row = measure(target, layers, seed)
                    rows = [r for r in rows if (r["target"], r["layers"], r["seed"], r["version"])
                            != (row["target"], row["layers"], row["seed"], row["version"])] + [row]
                    print(row, flush=True)
    rows.sort(key=lambda r: (r["seed"], r["layers"] or 99, CLASSIC.index(r["target"]), r["version"] or ""))
    md = ["# Finetune on the encoder's lower K layers: precision and seconds", "",
          f"Shared pool (35,000 lines), in-domain set <D>.test.en, precision of the top {N:,}; "
          "`ds.run(ds.RunSpec.single(\"finetune\", ...))` at the product's defaults but `layers` (all: the whole 6-layer "
          "encoder). Seconds: the run's fit (training) and pass (scoring 35,000 lines), 2-core CPU named by "
          "the isa column. One row per seed, layers and version; means over the five classic targets.", "",
          "| layers | seed | version | isa | " + " | ".join(CLASSIC) + " | mean | fit s (mean) | pass s (mean) |",
          "|---|---|---|---|" + "---|" * (len(CLASSIC) + 3)]
    keys = dict.fromkeys((r["layers"], r["seed"], r["version"], r["isa"]) for r in rows)
    for layers, seed, version, isa in keys:
        g = {r["target"]: r for r in rows if (r["layers"], r["seed"], r["version"], r["isa"]) == (layers, seed, version, isa)}
        if set(g) != set(CLASSIC):
            continue
        mean = lambda k: float(np.mean([g[t][k] for t in CLASSIC]))  # noqa: E731
        md.append(f"| {layers or 'all'} | {seed} | {version} | {isa} | "
                  + " | ".join(f"{g[t]['precision']:.4f}" for t in CLASSIC)
                  + f" | {mean('precision'):.4f} | {mean('fit_seconds'):.0f} | {mean('pass_seconds'):.0f} |")
    write_results("finetune_layers", {"N": N, "rows": rows}, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
