"""Benchmark "noisy_judge": issue 89's BLEU half. Does a selection from a noisy crawl train as good a translation
model as the same selection from the clean pool, with the pair checks, and how much is lost without them?

The clean pool is bench/live/nmt_judge.py's (31,700 pairs of the seven domains; each judged target's last 1,100
train pairs held out: its judge set). The noisy pool adds ``--per-type`` (300) noise pairs of each of
bench/live/pair_checks.py's five kinds (misaligned, misordered, wrong language, untranslated, fragment), made
from the target's own pairs *in the pool* (so no judge sentence leaks into the noise). Each row selects N = 3,900
pairs with ``--method`` (moore-lewis: the paper's baseline, and the method the noise fooled most in
pair_checks.md) by their English side for the target's in-domain set (its test file's English side):

- ``clean``: the clean pool, the default pair checks;
- ``noisy``: the noisy pool, the default pair checks;
- ``noisy-unchecked``: the noisy pool, ``--pair-checks none``.

The product's judge (``judge_nmt``, as ``downstream --judge nmt``) trains a proxy model (de->en, from scratch, the
nmt_judge settings) on each selection and scores it on the judge set, against the ``clean`` row by paired
bootstrap (1,000 resamples): the loss a noisy crawl costs with and without the checks, with its interval.
Each row: how many noise pairs of each kind it selected. A checked row's selection made by another version is
made again (the checks may have changed); the unchecked row's is kept, and with it its model (the judge keeps a
model while its training data and settings are the same). Rows land in bench/results/noisy_judge.json as they
finish (resumable: a finished selection and judge row are kept).

    python bench/live/noisy_judge.py [--target EMEA] [--method moore-lewis] [--seeds 0] [--threads N]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from _common import ROOT, SEVEN, add_rows, apply_threads, command_line, read_lines, threads_option, write_results

WORK = ROOT / "bench" / "work" / "noisy_judge"
ROWS = {"clean": (False, None), "noisy": (True, None), "noisy-unchecked": (True, "none")}


def noisy_pool(target: str, per_type: int) -> tuple[list, list, dict]:
    """The noisy pool's English and German files, and the noise files by kind."""
    import nmt_judge
    import pair_checks
    en, de = nmt_judge.pool_files()
    k = SEVEN.index(target)
    noise = pair_checks.make_noise(target, per_type, WORK / target / "noise", source=(en[k], de[k]))
    return (en + [noise[x][0] for x in pair_checks.KINDS], de + [noise[x][1] for x in pair_checks.KINDS], noise)


