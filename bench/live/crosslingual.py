"""Benchmark "cross-lingual selection" (../shared/docs/BENCHMARKS.md; paper 003's setting on the shared data).

For each of the five classic targets D: in-domain set <D>.test.de (German, 500 lines); pool: the
seven <D>.train.en (English, 35,000 lines, as in bench/live/selection.py); bitext for alignment: the
German–English train pairs of the six *other* domains (no parallel data of D). Another language pair
of the same layout (DOMAINSIFT_DATA=.../fr-en) runs with its non-English side as the in-domain
language; its runs and results are kept apart (crosslingual_fr-en.md). Select N = 5,000;
precision = the share of selected lines from <D>.train.en.

Rows: ``crosslingual`` (the defaults: the linear adaptive layer, the refining classifier),
``crosslingual-no-refine``, ``crosslingual-no-align`` and ``crosslingual-no-align-no-refine``
(paper 003's baseline: one classifier in the raw encoder space); from bench/crosslingual_variants.py (removed; in git history),
``refine-pool-only`` and ``refine-pool-only-no-align`` (the refining classifier on the pool's
pseudo-labels alone), ``procrustes`` and ``procrustes-no-refine`` (an orthogonal map in place of the
ridge map) and ``contrastive-residual`` / ``contrastive-mlp`` (paper 003's contrastive
adaptive layer at lr 1e-3 in place of the linear one, no refining); from the product,
``crosslingual-contrastive-no-refine`` (paper 003's system: its layer with its settings, no
refining) and ``crosslingual-contrastive`` (the same layer, refining on); ``lstsq-cosine`` (a least-squares map from
the German to the English vectors fitted on the same bitext, then Domain-Cosine: the reference
measured before the method existed); the monolingual English ``cosine`` and ``finetune`` rows of
bench/results/selection.json beside them. Wall time per run. Finished runs are kept under
bench/work/crosslingual/ (a killed benchmark resumes).

    python bench/live/crosslingual.py [--targets EMEA ...] [--methods crosslingual ...] [--seed S]
"""

from __future__ import annotations

import domainsift as ds
import argparse
import json
import time

import numpy as np
from _common import CLASSIC, LANG, PAIR, RESULTS, ROOT, SEVEN, data_file, write_results

from domainsift import __version__
from domainsift.io.corpus import read_corpus

WORK = ROOT / "bench" / "work" / "crosslingual" / PAIR
N = 5000
# every label pins what differs from the selector's defaults that matter here
METHODS = {"crosslingual": {}, "crosslingual-no-refine": {"refine": False},
           "crosslingual-no-align": {"align": False}, "crosslingual-no-align-no-refine": {"align": False, "refine": False},
           # retired in 0.11.0 with the benchmark's fork of the selector (bench/crosslingual_variants.py, in git
           # history; rows stay in the results): refine-pool-only(-no-align), procrustes(-no-refine),
           # contrastive-residual, contrastive-mlp
           # paper 003's layer with the paper's settings, from the product (--alignment contrastive)
           "crosslingual-contrastive-no-refine": {"alignment": "contrastive", "refine": False},
           "crosslingual-contrastive": {"alignment": "contrastive"},
           "lstsq-cosine": None,
           # 0.9.0 (issue 34): the multilingual encoder (USE-m). Without a bitext (bitext=()): no map, the
           # negatives are the pool's bottom two thirds by cosine to the German in-domain mean (paper 000's rule)
           "multilingual-no-bitext": {"model": "multilingual", "bitext": ()},
           "multilingual-no-bitext-no-refine": {"model": "multilingual", "bitext": (), "refine": False},
           # with the bitext of the six other domains: today's ridge map and refining on USE-m, paper 003's
           # own system (its contrastive layer with its settings, no refining), and its no-layer baseline
           "multilingual-ridge": {"model": "multilingual", "alignment": "ridge"},
           "multilingual-contrastive-no-refine": {"model": "multilingual", "alignment": "contrastive",
                                                  "refine": False},
           "multilingual-no-align-no-refine": {"model": "multilingual", "align": False, "refine": False},
           # 0.14.0 (issue 46, item 3): which use of a bitext on a shared-space encoder measures best: no map,
           # its in-domain-language side as the negatives, refining on; and the product's default given a
           # bitext (alignment auto: on USE-m the bitext is not used)
           "multilingual-no-align": {"model": "multilingual", "align": False},
           "multilingual-bitext-default": {"model": "multilingual", "alignment": "auto"}}


