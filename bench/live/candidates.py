"""Benchmark "candidates" (issue 48, item 2): how many pool lines the cascade hands its teacher.

Under ``--cascade`` the student ranks the pool and the teacher scores the student's top M, M planned on
the teacher-scored sample (out-of-fold student scores) so that the candidates hold N of the teacher's
top 1.25 N (``domainsift.pipeline.cascade``). A sharper student needs fewer candidates for the same
guarantee. This benchmark fits the product's student (``StudentSelector.fit`` with the teacher's own
scores of the pool, so that each head is fitted without running the teacher again) and measures, for a
selection of ``share`` of the pool:

- planned: the candidates the product's plan hands the teacher (``pipeline.cascade.plan``), as a share
  of the pool;
- needed: the fewest candidates that hold N of the teacher's top 1.25 N over the whole pool (what a
  perfect plan would ask for with this student);
- held: whether the planned candidates hold N of the teacher's top 1.25 N (the guarantee);
- precision: of the cascade's selection (the teacher's top N among the planned candidates) against the
  target's own lines; and the student alone's top N.

The teacher is the default finetune (seed 0, its defaults; in-domain set <D>.test.en; ``--teacher cosine``:
Domain-Cosine with the default encoder), scored over every pool line once by ``run(RunSpec.single(...))`` into
bench/work/candidates/teacher/ (teacher-cosine/ for cosine; kept: the benchmark resumes).
Pools: the shared pool (the seven train files, 35,000 lines, every target 14.3%; the five classic
targets) and the negatives-study pools (bench/live/negatives_pools.py: a target at 2.0% and at 29.4%;
KDE4 and OpenSubtitles). The 10M-line pool of bench/live/scale.py is the shared pool's lines repeated
with a line-number prefix, so the shared pool's rows stand for it.

Each row records the product version and the student's head (its signature): rows of earlier versions
stay, so two heads are compared by running this benchmark at each version.

    python bench/live/candidates.py [--shares 0.01 0.05 0.1429] [--pools shared small large] [--seed S] [--teacher-layers K]
                                    [--teacher finetune|cosine]
                                    [--report-only]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time

import numpy as np
from _common import CLASSIC, ROOT, SEVEN, data_file, earlier_rows, merge_rows, write_results

WORK = ROOT / "bench" / "work" / "candidates"
MIXED_TARGETS = ["KDE4", "OpenSubtitles"]


class SavedTeacher:
    """The teacher's scores of the pool, read back by position: what ``StudentSelector.fit`` asks of a
    fitted teacher (its name, signature and ``score`` of the student's sample)."""

    def __init__(self, name: str, signature: dict, corpus, scores: np.ndarray):
        self.name, self._sig = name, signature
        self._at = {rid: float(s) for rid, s in zip(corpus.ids, scores)}

    def signature_params(self) -> dict:
        return dict(self._sig)

    def score(self, records) -> np.ndarray:
        return np.array([self._at[rid] for rid in records.ids])


def pool_targets(pools: list[str], targets: list[str] | None):
    """``(pool, target)`` for each pool and its targets (given, or the pool's own: the five classic domains of
    the shared pool, KDE4 and OpenSubtitles of the negatives-study pools)."""
    for pool in pools:
        for target in targets or (CLASSIC if pool == "shared" else MIXED_TARGETS):
            yield pool, target


def pool_files(pool: str, target: str) -> tuple[list[str], str]:
    if pool == "shared":
        return [data_file(d, "train") for d in SEVEN], data_file(target, "train")
    from negatives_pools import build_pool
    files, target_file, _ = build_pool(pool, target)
    return files, target_file


def teacher_run(pool: str, target: str, corpus, in_domain, seed: int = 0, layers: int = 0,
                method: str = "finetune"):
    import domainsift as ds
    from domainsift.rundir import load_scores
    if method == "cosine":  # no randomness, no layers: one run a target
        out = WORK / "teacher-cosine" / pool / target
        params = {"progress": False}
    else:
        out = WORK / "teacher" / pool / ((target if seed == 0 else f"{target}-seed-{seed}")
                                         + (f"-layers-{layers}" if layers else ""))
        params = {"progress": False, **({"layers": layers} if layers else {})}
    if not (out / "scores.npy").exists():
        shutil.rmtree(out, ignore_errors=True)
        t = time.time()
        ds.run(ds.RunSpec.single(method, in_domain, corpus, out, params=params, seed=seed)).signature
        print(f"teacher {pool}/{target}: {time.time() - t:.0f} s", flush=True)
    run = load_scores(out)
    sig = json.loads((out / "signature.json").read_text())
    return run, sig


def measure(pool: str, target: str, shares: list[float], seed: int = 0, layers: int = 0,
            method: str = "finetune") -> list[dict]:
    import domainsift as ds
    from domainsift import __version__
    from domainsift.pipeline.cascade import SLACK, learn_share, plan, plan_share
    from domainsift.select.student import StudentSelector
    files, target_file = pool_files(pool, target)
    corpus = ds.read_corpus(files)
    in_domain = ds.read_corpus([data_file(target, "test")])
    run, sig = teacher_run(pool, target, corpus, in_domain, seed, layers, method)
    real = lambda ids: [(os.path.realpath(f), ln) for f, ln in ids]  # noqa: E731
    if real(run.ids) != real(corpus.ids):
        raise SystemExit(f"{pool}/{target}: the teacher's run holds the pool's lines in another order")
    t = np.asarray(run.scores, dtype=np.float64)
    teacher = SavedTeacher(method, {k: v for k, v in sig.items() if k in ("model", "epochs", "seed")},
                           corpus, t)
    truth = np.array([os.path.realpath(f) == os.path.realpath(target_file) for f, _ in corpus.ids])
    n = len(t)
    rows = []
    for share in shares:
        student = StudentSelector(teacher=method, share=learn_share(share), seed=seed, progress=False)
        t0 = time.time()
        student.fit(in_domain, corpus, teacher=teacher)
        fit_s = time.time() - t0
        s = np.asarray(student.score(corpus), dtype=np.float64)
        m = plan(student, n, share, None)["candidates"]
        n_top = max(1, int(round(share * n)))
        wide = int(np.ceil((1 + SLACK) * n_top))
        t_order = np.argsort(-t, kind="stable")
        cand = np.argsort(-s, kind="stable")[:m]
        held = int(np.isin(cand, t_order[:wide]).sum())
        chosen = cand[np.argsort(-t[cand], kind="stable")[:n_top]]
        alone = np.argsort(-s, kind="stable")[:n_top]
        sp = student.signature_params()
        rows.append({"version": __version__, "head": sp.get("head", "top share vs bottom two thirds"),
                     "teacher": method + (f" --layers {layers}" if layers else ""),
                     "pool": pool, "target": target, "seed": seed, "n_pool": n, "share": share, "N": n_top,
                     "target_share": round(float(truth.mean()), 4),
                     "planned": round(m / n, 4), "needed": round(plan_share(s, t, share), 4),
                     "held": held >= n_top, "held_lines": held,
                     "precision_cascade": round(float(truth[chosen].mean()), 4),
                     "precision_teacher": round(float(truth[t_order[:n_top]].mean()), 4),
                     "precision_student": round(float(truth[alone].mean()), 4),
                     "student_fit_seconds": round(fit_s, 1)})
        r = rows[-1]
        print(f"{pool} {target} share {share}: planned {r['planned']:.4f} needed {r['needed']:.4f} "
              f"held {r['held']} cascade {r['precision_cascade']:.4f} student {r['precision_student']:.4f}",
              flush=True)
    return rows


def key(r: dict) -> tuple:
    return (r["version"], r["head"], r["pool"], r["target"], r["share"], r.get("seed", 0),
            r.get("teacher", "finetune"))


def run_of(r: dict) -> tuple:
    """The row's version, student head, seed and teacher: one line of the tables per run and pool."""
    return r["version"], r["head"], r.get("seed", 0), r.get("teacher", "finetune")


def report(rows: list[dict]) -> None:
    heads = sorted({run_of(r) for r in rows})
    md = ["# Candidates the cascade's teacher scores, by the student's head (issue 48, item 2)", "",
          "The product's student fitted on the default finetune teacher's scores of the pool (seed 0, in-domain "
          "set <D>.test.en); for a selection of `share` of the pool (N lines): **planned**, the candidates the "
          "product's plan hands the teacher (share of the pool); **needed**, the fewest that hold N of the "
          "teacher's top 1.25 N; **held**, whether the planned ones do (the guarantee); precision of the "
          "cascade's top N (the teacher's top N among the planned candidates) and of the student alone's, "
          "against the target's lines. Pools: shared (35,000 lines, target 14.3%), small (target 2.0%), large "
          "(target 29.4%). One row per version, head and seed; means over the targets of each pool. The rows "
          "are made by `python bench/live/candidates.py` (seed 0) and `python bench/live/candidates.py --pools "
          "shared --seed 1`, at the version each row names (and `--teacher-layers 3 --pools shared`: the teacher "
          "`finetune --layers 3`; `--teacher cosine`: the teacher `cosine`); this file's header "
          "names the last command run.", "",
          "| version | student head | teacher | seed | pool | share | targets | planned | needed | held | cascade precision | "
          "teacher precision | student precision |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for v, h, sd, tc in heads:
        for pool in ("shared", "small", "large"):
            for share in sorted({r["share"] for r in rows}):
                g = [r for r in rows if (*run_of(r), r["pool"], r["share"]) == (v, h, sd, tc, pool, share)]
                if not g:
                    continue
                mean = lambda k: float(np.mean([r[k] for r in g]))  # noqa: E731
                md.append(f"| {v} | {h} | {tc} | {sd} | {pool} | {share:g} | {len(g)} | {mean('planned'):.4f} | "
                          f"{mean('needed'):.4f} | {sum(r['held'] for r in g)}/{len(g)} | "
                          f"{mean('precision_cascade'):.4f} | {mean('precision_teacher'):.4f} | "
                          f"{mean('precision_student'):.4f} |")
    md += ["", "Per target (planned / needed):", "",
           "| version | head | teacher | seed | pool | share | " + " | ".join(CLASSIC) + " |",
           "|---|---|---|---|---|---|" + "---|" * len(CLASSIC)]
    for v, h, sd, tc in heads:
        for pool in ("shared", "small", "large"):
            for share in sorted({r["share"] for r in rows}):
                g = {r["target"]: r for r in rows if (*run_of(r), r["pool"], r["share"]) == (v, h, sd, tc, pool, share)}
                if g:
                    md.append(f"| {v} | {h} | {tc} | {sd} | {pool} | {share:g} | " + " | ".join(
                        f"{g[t]['planned']:.4f} / {g[t]['needed']:.4f}" if t in g else "" for t in CLASSIC) + " |")
    write_results("candidates", {"rows": rows}, "\n".join(md) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pools", nargs="+", default=["shared", "small", "large"])
    ap.add_argument("--shares", nargs="+", type=float, default=[0.01, 0.05, 0.1429])
    ap.add_argument("--targets", nargs="+", default=None)
    ap.add_argument("--seed", type=int, default=0, help="the teacher's and the student's seed")
    ap.add_argument("--teacher-layers", type=int, default=0, help="the teacher's finetune --layers (0: all)")
    ap.add_argument("--teacher", default="finetune", choices=["finetune", "cosine"],
                    help="the teacher method (cosine: the default encoder's Domain-Cosine, no seed)")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    rows = earlier_rows("candidates")
    if not args.report_only:
        for pool, target in pool_targets(args.pools, args.targets):
            rows = merge_rows(rows, measure(pool, target, args.shares, args.seed, args.teacher_layers,
                                            args.teacher), key)
            report(rows)
    report(rows)


if __name__ == "__main__":
    main()
