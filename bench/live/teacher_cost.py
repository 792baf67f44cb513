"""Benchmark "teacher_cost" (issue 48 item 1): where a cascade's teacher spends its time a candidate.

0.9.0's 10M-line cascade paid 4.4 ms a candidate for finetune's teacher, twice what a plain cosine pass
costs a line (bench/results/scale_cascade.md, scale.md). This benchmark separates the causes:

1. A cascade run (``domainsift select --method finetune --cascade --fraction 0.01`` on the 200,000-line
   pool of distinct lines that bench/live/scale.py builds; in-domain set KDE4.test.en) gives the candidates:
   the lines its final scores rank first (every candidate ranks above every other line), and the stage
   timings of its run.json.
2. In one process, the same number of lines (--lines) is taken from the candidates (seeded) and from the
   whole pool (seeded), and each is scored by finetune's teacher (a finetune fitted for one epoch: the
   cost of scoring does not depend on the weights) and by cosine (the plain encoder pass), alternately,
   --rounds times; ms a line and tokens a line (the encoder's tokenizer, at most 128) for each.

    python bench/live/teacher_cost.py [--lines 4096] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

from _common import ROOT, data_file, write_results
from scale import make

WORK = ROOT / "bench" / "work" / "teacher_cost"


def cascade_run(pool: str) -> dict:
    out = WORK / "run"
    if not (out / "run.json").exists():
        argv = [sys.executable, "-m", "domainsift", "-q", "select", "--method", "finetune", "--cascade", "--fraction",
                "0.01", "--in-domain", data_file("KDE4", "test"), "--pool", pool, "--out", str(out),
                "--cache", str(WORK / "cache")]
        subprocess.run(argv, check=True)
    return json.loads((out / "run.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    pool_path, _ = make(200_000)
    run = cascade_run(str(pool_path))
    m = run["cascade"]["candidates"]
    from domainsift.io.corpus import read_corpus
    from domainsift.select import get_selector
    pool = read_corpus([str(pool_path)])
    scores = np.load(WORK / "run" / "scores.npy")
    cand = np.sort(np.argsort(-scores, kind="stable")[:m])
    rng = np.random.default_rng(0)
    sets = {"candidates": pool[[int(i) for i in np.sort(rng.choice(cand, args.lines, replace=False))]],
            "pool lines": pool[[int(i) for i in np.sort(rng.choice(len(pool), args.lines, replace=False))]]}
    in_domain = read_corpus([data_file("KDE4", "test")])
    teacher = get_selector("finetune", epochs=1, seed=0, progress=False).fit(in_domain, pool[:20_000])
    cosine = get_selector("cosine", cache_dir="", progress=False).fit(in_domain)
    tok = teacher.classifier_.tokenizer
    tokens = {k: float(np.mean([len(x) for x in tok(v.texts, truncation=True, max_length=128)["input_ids"]]))
              for k, v in sets.items()}
    chars = {k: float(np.mean([len(t) for t in v.texts])) for k, v in sets.items()}
    for sel in (teacher, cosine):  # the ONNX export and session, once, outside the timing
        sel.score(pool[:64])
    times = {}
    for _ in range(args.rounds):
        for name, sel in (("finetune", teacher), ("cosine", cosine)):
            for what, texts in sets.items():
                t = time.perf_counter()
                sel.score(texts)
                times.setdefault((name, what), []).append(1000 * (time.perf_counter() - t) / args.lines)
    rows = [{"scorer": n, "lines": w, "ms_per_line": round(float(np.mean(v)), 3),
             "tokens_per_line": round(tokens[w], 1), "chars_per_line": round(chars[w], 1),
             "ms_per_100_tokens": round(100 * float(np.mean(v)) / tokens[w], 3)} for (n, w), v in times.items()]
    t = run["timings"]
    lines = ["# Where the cascade's teacher spends its time", "",
             f"A cascade run `select --method finetune --cascade --fraction 0.01` on 200,000 distinct pool lines "
             f"(in-domain KDE4.test.en) handed its teacher {m:,} candidates ({100 * m / len(pool):.1f}%): "
             f"method fit {t.get('fit_seconds')} s, student fit {t.get('student_fit_seconds')} s, student over the "
             f"pool {t.get('student_score_seconds')} s, teacher over the candidates {t.get('teacher_score_seconds')} s "
             f"({1000 * t['teacher_score_seconds'] / m:.2f} ms a candidate, reading them included).", "",
             f"Then {args.lines:,} lines drawn (seed 0) from the candidates and from the whole pool, scored in one "
             f"process by finetune's teacher (fitted one epoch) and by cosine, alternately, {args.rounds} rounds "
             "(the ONNX export done before the clock); the same int8 encoder and batches of one token count.", "",
             "| scorer | lines | ms a line | tokens a line | characters a line | ms per 100 tokens |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['scorer']} | {r['lines']} | {r['ms_per_line']:.2f} | {r['tokens_per_line']:.1f} | "
                     f"{r['chars_per_line']:.0f} | {r['ms_per_100_tokens']:.2f} |")
    write_results("teacher_cost", {"run_timings": t, "candidates": m, "pool": len(pool), "rows": rows,
                                   "lines": args.lines, "rounds": args.rounds}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