def bitext(target: str) -> list:
    return [(data_file(d, "train", LANG), data_file(d, "train", "en")) for d in SEVEN if d != target]


def lstsq_cosine(target: str, pool, seed: int) -> np.ndarray:
    """German in-domain vectors mapped into the English space by least squares on the bitext, then
    cosine to their centroid (the reference in the cross-lingual issue)."""
    from domainsift.io.corpus import read_parallel
    from domainsift.embed import EmbedConfig
    emb = EmbedConfig(progress=False, seed=seed).build()
    parts = [read_parallel(a, b) for a, b in bitext(target)]
    xa = np.concatenate([emb.encode(c.texts) for c in parts]).astype(np.float64)
    xb = np.concatenate([emb.encode(c.targets) for c in parts]).astype(np.float64)
    w, *_ = np.linalg.lstsq(np.c_[xa, np.ones(len(xa))], xb, rcond=None)
    xin = emb.encode(read_corpus([data_file(target, "test", LANG)]).texts).astype(np.float64)
    centroid = (np.c_[xin, np.ones(len(xin))] @ w).mean(0)
    xp = emb.encode(pool.texts).astype(np.float64)
    unit = lambda x: x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)  # noqa: E731
    return unit(xp) @ unit(centroid)


def run(target: str, label: str, pool, seed: int) -> dict:
    from domainsift.io import save_json
    from domainsift.jobs.evaluate import evaluate_run
    from domainsift.rundir import pool_manifest, write_scores
    from domainsift import Rule, run_select
    from domainsift.signature import make_signature
    run_dir = WORK / target / (label if seed == 0 else f"{label}-seed-{seed}")
    done = run_dir / "bench.json"
    if done.exists():
        return json.loads(done.read_text())
    t0 = time.time()
    if METHODS[label] is None:
        scores = lstsq_cosine(target, pool, seed)
        write_scores(run_dir, scores, *_ids_first(pool_manifest(pool)), make_signature("lstsq-cosine", model="all-MiniLM-L6-v2",
                                                                          seed=seed, bitext=bitext(target)))
        sig = {}
    else:
        in_domain = read_corpus([data_file(target, "test", LANG)])
        sig = ds.run(ds.RunSpec.single("crosslingual", in_domain, pool, run_dir, params={"bitext": bitext(target), "progress": False, **METHODS[label]}, seed=seed)).signature
    run_select(run_dir, rule=Rule(top=N))
    ev = evaluate_run(run_dir, [data_file(target, "train")])
    row = {"target": target, "method": label, "seed": seed, "precision": ev["precision"],
           "seconds": round(time.time() - t0, 1), "params": METHODS[label], "signature": sig.get("signature")}
    save_json(done, row)
    return row


def restore_rows() -> None:
    """A fresh clone has no bench/work: the results file's rows stand for their finished runs, so that
    rerunning some methods rebuilds the table with the rest (a row's run directory is not restored)."""
    path = RESULTS / ("crosslingual.json" if PAIR == "de-en" else f"crosslingual_{PAIR}.json")
    if not path.exists():
        return
    from domainsift.io import save_json
    for r in json.loads(path.read_text())["rows"]:
        done = WORK / r["target"] / (r["method"] if r["seed"] == 0 else f"{r['method']}-seed-{r['seed']}") / "bench.json"
        if not done.exists():
            save_json(done, r)


def monolingual(targets: list) -> dict:
    path = RESULTS / "selection.json"
    if not path.exists() or PAIR != "de-en":  # its English pool is the de-en one
        return {}
    out = {}
    for r in json.loads(path.read_text())["rows"]:
        if r["method"] in ("cosine-default", "finetune-default") and r["target"] in targets:
            name = r["method"].replace("-default", "")
            out[(r["target"], f"{name} (English in-domain set)")] = r["precision"]
    return out


