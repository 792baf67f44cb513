"""Benchmark "nmt_judge": paper 000's question in BLEU. Does the translation model trained on each
method's selection order the methods as precision does?

For a target D, <D>.test is cut in two by a seeded hash of each English line (as bench/live/downstream.py
cuts it; the same line always falls on one side): the *query* half's English lines are the in-domain set
every method selects with; the *judge* half's pairs (minus any whose English or German line the pool
holds) measure the result. Each method selects N pairs of the 35,000-pair de-en pool of the seven domains,
scoring the English side (`--pool <D>.train.en ... --pool-target <D>.train.de`; the selection writes both
sides); a `proxy`-preset model (domainsift nmt, trained from scratch, de->en) is trained on the selected
pairs, its epoch chosen on the query half's pairs (those the selection does not hold), and judged by BLEU
and chrF (sacrebleu) on the judge half, beam 5. Rows: random, moore-lewis, cosine, finetune, the oracle
(<D>.train: N pairs of the target's own training file) and, with --whole-pool, all 35,000 pairs. The
selection's precision against the file of origin is reported beside it.

Every row is a real run directory under bench/work/nmt_judge/<D>/<method>-s<seed> made through the public
API; a finished row is written to bench/results/nmt_judge.json as it lands, so a killed benchmark resumes
(and one benchmark at a time: a row's seconds are timings).

    python bench/live/nmt_judge.py [--targets KDE4 ...] [--methods random moore-lewis ...] [--seeds 0 1]
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path

import numpy as np
from _common import ROOT, SEVEN, apply_threads, command_line, data_file, earlier_rows, merge_rows, read_lines, \
    threads_option, write_results

WORK = ROOT / "bench" / "work" / "nmt_judge"
N = 5000
METHODS = ["random", "moore-lewis", "cosine", "finetune", "oracle"]
# 5,000 pairs are few: small batches (about 80 steps an epoch) and a short warm-up; 10 epochs of the preset's
# 3,000-token batches were 200 steps, still inside its 400-step warm-up (oracle BLEU 1.1 at 0.32.0)
EPOCHS, PATIENCE, BEAM, MAX_TOKENS, WARMUP = 30, 3, 5, 800, 200
SETTINGS = f"epochs {EPOCHS}, patience {PATIENCE}, max_tokens {MAX_TOKENS}, warmup {WARMUP}, beam {BEAM}"


def halves(target: str, pool_en: set, pool_de: set, seed: int = 0) -> tuple[list, list]:
    """The query and judge halves of <target>.test as (de, en) pairs, cut by a seeded hash of the English
    line; judge pairs that the pool holds (either side) are dropped."""
    query, judge = [], []
    for de, en in zip(read_lines(data_file(target, "test", "de")), read_lines(data_file(target, "test", "en"))):
        if not de.strip() or not en.strip():
            continue
        side = hashlib.sha256(f"{seed}\t{en}".encode("utf-8")).digest()[0] & 1
        if side == 0:
            query.append((de, en))
        elif en not in pool_en and de not in pool_de:
            judge.append((de, en))
    return query, judge


def select(method: str, target: str, query_file: Path, seed: int, out: Path) -> tuple[Path, Path, float]:
    """The method's N selected pairs (German file, English file) and the selection's precision."""
    from domainsift import PoolSource, read_corpus
    from domainsift.jobs.evaluate import evaluate_run
    from domainsift.jobs.select import score_and_select
    if method == "oracle":
        return Path(data_file(target, "train", "de")), Path(data_file(target, "train", "en")), 1.0
    if not (out / "selection.json").exists():
        pool = PoolSource.open([data_file(d, "train", "en") for d in SEVEN],
                               [data_file(d, "train", "de") for d in SEVEN])
        score_and_select(method, read_corpus([str(query_file)]), pool, out, seed=seed, top=N, overwrite=True)
    import json
    sel = json.loads((out / "selection.json").read_text())
    en, de = (Path(p) for p in sel["outputs"])
    precision = evaluate_run(out, [data_file(target, "train", "en")])["precision"]
    return de, en, precision


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", nargs="+", default=["KDE4"])
    ap.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS + ["pool"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--table-only", action="store_true", help="rewrite the table from the finished rows; train nothing")
    threads_option(ap)
    args = ap.parse_args()
    apply_threads(args)
    if args.table_only:
        _write(earlier_rows("nmt_judge"))
        return
    from domainsift import __version__
    from domainsift.nmt import Bitext, read_bitext, score_translation, train_nmt, translate
    from domainsift.nmt.trainer import TrainSettings
    rows = earlier_rows("nmt_judge")
    pool_en = {x for d in SEVEN for x in read_lines(data_file(d, "train", "en"))}
    pool_de = {x for d in SEVEN for x in read_lines(data_file(d, "train", "de"))}
    for target in args.targets:
        for seed in args.seeds:
            query, judge = halves(target, pool_en, pool_de, seed)
            tdir = WORK / target / f"s{seed}"
            tdir.mkdir(parents=True, exist_ok=True)
            query_file = tdir / "query.en"
            query_file.write_text("".join(en + "\n" for _, en in query), encoding="utf-8")
            for method in args.methods:
                key = (target, method, seed, __version__, SETTINGS)
                if any(_key(r) == key for r in rows):
                    continue
                t0 = time.time()
                out = tdir / method
                if method == "pool":
                    de_files = [data_file(d, "train", "de") for d in SEVEN]
                    en_files = [data_file(d, "train", "en") for d in SEVEN]
                    parts = [read_bitext(a, b) for a, b in zip(de_files, en_files)]
                    train = Bitext(sum((p.src for p in parts), ()), sum((p.tgt for p in parts), ()), ("pool.de", "pool.en"))
                    precision = None
                else:
                    de, en, precision = select(method, target, query_file, seed, out / "selection")
                    train = read_bitext(de, en, limit=N)
                seen_de, seen_en = set(train.src), set(train.tgt)
                dev_pairs = [(d, e) for d, e in query if d not in seen_de and e not in seen_en]
                dev = Bitext(tuple(d for d, _ in dev_pairs), tuple(e for _, e in dev_pairs), ("query.de", "query.en"))
                settings = TrainSettings(preset="proxy", epochs=EPOCHS, patience=PATIENCE, seed=seed,
                                         max_tokens=MAX_TOKENS, warmup=WARMUP)
                t1 = time.time()
                rec = train_nmt(train, dev, out / "model", settings, overwrite=True)
                hyp = translate(out / "model", [d for d, _ in judge], beam=BEAM)
                scores = score_translation(hyp, [e for _, e in judge])
                row = {"target": target, "method": method, "seed": seed, "version": __version__, "settings": SETTINGS,
                       "n_train": len(train), "n_dev": len(dev), "n_judge": len(judge),
                       "precision": None if precision is None else round(precision, 4),
                       "bleu": scores["bleu"], "chrf": scores["chrf"], "best_epoch": rec["best_epoch"],
                       "epochs_run": rec["epochs_run"], "dev_loss": min(rec["dev_loss"]),
                       "train_seconds": rec["train_seconds"], "target_tokens_per_second": rec["target_tokens_per_second"],
                       "select_seconds": round(t1 - t0, 1), "seconds": round(time.time() - t0, 1),
                       "bleu_signature": scores["signature"]["bleu"], "nmt_signature": rec["signature"],
                       "command": command_line()}
                rows = merge_rows(rows, [row], _key)
                print(f"{target} {method} s{seed}: BLEU {row['bleu']:.2f} chrF {row['chrf']:.2f} precision "
                      f"{row['precision']} ({row['seconds']:.0f} s)", flush=True)
                _write(rows)
    _write(rows)


def _key(r: dict) -> tuple:
    return r["target"], r["method"], r["seed"], r["version"], r.get("settings")


def _over_seeds(rows: list[dict]) -> list[str]:
    """The mean BLEU of each method over a target's seeds (the newest row of each seed), for targets with
    two seeds or more; the order of the methods by the mean, and whether each seed gives that order."""
    from _common import version_key
    newest: dict = {}
    for r in sorted(rows, key=lambda r: version_key(r["version"])):
        newest[(r["target"], r["method"], r["seed"])] = r
    out = []
    for target in sorted({t for t, _, _ in newest}):
        seeds = sorted({s for t, _, s in newest if t == target})
        methods = [m for m in METHODS + ["pool"] if all((target, m, s) in newest for s in seeds)]
        if len(seeds) < 2 or len(methods) < 2:
            continue
        mean = {m: float(np.mean([newest[(target, m, s)]["bleu"] for s in seeds])) for m in methods}
        order = sorted(methods, key=lambda m: -mean[m])
        same = [s for s in seeds if sorted(methods, key=lambda m: -newest[(target, m, s)]["bleu"]) == order]
        def each(m):
            return " / ".join(f"{newest[(target, m, s)]['bleu']:.2f}" for s in seeds)
        cells = ", ".join(f"{m} {mean[m]:.2f} ({each(m)})" for m in order)
        out.append(f"{target}, mean BLEU over seeds {', '.join(map(str, seeds))} (each seed's): {cells}; "
                   f"{len(same)} of {len(seeds)} seeds give this order.  ")
    return ([""] + out) if out else []


def _write(rows: list[dict]) -> None:
    lines = ["# The translation model trained on each selection (paper 000's question in BLEU)", "",
             f"de->en, N = {N} pairs selected from the 35,000-pair pool of seven domains by their English side with "
             "the query half of the target's test set; a `proxy` model (domainsift nmt: d_model 128, 2+2 layers, a "
             f"4k sentencepiece vocabulary; batches of {MAX_TOKENS} target tokens, warm-up {WARMUP} steps) trained from "
             f"scratch, at most {EPOCHS} epochs, early stopping on the "
             f"query half's pairs (patience {PATIENCE}); BLEU and chrF (sacrebleu) on the judge half, beam {BEAM}. "
             "A proxy model this small ranks data; its absolute BLEU says little about a full-size model.", "",
             "| target | method | seed | version | precision | BLEU | chrF | pairs | best epoch | train s | tokens/s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["target"], r["seed"], -r["bleu"])):
        lines.append(f"| {r['target']} | {r['method']} | {r['seed']} | {r['version']} | "
                     f"{'-' if r['precision'] is None else r['precision']} | {r['bleu']:.2f} | {r['chrf']:.2f} | "
                     f"{r['n_train']} | {r['best_epoch']}/{r['epochs_run']} | {r['train_seconds']:.0f} | "
                     f"{r['target_tokens_per_second'] or 0:,.0f} |")
    lines.append("")
    for target, seed in sorted({(r["target"], r["seed"]) for r in rows}):  # within a target: BLEU's scale is its own
        both = [r for r in rows if (r["target"], r["seed"]) == (target, seed) and r["precision"] is not None
                and r["method"] != "oracle"]
        if len(both) >= 3:
            p, b = np.array([r["precision"] for r in both]), np.array([r["bleu"] for r in both])
            lines.append(f"Pearson correlation of precision and BLEU over {target}'s {len(both)} selection rows "
                         f"(seed {seed}): {np.corrcoef(p, b)[0, 1]:.3f}.  ")
    lines += _over_seeds(rows)
    write_results("nmt_judge", {"rows": rows, "n": N, "epochs": EPOCHS, "patience": PATIENCE, "beam": BEAM,
                                "max_tokens": MAX_TOKENS, "warmup": WARMUP},
                  "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
