"""Benchmark "mix" (issue 49): five targets in one run against five separate runs.

Pool: the seven shared <D>.train.en files (35,000 lines); targets: the five classic domains, each
with <D>.test.en as its in-domain set, 5,000 lines each (``--top 25000``, equal weights). The mixture
runs through ``domainsift.run`` (a RunSpec of several targets); every target's own score directory under DIR/targets/NAME
holds exactly the scores a separate run of that target makes (same method, pool, seed), so the
separate runs' selections are ``run_select(top=5000)`` from them. Precision against the target's
train file (precision = recall at N = 5,000).

Finetune's mixture fine-tunes one encoder with a head per target (one fit, one encoding of the pool),
so its separate runs are five score runs (``run(RunSpec.single(...))``) with the product's defaults, each fitting its own
(``--epochs E`` changes the mixture's fit only; the separate runs are measured once); their wall
times and the mixture's are measured one after the other, on an otherwise idle machine.

Wall time (``--timing``, cosine): one run of one target against the mixture, one after the other on an
otherwise idle machine, each from an empty embedding cache (``--cache empty``, the default) or with the
cache off (``--cache off``: ``cache_dir=""``, so that nothing a run encodes is kept for another). Each
timing is a row of its own, with the product's version that made it.

    python bench/live/mix.py [--methods cosine finetune] [--epochs E] [--timing [--cache empty|off]]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time

import numpy as np
from _common import CLASSIC, ROOT, SEVEN, data_file, version_key, write_results

WORK = ROOT / "bench" / "work" / "mix"
N = 5000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", nargs="+", default=["cosine"])
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--cache", choices=["empty", "off"], default="empty",
                    help="--timing: each run from an empty embedding cache, or with the cache off")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=None, help="finetune: its --epochs (default: the product's)")
    args = ap.parse_args()
    import domainsift as ds
    WORK.mkdir(parents=True, exist_ok=True)
    rows_file = WORK / "rows.json"
    rows = json.loads(rows_file.read_text()) if rows_file.exists() else {}
    pool_files = [data_file(d, "train") for d in SEVEN]
    for method in args.methods:
        params = {"epochs": args.epochs} if args.epochs is not None else {}
        key = f"{method}|{args.seed}" + (f"|epochs {args.epochs}" if params else "")
        out = WORK / (method + (f"-epochs{args.epochs}" if params else ""))
        if key not in rows:
            targets = {d: ds.read_corpus([data_file(d, "test")]) for d in CLASSIC}
            t = time.time()
            meta = ds.run(ds.RunSpec(method, targets, ds.PoolSource.open(pool_files), out, rule=ds.Rule(top=N * len(CLASSIC)), seed=args.seed, overwrite=True, params=params or None)).mix
            row = {"method": method + "".join(f" --{k} {v}" for k, v in params.items()), "seed": args.seed, "mix_seconds_warm_cache": round(time.time() - t, 1),
                   "targets": {}}
            shared = "shared_fit" in meta  # one fit for every target: the separate runs are runs of their own
            for d in CLASSIC:
                mixed = ds.evaluate_run(out / "targets" / d, [data_file(d, "train")])
                alone = WORK / f"{method}-alone" / d
                t = time.time()
                scores_dir = out / "targets" / d
                base = rows.get(f"{method}|{args.seed}", {}).get("targets", {}).get(d)
                if shared and params and base and "separate_seconds" in base:
                    # the separate runs are the product's defaults whatever the mixture's flags: measured once
                    sep, seconds = {"precision": base["separate"]}, base["separate_seconds"]
                else:
                    if shared:
                        scores_dir = WORK / f"{method}-separate" / d
                        ds.run(ds.RunSpec.single(method, targets[d], ds.PoolSource.open(pool_files), scores_dir, seed=args.seed, overwrite=True)).signature
                    ds.run_select(scores_dir, alone, rule=ds.Rule(top=N), overwrite=True)
                    sep = ds.evaluate_run(alone, [data_file(d, "train")])
                    seconds = round(time.time() - t, 1)
                row["targets"][d] = {"mix": mixed["precision"], "separate": sep["precision"],
                                     "n_mix": meta["targets"][d]["n_selected"],
                                     **({"separate_seconds": seconds} if shared else {})}
                print(f"{method} {d}: mix {mixed['precision']:.4f} separate {sep['precision']:.4f}", flush=True)
            row["signature"] = json.loads((out / "targets" / CLASSIC[0] / "signature.json").read_text())["signature"]
            if shared:  # a fit per target: the five separate runs' wall times are measured beside the mixture
                row.update(one_run_seconds=float(np.median([row["targets"][d]["separate_seconds"] for d in CLASSIC])),
                           mix_seconds=row["mix_seconds_warm_cache"], shared_fit=True)
            rows[key] = row
            rows_file.write_text(json.dumps(rows, indent=1))
        if "signature" not in rows[key]:  # a row measured before rows kept their signature: its run's, as it ran
            rows[key]["signature"] = json.loads((out / "targets" / CLASSIC[0] / "signature.json").read_text()
                                                )["signature"]
            rows_file.write_text(json.dumps(rows, indent=1))
        if args.timing:
            timing(method, args, pool_files, ds)
    report(rows)


TIMING = WORK / "timing.json"


def timing(method: str, args, pool_files, ds) -> None:
    """One run of one target, then the five targets in one run, each from an empty embedding cache or
    with the cache off; a row per (method, seed, cache, version), kept in ``TIMING``."""
    from domainsift import __version__
    rows = json.loads(TIMING.read_text()) if TIMING.exists() else {}
    key = f"{method}|{args.seed}|{args.cache}|{__version__}"
    if key in rows:
        return
    cache = WORK / "cache"
    params = {"cache_dir": ""} if args.cache == "off" else None
    times, sig = {}, None
    for what in ("one", "mix"):
        shutil.rmtree(cache, ignore_errors=True)
        os.environ["DOMAINSIFT_CACHE"] = str(cache)
        t = time.time()
        if what == "one":
            ds.run(ds.RunSpec.single(method, ds.read_corpus([data_file(CLASSIC[0], "test")]), ds.PoolSource.open(pool_files), WORK / "timing-one", seed=args.seed, overwrite=True, params=params)).signature
        else:
            meta = ds.run(ds.RunSpec(method, {d: ds.read_corpus([data_file(d, "test")]) for d in CLASSIC}, ds.PoolSource.open(pool_files), WORK / "timing-mix", rule=ds.Rule(top=N * len(CLASSIC)), seed=args.seed, overwrite=True, params=params)).mix
            sig = meta["signature"]
        times[what] = round(time.time() - t, 1)
        print(f"timing {method} cache {args.cache}: {what} {times[what]} s", flush=True)
    rows[key] = {"method": method, "seed": args.seed, "cache": args.cache, "version": __version__,
                 "one_run_seconds": times["one"], "mix_seconds": times["mix"], "signature": sig}
    TIMING.write_text(json.dumps(rows, indent=1))


def _epochs(signature: str) -> str:
    """The epochs the mixture's fit ran, from its signature ('-' for a method without)."""
    return next((part.split(":", 1)[1] for part in signature.split("|") if part.startswith("epochs:")), "-")