def _ids_first(manifest_and_ids):
    """write_scores takes the ids before the manifest that pool_manifest returns first."""
    manifest, ids = manifest_and_ids
    return ids, manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", nargs="+", default=CLASSIC, choices=CLASSIC)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--redo", nargs="+", default=[], choices=list(METHODS), metavar="METHOD",
                    help="measure these labels again at this seed on this machine (their finished rows are replaced)")
    args = ap.parse_args()
    pool = read_corpus([data_file(d, "train") for d in SEVEN])
    assert len(pool) == 35000, len(pool)
    restore_rows()
    for label in args.redo:
        for target in args.targets:
            old = WORK / target / (label if args.seed == 0 else f"{label}-seed-{args.seed}") / "bench.json"
            if old.exists() and json.loads(old.read_text()).get("signature", "").rsplit("|v:", 1)[-1] != __version__:
                old.unlink()
    rows = []
    for target in args.targets:
        for label in args.methods:
            r = run(target, label, pool, args.seed)
            rows.append(r)
            print(f"{target:>14} {label:<24} precision {r['precision']:.3f}  {r['seconds']:>7.1f} s", flush=True)
    rows = [json.loads(p.read_text()) for p in sorted(WORK.glob("*/*/bench.json"))]
    targets = [t for t in CLASSIC if any(r["target"] == t for r in rows)]
    labels = [m for m in METHODS if any(r["method"] == m for r in rows)]
    cell = {(r["target"], r["method"]): r for r in rows if r["seed"] == 0}
    mono = monolingual(targets)
    lines = ["# Cross-lingual selection (paper 003's setting on the shared data)", "",
             f"In-domain set: <D>.test.{LANG} (500 lines); pool: the seven <D>.train.en (English, 35,000 lines); "
             f"bitext: the {PAIR} train pairs of the six other domains; N = 5,000; precision of the top N. "
             "Encoder: all-MiniLM-L6-v2 (English-trained), frozen; the multilingual-* rows: Universal Sentence "
             "Encoder Multilingual v3 (`--model multilingual`), frozen, with no bitext at all in the -no-bitext rows; multilingual-ridge pins `--alignment ridge` (the map "
             "fitted on the bitext), multilingual-no-align uses the bitext's German side as the negatives with no map, "
             "multilingual-bitext-default is the product's default given the bitext (0.14.0: `--alignment auto`, "
             "which does not use a bitext on a shared-space encoder). The tables are rebuilt from every finished run "
             "under bench/work/crosslingual/ (the benchmark resumes), so the command above is the last invocation: "
             "seed 0 ran `python bench/live/crosslingual.py`, seed 1 `python bench/live/crosslingual.py --seed 1 --methods ...` "
             "with the methods its table shows. Rows of 0.4.0-0.5.1 (the variants, seed 1), as they were measured "
             "then: crosslingual_archive_0.5.md."]
    for seed in sorted({r["seed"] for r in rows}):
        at = {(r["target"], r["method"]): r["precision"] for r in rows if r["seed"] == seed}
        lines += ["", f"Seed {seed}:", "", "| method | " + " | ".join(targets) + " | mean |",
                  "|---|" + "---|" * (len(targets) + 1)]
        for m in [m for m in labels if any(k[1] == m for k in at)] + sorted({k[1] for k in mono}):
            vals = [at.get((t, m), mono.get((t, m))) for t in targets]
            mean = f"{np.mean(vals):.4f}" if all(v is not None for v in vals) else "-"
            lines.append(f"| {m} | " + " | ".join(f"{v:.3f}" if v is not None else "-" for v in vals) + f" | {mean} |")
    lines += ["", "Seconds per run, seed 0 (encoding through the cache: the first run encodes the bitext files, "
              "later ones read them):", "", "| method | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets)]
    for m in labels:
        lines.append(f"| {m} | " + " | ".join(f"{cell[(t, m)]['seconds']:.0f}" if (t, m) in cell else "-"
                                              for t in targets) + " |")
    write_results("crosslingual" if PAIR == "de-en" else f"crosslingual_{PAIR}", {"N": N, "pair": PAIR, "rows": rows, "monolingual": {f"{t}|{m}": v for (t, m), v in mono.items()}},
                  "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