def select(name: str, method: str, target: str, seed: int, per_type: int, query_file: Path) -> tuple[Path, dict]:
    """The row's selection (kept when finished) and the noise pairs of each kind it holds."""
    import nmt_judge
    import pair_checks
    from _common import stale_selection
    from domainsift import PoolSource, read_corpus, run
    from domainsift.spec import Rule, RunSpec
    noisy, checks = ROWS[name]
    en, de = nmt_judge.pool_files()
    noise = {}
    if noisy:
        en, de, noise = noisy_pool(target, per_type)
    out = WORK / target / f"s{seed}" / method / name
    if checks != "none":
        stale_selection(out)  # the checks may have changed: select again (the scores are kept)
    if not (out / "selection.json").exists():
        run(RunSpec.single(method, read_corpus([str(query_file)]), PoolSource.open(en, de), str(out),
                           rule=Rule(top=nmt_judge.N, pair_checks=checks), seed=seed, overwrite=True))
    kind_of = {str(Path(noise[k][0]).resolve()): k for k in noise}
    counts = Counter()
    for line in read_lines(out / "selected.ids.tsv")[1:]:
        counts[kind_of.get(str(Path(line.split("\t")[0]).resolve()), "pool")] += 1
    return out, {k: counts.get(k, 0) for k in pair_checks.KINDS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="EMEA", choices=["KDE4", "EMEA", "JRC-Acquis"])
    ap.add_argument("--method", default="moore-lewis")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--per-type", type=int, default=300)
    ap.add_argument("--table-only", action="store_true")
    threads_option(ap)
    args = ap.parse_args()
    apply_threads(args)
    if args.table_only:
        add_rows("noisy_judge", [], _key, _write)
        return
    import nmt_judge
    from domainsift import __version__
    from domainsift.jobs.downstream import JudgeSettings, judge_nmt
    from domainsift.nmt import Bitext
    from domainsift.nmt.trainer import TrainSettings
    en, de = nmt_judge.pool_files()
    pool_en = [x for f in en for x in read_lines(f)]
    pool_de = [x for f in de for x in read_lines(f)]
    query, judge = nmt_judge.judge_sets(args.target, pool_en, pool_de)
    settings_text = f"{nmt_judge.SETTINGS}, noise {args.per_type} a kind"
    for seed in args.seeds:
        tdir = WORK / args.target / f"s{seed}"
        tdir.mkdir(parents=True, exist_ok=True)
        query_file = tdir / "query.en"
        query_file.write_text("".join(e + "\n" for _, e in query), encoding="utf-8")
        runs, noise = [], {}
        for name in ROWS:
            out, noise[name] = select(name, args.method, args.target, seed, args.per_type, query_file)
            runs.append(str(out))
        t0 = time.time()
        train = TrainSettings(preset="proxy", epochs=nmt_judge.EPOCHS, patience=nmt_judge.PATIENCE, seed=seed,
                              max_tokens=nmt_judge.MAX_TOKENS, warmup=nmt_judge.WARMUP)
        test = Bitext(tuple(d for d, _ in judge), tuple(e for _, e in judge), ("judge.de", "judge.en"))
        dev = Bitext(tuple(d for d, _ in query), tuple(e for _, e in query), ("query.de", "query.en"))
        result = judge_nmt(runs, test, dev, tdir / args.method / "judge",
                           settings=JudgeSettings(baseline="clean", train=train, beam=nmt_judge.BEAM))
        rows = []
        for r in result["rows"]:
            rows.append({"target": args.target, "method": args.method, "row": r["name"], "seed": seed,
                         "version": __version__, "settings": settings_text, "noise_selected": noise[r["name"]],
                         "n_train": r["n_pairs"], "n_judge": len(judge), "bleu": r["bleu"], "chrf": r["chrf"],
                         "chrfpp": r["chrfpp"], "best_epoch": r["best_epoch"], "epochs_run": r["epochs_run"],
                         **({"vs_clean": {k: r["vs_baseline"][k] for k in ("bleu", "chrfpp", "n_samples", "seed")}}
                            if "vs_baseline" in r else {}),
                         "translations": r["translations"], "threads": nmt_judge._threads(),
                         "seconds": round(time.time() - t0, 1), "command": command_line()})
        add_rows("noisy_judge", rows, _key, _write)
        for r in rows:
            print(f"{r['target']} {r['row']} s{seed}: BLEU {r['bleu']:.2f} noise {sum(r['noise_selected'].values())}",
                  flush=True)


def _key(r: dict) -> tuple:
    return r["target"], r["method"], r["row"], r["seed"], r["version"], r["settings"]


def _write(rows: list[dict]) -> None:
    from domainsift.nmt.significance import in_words
    import pair_checks
    lines = ["# A noisy crawl in BLEU: the same selection from the clean and the noisy pool", "",
             "de->en; nmt_judge.py's pool (31,700 pairs, each judged target's last 1,100 train pairs held out) and the "
             "same pool with 300 noise pairs of each of pair_checks.py's five kinds made from the target's pool pairs; "
             "N = 3,900 pairs selected by the method; the product's judge (proxy model, nmt_judge's settings) on the "
             "held-out judge set; each row against `clean` by paired bootstrap (1,000 resamples).", "",
             "| target | method | seed | version | row | noise selected (" + ", ".join(pair_checks.KINDS) +
             ") | BLEU | chrF | best epoch | BLEU vs clean (95% interval, p) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["target"], r["method"], r["seed"], r["version"], r["row"])):
        noise = r["noise_selected"]
        lines.append(f"| {r['target']} | {r['method']} | {r['seed']} | {r['version']} | {r['row']} | "
                     f"{sum(noise.values())} ({', '.join(str(noise[k]) for k in pair_checks.KINDS)}) | "
                     f"{r['bleu']:.2f} | {r['chrf']:.2f} | {r['best_epoch']}/{r['epochs_run']} | "
                     f"{in_words(r.get('vs_clean')) if r.get('vs_clean') else '-'} |")
    lines.append("")
    write_results("noisy_judge", {"rows": rows}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