def report(rows: dict) -> None:
    md = ["# Five targets in one run (issue 49)", "",
          "Pool: the seven <D>.train.en (35,000 lines); targets: the five classic domains, in-domain set "
          "<D>.test.en, 5,000 lines each (`run(RunSpec(..., rule=Rule(top=25000)))`, equal weights, each line to one target). "
          "'separate': the top 5,000 of the same target's scores alone (what five separate runs select; for "
          "finetune, whose mixture fine-tunes one encoder with a head per target, five separate runs, each "
          "fitting its own). Precision against <D>.train.en. Wall time: cosine: one run of one target and the "
          "mixture, each from an empty embedding cache (`--timing`); finetune: the median of the five separate "
          "runs and the mixture, one after the other. epochs: what the mixture's fit ran (its signature; since "
          "0.17.0 a shared fit's default is 5, one target's 10).", "",
          "| method | seed | " + " | ".join(f"{d} mix / separate" for d in CLASSIC) + " | mean mix | mean separate | "
          "difference | one run (s) | five in one (s) | ratio | epochs |", "|---|---|" + "---|" * (len(CLASSIC) + 7)]
    for r in rows.values():
        t = r["targets"]
        mm, ms = np.mean([t[d]["mix"] for d in CLASSIC]), np.mean([t[d]["separate"] for d in CLASSIC])
        one, mix = r.get("one_run_seconds"), r.get("mix_seconds")
        md.append(f"| {r['method']} | {r['seed']} | " + " | ".join(f"{t[d]['mix']:.4f} / {t[d]['separate']:.4f}"
                                                                  for d in CLASSIC)
                  + f" | {mm:.4f} | {ms:.4f} | {mm - ms:+.4f} | {one if one else ''} | {mix if mix else ''} | "
                  + (f"{mix / one:.2f}" if one and mix else "") + f" | {_epochs(r.get('signature', ''))} |")
    timings = list(json.loads(TIMING.read_text()).values()) if TIMING.exists() else []
    if timings:
        md += ["", "Wall time of one target's run against the five targets in one run (`--timing`), one after the "
               "other on the idle machine, each from an empty embedding cache (`--cache empty`) or with the "
               "cache off (`--cache off`: nothing one target's run encodes is kept for another). Since 0.20.0 "
               "cosine's targets share one encoding of the pool (its shared fit: a centroid per target, the "
               "first target's run over a shard scoring it against all of them); before, the cache served "
               "the later targets. The table above's timings are 0.15.0-0.17.0's.", "",
               "| version | method | seed | vector cache | one run (s) | five in one (s) | ratio |",
               "|---|---|---|---|---|---|---|"]
        for r in sorted(timings, key=lambda r: (version_key(r["version"]), r["cache"] != "off")):
            md.append(f"| {r['version']} | {r['method']} | {r['seed']} | {r['cache']} | {r['one_run_seconds']} | "
                      f"{r['mix_seconds']} | {r['mix_seconds'] / r['one_run_seconds']:.2f} |")
    write_results("mix", {"rows": list(rows.values()), "timing": timings}, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
