"""How many candidates a cascade needs: plan rules replayed on finished benchmark runs.

A cascade's selection is the teacher's top N among the student's top M. With the full method's scores
of every pool line and the cascade's saved student, any M can be replayed exactly (the cascade's teacher
is the full run's: same method, parameters, seed and pool), so a plan rule's M and the precision it
gives are computed here without scoring anything again.

For each target and seed (the runs bench/live/selection.py left under bench/work/selection: the full
``finetune-default`` run and the ``cascade-finetune`` run's ``student/``), and selections of 1%, 5% and
14.3% of the 35,000-line pool (N = 350, 1,750, 5,000):

* the rule's M, estimated as the product does on the student's saved sample estimate (0.8.0's students
  carry a held-out quarter, 5,000 lines; 0.9.0's the out-of-fold scores of the whole sample), at least
  twice the selection;
* the M the same rule needs on the whole pool (what the estimate estimates);
* the precision of the cascade's selection minus the full method's, against the gold labels.

Rules: ``recall99`` (0.8.0's: 99% of the teacher's top N), ``recall90``, and ``slackD`` (0.9.0's,
D = 0.25: N of the teacher's top (1 + D) N; see domainsift.engine.cascade.plan_share).

With ``--scale``: the same rules' M on the 1M-line scale pool (bench/live/scale.py's
``run-finetune-cascade-1000000``, KDE4 in-domain, its student re-scoring every line), where the
candidates the 0.8.0 run kept stand in for the pool's teacher scores.

    python bench/archive/cascade_plan.py [--scale]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))  # the shared helpers: bench/live/_common.py
from _common import CLASSIC, ROOT, data_file, write_results

from domainsift.io.corpus import read_corpus
from domainsift.rundir import load_scores
from domainsift.engine.cascade import plan_share  # noqa: E402
from domainsift.select.student import StudentSelector  # noqa: E402

WORK = ROOT / "bench" / "work" / "selection"
SCALE = ROOT / "bench" / "work" / "scale" / "old-0.8.0" / "run-finetune-cascade-1000000"  # 0.8.0 kept 478,800 candidates
SIZES = (350, 1750, 5000)
RULES = (("recall99", "recall", 0.99), ("recall90", "recall", 0.90), ("slack0.1", "slack", 0.1),
         ("slack0.25", "slack", 0.25))
MIN_FACTOR = 2
RUNS = ((0, "finetune-default", "cascade-finetune"), (1, "finetune-default-seed-1", "cascade-finetune-seed-1"))


def recall_share(student: np.ndarray, teacher: np.ndarray, share: float, recall: float) -> float:
    """The share of the lines (student order) that holds ``recall`` of the teacher's top ``share``."""
    n = len(teacher)
    n_top = max(1, int(round(share * n)))
    pos = np.empty(n, np.int64)
    pos[np.argsort(-student, kind="stable")] = np.arange(n)
    r = np.sort(pos[np.argsort(-teacher, kind="stable")[:n_top]])
    return float((r[int(np.ceil(recall * n_top)) - 1] + 1) / n)


def need(kind: str, x: float, student: np.ndarray, teacher: np.ndarray, share: float) -> float:
    return recall_share(student, teacher, share, x) if kind == "recall" else plan_share(student, teacher, share, x)


def cascade_precision(student, teacher, gold, n_sel: int, m: int) -> float:
    cand = np.argsort(-student, kind="stable")[:m]
    return float(gold[cand[np.argsort(-teacher[cand], kind="stable")[:n_sel]]].mean())


