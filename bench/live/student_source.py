"""Benchmark "student source" (issue 48, item 2): which encoder the cascade's student distils its static
token vectors from: the teacher's base encoder (the product until now) or the teacher's fine-tuned one.

A cascade's student is a logistic head over the mean of static token vectors (Model2Vec's recipe:
each vocabulary token through the encoder, alone). Until now they come from the base encoder
(MiniLM), the same vectors whatever the teacher learnt. A finetune teacher's own encoder has learnt
what separates the in-domain set from the pool; its tokens, distilled the same way, carry that. This
benchmark measures what each source costs the cascade, through the product's public API only:

- the teacher: ``finetune`` (``--layers K``, seed 0, in-domain set <D>.test.en) fitted on the whole
  pool, scores every line; its fit is saved (``save_state``) and loaded back, and its encoder is the
  source of the fine-tuned vectors (``StudentSelector(vectors='teacher')``, through the teacher's
  ``distil_source``; the first shared rows, made by 0.20.1, distilled the same saved folder through
  ``model=``);
- the pool is split once (seeded): the student learns from a 20,000-line part (its sample, scored by
  the teacher) and is judged on the other lines, none of which it saw;
- for a selection of ``share`` of the judged lines (N): **needed**, the fewest of the student's top
  lines that hold N of the teacher's top 1.25 N (``domainsift.pipeline.cascade.plan_share``: what the
  plan hands the teacher with a perfect estimate), and **planned**, the product's plan from the
  student's out-of-fold scores of its sample (``candidates_for``), both as shares of the lines.

Pools: shared (the seven train files, 35,000 lines, each target 14.3%) and the negatives-study pools
(bench/live/negatives_pools.py: small, a target at 2.0%; large, at 29.4%).

    python bench/live/student_source.py [--pools shared small large] [--teacher-layers 3] [--shares 0.01 0.05]
                                        [--report-only]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import ROOT, data_file, earlier_rows, merge_rows, version_key, write_results
from candidates import SavedTeacher, pool_files, pool_targets

WORK = ROOT / "bench" / "work" / "student_source"
SAMPLE = 20000
from domainsift.select.student import FEATURES as FEATURES_NOW, FOLDS as FOLDS_NOW, HEAD as HEAD_NOW  # noqa: E402


class ScoredTeacher(SavedTeacher):
    """A fitted teacher's scores read back by line id (candidates.py's), and its fitted encoder for the
    student's vectors: what ``StudentSelector.fit`` asks of a teacher."""

    def __init__(self, name: str, signature: dict, corpus, scores, fitted=None):
        super().__init__(name, signature, corpus, scores)
        self._fitted = fitted

    def distil_source(self):
        """The fitted teacher's own encoder (the protocol's ``distil_source``), None without one."""
        return self._fitted.distil_source() if self._fitted is not None else None


# a row's source: the student's vectors=. 'both' (the two tables side by side, 0.21.0 at 6cdade9) measured
# worse than 'teacher' on the shared pool and left the product: its rows stay, its code is in git
SOURCES = {"base": "base", "fine-tuned": "teacher"}
REPORTED = ("base", "fine-tuned", "both")


