"""Duplicates in a mixture of several targets (``select --target ... --dedup exact|near``): how many lines of
a five-target mixture repeat another of its lines, and what passing over them costs.

    python bench/live/mix_dedup.py          # writes bench/results/mix_dedup.md

Pool: the seven domains' <D>.train.en (35,000 lines); targets: the five classic domains, <D>.test.en each;
cosine at the product's defaults, seed 0, ``--top 25000`` (5,000 a target, equal weights). One mixture
without ``--dedup`` first fills the embedding cache (not reported); then the mixture without, with
``--dedup exact`` and with ``--dedup near``, each timed whole (every target scored from the cache, the
assignment, reading the lines, writing every output). Columns: the mixture's lines that repeat an earlier
line of it (its rows in ``selected.mix.tsv`` order) compared exactly (after normalising) and near (MinHash
Jaccard of character 5-grams >= 0.8), both counted with the product's ``Deduplicator``; the lines the
mixture passed over (``mix.json``); mean precision against each target's <D>.train.en (N = 5,000) and the
lowest target's. Only the product's public API (run, RunSpec, evaluate_run, Deduplicator).
"""

from __future__ import annotations

import argparse
import json
import time

from _common import CLASSIC, ROOT, SEVEN, data_file, write_results

WORK = ROOT / "bench" / "work" / "mix_dedup"
N = 5000
VARIANTS = (None, "exact", "near")


def repeats(texts: list[str], mode: str) -> int:
    from domainsift.dedup import Deduplicator
    seen = Deduplicator(mode)
    return sum(seen.is_duplicate(t) for t in texts)


def main() -> None:
    import domainsift as ds
    from domainsift.jobs.evaluate import evaluate_run
    from domainsift import rundir
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    pool_files = [data_file(d, "train") for d in SEVEN]
    targets = {d: ds.read_corpus([data_file(d, "test")]) for d in CLASSIC}
    cache = str(WORK / "cache")

    def mix(name: str, dedup):
        out = WORK / name
        t = time.time()
        meta = ds.run(ds.RunSpec("cosine", targets, ds.PoolSource.open(pool_files), out, rule=ds.Rule(top=N * len(CLASSIC), dedup=dedup), seed=args.seed, overwrite=True, params={"cache_dir": cache, "progress": False})).mix
        return meta, time.time() - t, out

    mix("warm", None)  # the pool and the in-domain sets encoded once, into the cache
    rows = []
    for dedup in VARIANTS:
        meta, seconds, out = mix(dedup or "plain", dedup)
        texts = [row["text"] for row in rundir.read_mix(out)]
        precision = {d: round(evaluate_run(out / "targets" / d, [data_file(d, "train")])["precision"], 4)
                     for d in CLASSIC}
        row = {"dedup": dedup or "none", "seed": args.seed, "n_selected": len(texts),
               "repeats_exact": repeats(texts, "exact"), "repeats_near": repeats(texts, "near"),
               "passed_over": meta.get("dedup", {}).get("duplicates_removed", 0),
               "precision": precision, "mean_precision": round(sum(precision.values()) / len(precision), 4),
               "seconds": round(seconds, 1), "signature": meta["signature"]}
        rows.append(row)
        print(json.dumps(row))
    table = ["# Duplicates in a five-target mixture (`select --target ... --dedup`)", "",
             f"Cosine at the product's defaults, seed {args.seed}; pool: the seven <D>.train.en (35,000 lines); "
             "targets: the five classic domains, in-domain set <D>.test.en each; `--top 25000`, equal weights. "
             "Repeats: the mixture's lines that repeat an earlier line of it, compared exactly (after "
             "normalising case, punctuation and spaces) and near (MinHash Jaccard of character 5-grams >= 0.8). "
             "Passed over: the duplicates the mixture gave to no target. Precision: each target's 5,000 lines "
             "against its <D>.train.en. Seconds: the whole run with the embedding cache filled.", "",
             "| --dedup | lines | exact repeats | near repeats | passed over | mean precision | "
             + " | ".join(CLASSIC) + " | seconds |",
             "|---|---|---|---|---|---|" + "---|" * len(CLASSIC) + "---|"]
    for r in rows:
        table.append(f"| {r['dedup']} | {r['n_selected']:,} | {r['repeats_exact']} | {r['repeats_near']} | "
                     f"{r['passed_over']} | {r['mean_precision']:.4f} | "
                     + " | ".join(f"{r['precision'][d]:.4f}" for d in CLASSIC) + f" | {r['seconds']:.1f} |")
    write_results("mix_dedup", {"rows": rows}, "\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
