"""Benchmark "enrichment" (issue 48, item 2): the student's sample, enriched or grown, against the candidates it needs.

Since 0.28.0 the cascade's student (``domainsift.select.student``) learns from a uniform sample of the
pool scored by the teacher and from an enrichment: the teacher also scores the top fifth, by a student
fitted on the sample, of a further draw of the pool. This benchmark asks whether those teacher-scored
lines are worth more than as many uniform ones, on lines no student saw.

The shared pool's lines are shuffled (seed 0); the last ``--judged`` of them are judged, and each
student is fitted by the product (``StudentSelector.fit`` with the default finetune teacher's saved
scores, as bench/live/candidates.py) on a part of the rest:

- ``U``: the first U lines as its whole pool (a sample of U, nothing to enrich from);
- ``U + E uniform``: the first U + E lines as its whole pool, sample U + E (as many teacher-scored lines
  as the enriched student, all uniform);
- ``U enriched``: the first U + D lines, sample U: the product's enrichment draws the other D and the
  teacher scores the student's top E of them (E = D / 5);
- ``U + D uniform``: the first U + D lines, sample U + D (every line the enriched student saw, all scored).

For a selection of ``share`` of the judged lines (N): **needed**, the fewest of the student's top judged
lines that hold N of the teacher's top 1.25 N (the plan's guarantee, ``pipeline.cascade.plan_share``), as a
share of the judged lines; and **planned**, the plan from the student's out-of-fold sample scores
(``pipeline.cascade.candidates_for``). Means over the five classic targets.

    python bench/live/enrichment.py [--sample 10000] [--judged 12500] [--shares 0.01 0.05] [--report-only]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
from _common import CLASSIC, SEVEN, data_file, earlier_rows, merge_rows, write_results
from candidates import SavedTeacher, teacher_run


def measure(target: str, sample: int, judged: int, shares: list[float]) -> list[dict]:
    import domainsift as ds
    from domainsift import __version__
    from domainsift.pipeline.cascade import candidates_for, learn_share, plan_share
    from domainsift.select.student import StudentSelector, enrichment
    corpus = ds.read_corpus([data_file(d, "train") for d in SEVEN])
    in_domain = ds.read_corpus([data_file(target, "test")])
    run, sig = teacher_run("shared", target, corpus, in_domain)
    real = lambda ids: [(os.path.realpath(f), ln) for f, ln in ids]  # noqa: E731
    if real(run.ids) != real(corpus.ids):
        raise SystemExit(f"shared/{target}: the teacher's run holds the pool's lines in another order")
    t = np.asarray(run.scores, dtype=np.float64)
    teacher = SavedTeacher("finetune", {k: v for k, v in sig.items() if k in ("model", "epochs", "seed")}, corpus, t)
    n = len(t)
    perm = np.random.default_rng(0).permutation(n)
    judge = np.sort(perm[n - judged:])
    rest = perm[:n - judged]
    draw, extra = enrichment(sample, len(rest) - sample)
    arms = {"U": (sample, sample), f"U + E uniform": (sample + extra, sample + extra),
            "U enriched": (sample + draw, sample), "U + D uniform": (sample + draw, sample + draw)}
    rows = []
    for share in shares:
        for arm, (lines, k) in arms.items():
            student = StudentSelector(teacher="finetune", share=learn_share(share), sample=k, seed=0, progress=False)
            student.fit(in_domain, corpus[[int(i) for i in np.sort(rest[:lines])]], teacher=teacher)
            s = np.asarray(student.score(corpus[[int(i) for i in judge]]), dtype=np.float64)
            rows.append({"version": __version__, "target": target, "share": share, "arm": arm, "sample": sample,
                         "judged": judged, "draw": draw, "enriched": int(student.signature_params().get("n_enriched") or 0),
                         "teacher_lines": int(k + (student.signature_params().get("n_enriched") or 0)),
                         "needed": round(plan_share(s, t[judge], share), 4),
                         "planned": round(candidates_for(student, share)["share"], 4)})
            r = rows[-1]
            print(f"{target} {share} {arm}: teacher lines {r['teacher_lines']} needed {r['needed']:.4f} "
                  f"planned {r['planned']:.4f}", flush=True)
    return rows


def key(r: dict) -> tuple:
    return r["version"], r["target"], r["share"], r["arm"], r["sample"], r["judged"]


def report(rows: list[dict]) -> None:
    md = ["# The student's sample: enriched or grown (issue 48, item 2)", "",
          "The shared pool (35,000 lines) shuffled (seed 0); the last `judged` lines judged, each student fitted "
          "by the product (`StudentSelector.fit`, the default finetune teacher's saved scores, in-domain set "
          "<D>.test.en) on a part of the rest. **U**: U lines, all of them its sample; **U + E uniform**: as many "
          "teacher-scored lines as the enriched one, all uniform; **U enriched**: U + D lines, sample U, the "
          "product's enrichment scoring the student's top E = D / 5 of the other D; **U + D uniform**: all U + D "
          "lines scored. **needed**: the fewest of the student's top judged lines that hold N of the teacher's top "
          "1.25 N (N: `share` of the judged lines), a share of them; **planned**: the plan from the student's "
          "out-of-fold sample scores. Means over the five classic targets.", "",
          "| version | sample U | draw D | judged | share | arm | teacher-scored lines | needed | planned | "
          "needed per target (" + ", ".join(CLASSIC) + ") |", "|---|---|---|---|---|---|---|---|---|---|"]
    groups = sorted({(r["version"], r["sample"], r["draw"], r["judged"], r["share"]) for r in rows})
    order = ["U", "U + E uniform", "U enriched", "U + D uniform"]
    for v, u, d, j, share in groups:
        for arm in order:
            g = {r["target"]: r for r in rows if (r["version"], r["sample"], r["draw"], r["judged"], r["share"], r["arm"])
                 == (v, u, d, j, share, arm)}
            if not g:
                continue
            mean = lambda k: float(np.mean([r[k] for r in g.values()]))  # noqa: E731
            md.append(f"| {v} | {u:,} | {d:,} | {j:,} | {share:g} | {arm} | {int(mean('teacher_lines')):,} | "
                      f"{mean('needed'):.4f} | {mean('planned'):.4f} | "
                      + ", ".join(f"{g[t]['needed']:.4f}" if t in g else "-" for t in CLASSIC) + " |")
    write_results("enrichment", {"rows": rows}, "\n".join(md) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sample", type=int, default=10000, help="U, the uniform sample")
    ap.add_argument("--judged", type=int, default=12500, help="the shuffled pool's last lines, judged")
    ap.add_argument("--shares", nargs="+", type=float, default=[0.01, 0.05])
    ap.add_argument("--targets", nargs="+", default=CLASSIC)
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()
    rows = earlier_rows("enrichment")
    if not a.report_only:
        for target in a.targets:
            rows = merge_rows(rows, measure(target, a.sample, a.judged, a.shares), key)
            report(rows)
    report(rows)


if __name__ == "__main__":
    main()