def benchmark_rows() -> list:
    rows = []
    for target in CLASSIC:
        for seed, full, casc in RUNS:
            full_dir, student_dir = WORK / target / full, WORK / target / casc / "student"
            if not (full_dir / "scores.npy").exists() or not student_dir.exists():
                continue
            run = load_scores(full_dir)
            pool = read_corpus(run.pool["files"])
            assert [tuple(i) for i in pool.ids] == [tuple(i) for i in run.ids], "the pool reads in another order"
            gold_file = os.path.realpath(data_file(target, "train"))
            gold = np.array([os.path.realpath(f) == gold_file for f, _ in run.ids])
            sel = StudentSelector(student_from=str(student_dir)).fit(None)
            student, teacher = sel.student_.score(pool.texts), np.asarray(run.scores, dtype=np.float64)
            est = sel.held_out_
            n = len(teacher)
            for n_sel in SIZES:
                share = n_sel / n
                full_p = float(gold[np.argsort(-teacher, kind="stable")[:n_sel]].mean())
                for name, kind, x in RULES:
                    m = int(min(n, max(np.ceil(need(kind, x, est["student"], est["teacher"], share) * n),
                                       MIN_FACTOR * n_sel)))
                    rows.append({"target": target, "seed": seed, "n_selected": n_sel, "rule": name,
                                 "estimate_lines": int(len(est["teacher"])), "m_share": m / n,
                                 "true_share": need(kind, x, student, teacher, share),
                                 "full_precision": full_p,
                                 "delta": cascade_precision(student, teacher, gold, n_sel, m) - full_p})
            print(target, seed, "done", flush=True)
    return rows


def scale_rows() -> list:
    run = json.loads((SCALE / "run.json").read_text())
    scores = np.load(SCALE / "scores.npy")
    m0 = run["cascade"]["candidates"]
    cand = np.argsort(-scores, kind="stable")[:m0]
    teacher = np.full(len(scores), -np.inf)
    teacher[cand] = scores[cand]  # the rest were never teacher-scored: below every candidate
    pool = ROOT / "bench" / "work" / "scale" / "pool-1000000.txt"
    texts = pool.read_text(encoding="utf-8").split("\n")[:len(scores)]
    sel = StudentSelector(student_from=str(SCALE / "student")).fit(None)
    student = sel.student_.score(texts)
    est = sel.held_out_
    rows = []
    for share in (0.01, 0.02, 0.05):
        for name, kind, x in RULES:
            rows.append({"share": share, "rule": name, "estimate_lines": int(len(est["teacher"])),
                         "m_share": need(kind, x, est["student"], est["teacher"], share),
                         "true_share": need(kind, x, student, teacher, share)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", action="store_true", help="also the 1M-line scale pool's run")
    args = ap.parse_args()
    rows = benchmark_rows()
    lines = ["# How many candidates a cascade needs (plan rules replayed)", "",
             "Finished finetune runs and their cascades' students (bench/work/selection), replayed for selections "
             "of 1%, 5% and 14.3% of the 35,000-line pool: the rule's M (estimated on the student's saved sample, "
             "at least twice the selection) as a share of the pool; the M the same rule needs on the whole pool; "
             "the cascade's precision minus the full method's (mean and worst of 5 targets x seeds 0-1). Nothing "
             "is scored again but the students' pass over the pool.", "",
             "| N | rule | estimated on (lines) | M / pool (mean) | M / pool (max) | needed on the pool (mean) | "
             "precision - full (mean) | worst |", "|---|---|---|---|---|---|---|---|"]
    for n_sel in SIZES:
        for name, _, _ in RULES:
            r = [x for x in rows if x["n_selected"] == n_sel and x["rule"] == name]
            if not r:
                continue
            d = np.array([x["delta"] for x in r])
            lines.append(f"| {n_sel:,} | {name} | {', '.join(sorted({str(x['estimate_lines']) for x in r}))} | "
                         f"{np.mean([x['m_share'] for x in r]):.3f} | {max(x['m_share'] for x in r):.3f} | "
                         f"{np.mean([x['true_share'] for x in r]):.3f} | {d.mean():+.4f} | {d.min():+.4f} |")
    payload = {"rows": rows}
    if args.scale:
        srows = scale_rows()
        payload["scale"] = srows
        lines += ["", "## The 1M-line scale pool (KDE4 in-domain, the student of bench/live/scale.py's finetune cascade)", "",
                  "| selection | rule | estimated on (lines) | M / pool (estimate) | M / pool (needed) |",
                  "|---|---|---|---|---|"]
        lines += [f"| {r['share']:.0%} | {r['rule']} | {r['estimate_lines']} | {r['m_share']:.3f} | "
                  f"{r['true_share']:.3f} |" for r in srows]
    write_results("cascade_plan", payload, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