def measure(pool: str, target: str, shares: list[float], layers: int, seed: int = 0,
            sources=("base", "fine-tuned"), samples=(SAMPLE,)) -> list[dict]:
    import domainsift as ds
    from domainsift import __version__
    from domainsift.pipeline.cascade import candidates_for, learn_share, plan_share
    from domainsift.select import get_selector
    from domainsift.select.student import FOLDS, StudentSelector
    files, _ = pool_files(pool, target)
    corpus = ds.read_corpus(files)
    in_domain = ds.read_corpus([data_file(target, "test")])
    folder = WORK / pool / f"{target}-layers-{layers}-seed-{seed}"
    scores_file = folder / "teacher_scores.npy"
    t0 = time.time()
    if not scores_file.exists():
        teacher = get_selector("finetune", layers=layers, seed=seed, progress=False).fit(in_domain, corpus)
        folder.mkdir(parents=True, exist_ok=True)
        teacher.save_state(folder / "teacher")
        np.save(scores_file, np.asarray(teacher.score(corpus), dtype=np.float64))
    t = np.load(scores_file)
    teacher_s = time.time() - t0
    n = len(t)
    rng = np.random.default_rng(1000 + seed)  # the split: the student's part and the judged lines
    part = np.sort(rng.choice(n, size=min(SAMPLE, n // 2), replace=False))
    judged = np.setdiff1d(np.arange(n), part)
    scored = ScoredTeacher("finetune", {"layers": layers, "seed": seed}, corpus, t)
    fitted = get_selector("finetune", layers=layers, seed=seed, progress=False).load_state(folder / "teacher")
    tuned = ScoredTeacher("finetune", {"layers": layers, "seed": seed}, corpus, t, fitted)
    # a smaller sample is a seeded part of the student's part (each size's lines inside the next one's), so
    # every size is judged on the same lines
    nested = np.random.default_rng(2000 + seed).permutation(part)
    rows = []
    for share, size, source in ((a, b, c) for a in shares for b in samples for c in sources):
        sub = part if size >= len(part) else np.sort(nested[:size])
        st = StudentSelector(teacher="finetune", share=learn_share(share), seed=seed, sample=SAMPLE,
                             cache_dir=str(WORK / "cache"), progress=False, vectors=SOURCES[source])
        t1 = time.time()
        st.fit(in_domain, corpus[[int(i) for i in sub]], teacher=tuned if source != "base" else scored)
        fit_s = time.time() - t1
        s = np.asarray(st.score(corpus[[int(i) for i in judged]]), dtype=np.float64)
        need = plan_share(s, t[judged], share)
        planned = candidates_for(st, share)["share"]
        rows.append({"version": __version__, "pool": pool, "target": target, "seed": seed,
                     "teacher": f"finetune --layers {layers}" if layers else "finetune",
                     "source": source, "features": st.signature_params()["features"], "folds": FOLDS,
                     "head": st.signature_params()["head"],
                     "share": share, **({} if size >= SAMPLE else {"sample": int(len(sub))}),
                     "judged": int(len(judged)),
                     "needed": round(need, 4), "planned": round(planned, 4),
                     "student_fit_seconds": round(fit_s, 1), "teacher_seconds": round(teacher_s, 1)})
        print(f"{pool} {target} {share:g} {source} sample {len(sub)}: needed {need:.4f} planned {planned:.4f} "
              f"(fit {fit_s:.0f} s)", flush=True)
    return rows


def key(r: dict) -> tuple:
    return (r["version"], r["pool"], r["target"], r["seed"], r["teacher"], r["source"], r["share"], r.get("folds", 4),
            r.get("sample", 0))


def folds_of(r: dict) -> int:
    return r.get("folds", 4)  # rows made before the field: the plan's 4 folds


def is_product(r: dict) -> bool:
    """A row of what the product ran at its version: from 0.23.0 on, a row of the folds it ships (rows of
    4 folds at 0.23.0 measured the plan that 8 folds replaced)."""
    from domainsift.select.student import FOLDS
    return "sample" not in r and (version_key(r["version"]) < version_key("0.23.0") or folds_of(r) == FOLDS)


def report(all_rows: list[dict]) -> None:
    rows = [r for r in all_rows if is_product(r)]
    srcs = [x for x in REPORTED if any(r["source"] == x for r in rows)]
    md = ["# The cascade's student: static vectors from the base or the fine-tuned encoder (issue 48, item 2)", "",
          "The teacher (finetune, seed 0, in-domain set <D>.test.en) fitted on the whole pool; the student "
          f"(the product's head) learns from a seeded {SAMPLE:,}-line part of the pool scored by the teacher, "
          "with static vectors distilled from the base encoder (MiniLM: `vectors='base'`), from the teacher's "
          "fine-tuned encoder (`'teacher'`, the default since 0.21.0), or both side by side (`'both'`: 0.21.0 at "
          "commit 6cdade9, removed after these rows), and is judged on the other lines. "
          "needed: the fewest of the student's top judged lines that hold N of the teacher's top 1.25 N (N: the "
          "share of the judged lines); planned: the product's plan from the student's out-of-fold sample "
          "scores. Shares of the judged lines; mean over the targets. Rows made by `python bench/live/student_source.py "
          "--targets KDE4 EMEA JRC-Acquis OpenSubtitles Tanzil` (shared; base and fine-tuned, the latter through "
          "`model=` the saved teacher, which 0.20.1 takes), `--pools shared --sources both` and `--pools small large "
          "--sources base fine-tuned`, at the version each row names; this file's header names the last command run.",
          "",
          "| teacher | pool | share | targets | " + " | ".join(f"{x}: needed" for x in srcs) + " | "
          + " | ".join(f"{x}: planned" for x in srcs) + " | student fit (s) " + " / ".join(srcs) + " | versions |",
          "|---|---|---|---|" + "---|" * (2 * len(srcs) + 2)]

    def newest(g: list[dict], x: str) -> list[dict]:  # a source's rows of the newest version that made it
        have = [r for r in g if r["source"] == x]
        v = max((r["version"] for r in have), key=version_key, default=None)
        return [r for r in have if r["version"] == v]

    for tc, pool, share in sorted({(r["teacher"], r["pool"], r["share"]) for r in rows}):
        g = [r for r in rows if (r["teacher"], r["pool"], r["share"]) == (tc, pool, share)]
        by = {x: newest(g, x) for x in srcs}
        here = [x for x in srcs if by[x]]
        targets = set.intersection(*({r["target"] for r in by[x]} for x in here))
        if not targets:
            continue
        m = lambda x, k: (f"{np.mean([r[k] for r in by[x] if r['target'] in targets]):.4f}"  # noqa: E731
                          if by[x] else "-")
        md.append(f"| {tc} | {pool} | {share:g} | {len(targets)} | " + " | ".join(m(x, "needed") for x in srcs)
                  + " | " + " | ".join(m(x, "planned") for x in srcs) + " | "
                  + " / ".join(f"{float(m(x, 'student_fit_seconds')):.0f}" if by[x] else "-" for x in srcs) + " | "
                  + ", ".join(f"{x} {by[x][0]['version']}" for x in here) + " |")
    md += ["", "Per target (needed / planned; each source's newest version):", "",
           "| teacher | pool | share | target | " + " | ".join(srcs) + " |",
           "|---|---|---|---|" + "---|" * len(srcs)]
    for tc, pool, share, target in sorted({(r["teacher"], r["pool"], r["share"], r["target"]) for r in rows}):
        g = [r for r in rows if (r["teacher"], r["pool"], r["share"], r["target"]) == (tc, pool, share, target)]
        cell = {x: newest(g, x) for x in srcs}
        md.append(f"| {tc} | {pool} | {share:g} | {target} | " + " | ".join(
            f"{cell[x][0]['needed']:.4f} / {cell[x][0]['planned']:.4f}" if cell[x] else "" for x in srcs) + " |")
    md += features_table(all_rows) + samples_table(all_rows)
    write_results("student_source", {"rows": all_rows}, "\n".join(md) + "\n")


def features_table(rows: list[dict]) -> list[str]:
    """Bigrams against the mean vector alone (4 folds each), then 8 folds against 4 (with bigrams), then the
    head's penalty (C = 1 against 0.01, 4 folds with bigrams), each on the targets both variants ran."""
    at_c1 = [r for r in rows if r.get("head", "top vs rest") == "top vs rest"]  # the tables before 0.26.0's head
    return (variants_table(at_c1, (("static", 4), ("static+bigrams", 4)))
            + variants_table(at_c1, (("static+bigrams", 4), ("static+bigrams", 8)))
            + variants_table([r for r in rows if folds_of(r) == 4], (("top vs rest", 4), (HEAD_NOW, 4)),
                             lambda r: (r.get("head", "top vs rest"), folds_of(r)),
                             "The head's L2 penalty (fine-tuned vectors, bigrams, 4 folds): C = 1 (0.18.0-0.25.0) "
                             "against C = 0.01 (0.26.0). Means over the targets."))


def sample_of(r: dict) -> int:
    """The student's sample size: a row's ``sample``, else the whole part (at most half the pool, so no larger
    than the judged lines)."""
    return r.get("sample", min(SAMPLE, r["judged"]))


def samples_table(rows: list[dict]) -> list[str]:
    """The fine-tuned vectors' student (the product's features and folds) by the size of its sample, at the
    newest version that ran more than one size; means over the targets every size ran."""
    fine = [r for r in rows if r["source"] == "fine-tuned" and "sample" in r]
    if not fine:
        return []
    v = max((r["version"] for r in fine), key=version_key)
    fine = [r for r in rows if r["source"] == "fine-tuned" and r["version"] == v
            and r.get("features") == FEATURES_NOW and folds_of(r) == FOLDS_NOW]
    md = ["", f"The student's sample ({v}; fine-tuned vectors, the product's features and folds): the same judged "
          "lines, each smaller sample a seeded part of the larger (`--samples`). Means over the targets every size "
          "ran; needed / planned as above.", "",
          "| teacher | pool | share | targets | sample | needed | planned | student fit (s) |", "|---|---|---|---|---|---|---|---|"]
    for tc, pool, share in sorted({(r["teacher"], r["pool"], r["share"]) for r in fine}):
        g = [r for r in fine if (r["teacher"], r["pool"], r["share"]) == (tc, pool, share)]
        sizes = sorted({sample_of(r) for r in g})
        if len(sizes) < 2:
            continue
        targets = set.intersection(*({r["target"] for r in g if sample_of(r) == k} for k in sizes))
        for k in sizes:
            h = [r for r in g if sample_of(r) == k and r["target"] in targets]
            md.append(f"| {tc} | {pool} | {share:g} | {len(targets)} | {k:,} | "
                      + " | ".join(f"{np.mean([r[f] for r in h]):.4f}" for f in ("needed", "planned"))
                      + f" | {np.mean([r['student_fit_seconds'] for r in h]):.0f} |")
    return md


def variants_table(rows: list[dict], wanted, variant=None, intro: str | None = None) -> list[str]:
    """The fine-tuned vectors' student by what its head reads and how many folds plan it: the mean static
    vector alone (0.21.0-0.22.0; rows without a ``features`` field), with hashed token bigrams (0.23.0),
    planned on 4 or 8 folds; each variant's newest version."""
    fine = [r for r in rows if r["source"] == "fine-tuned" and "sample" not in r]  # the full part's rows
    variant = variant or (lambda r: (r.get("features", "static"), folds_of(r)))
    kinds = [k for k in wanted if any(variant(r) == k for r in fine)]
    if len(kinds) < 2:
        return []
    name = lambda k: f"{k[0]}, {k[1]} folds"  # noqa: E731
    md = ["", intro or "The student's features (fine-tuned vectors): the mean static vector alone, or with hashed token bigrams "
          "(0.23.0: each bigram's weight over the line's token count, in 2^18 buckets; the bigram block scaled to "
          "the mean vector's squared norm); the plan on the out-of-fold scores of 4 folds of the sample, or 8 "
          "(each fold's student fitted on 7/8 of it). Means over the targets.", "",
          "| teacher | pool | share | targets | " + " | ".join(f"{name(k)}: needed" for k in kinds) + " | "
          + " | ".join(f"{name(k)}: planned" for k in kinds) + " | student fit (s) | versions |",
          "|---|---|---|---|" + "---|" * (2 * len(kinds) + 2)]
    for tc, pool, share in sorted({(r["teacher"], r["pool"], r["share"]) for r in fine}):
        g = [r for r in fine if (r["teacher"], r["pool"], r["share"]) == (tc, pool, share)]
        by = {}
        for k in kinds:
            have = [r for r in g if variant(r) == k]
            v = max((r["version"] for r in have), key=version_key, default=None)
            by[k] = [r for r in have if r["version"] == v]
        if not all(by.values()):
            continue
        targets = set.intersection(*({r["target"] for r in by[k]} for k in kinds))
        m = {k: {f: np.mean([r[f] for r in by[k] if r["target"] in targets])
                 for f in ("needed", "planned", "student_fit_seconds")} for k in kinds}
        md.append(f"| {tc} | {pool} | {share:g} | {len(targets)} | "
                  + " | ".join(f"{m[k]['needed']:.4f}" for k in kinds) + " | "
                  + " | ".join(f"{m[k]['planned']:.4f}" for k in kinds) + " | "
                  + " / ".join(f"{m[k]['student_fit_seconds']:.0f}" for k in kinds) + " | "
                  + " / ".join(by[k][0]["version"] for k in kinds) + " |")
    return md


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pools", nargs="+", default=["shared"])
    ap.add_argument("--targets", nargs="+", default=None)
    ap.add_argument("--shares", nargs="+", type=float, default=[0.01, 0.05])
    ap.add_argument("--teacher-layers", type=int, default=3)
    ap.add_argument("--sources", nargs="+", default=["base", "fine-tuned"], choices=list(SOURCES))
    ap.add_argument("--samples", nargs="+", type=int, default=[SAMPLE],
                    help="the student's sample sizes, each a seeded part of the 20,000-line part (at most half the "
                         "pool), judged on the same lines")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    rows = earlier_rows("student_source")
    if not args.report_only:
        for pool, target in pool_targets(args.pools, args.targets):
            rows = merge_rows(rows, measure(pool, target, args.shares, args.teacher_layers, sources=args.sources,
                                                samples=args.samples), key)
            report(rows)
    report(rows)


if __name__ == "__main__":
    main()
