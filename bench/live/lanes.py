"""Benchmark "lanes" (issue 48, item 1): what the ONNX encoder costs a line, in time and memory, on the
cascade's candidates and on pool lines, by version.

0.22.0 runs an ONNX backend as one single-threaded session a CPU thread (lanes, at most 4) that encode
batches side by side, each batch at most 512 tokens (``domainsift.embed.onnx``); 0.21.0 ran one session
over every thread on batches of 32 lines. This benchmark measures both through the public API: run it
once with the checkout's own package and once with ``PYTHONPATH`` on a checkout of the earlier version.

Each measurement is a fresh process: the teacher of the 10M cascade (``finetune --layers 3``, seed 0,
in-domain set KDE4.test.en; fitted once on the shared pool, one epoch, and saved to bench/work/lanes/teacher)
is loaded with ``load_state``, warmed on 64 lines, then scores 16,384 lines in one call (a cascade shard's
size): ms a line, and the process's peak RSS (VmHWM) above its RSS before the call. The kinds of line
alternate, ``--rounds`` times. Lines: **candidates**, drawn (seed 0) from the candidates of the 10M cascade
run (``bench/live/scale.py --cascade 10000000:3 --teacher-layers 3``; run it first), and **pool lines**,
drawn from the same pool.

    python bench/live/lanes.py [--rounds 2] [--report-only]
    PYTHONPATH=<checkout of 0.21.0>/src python bench/live/lanes.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np
from _common import ROOT, SEVEN, cpu_isa, data_file, earlier_rows, merge_rows, version_key, write_results

WORK = ROOT / "bench" / "work" / "lanes"
SCALE = ROOT / "bench" / "work" / "scale"
LINES = 16384

MEASURE = r"""
import json, sys, time
import numpy as np
from domainsift import __version__
from domainsift.io.corpus import read_corpus
from domainsift.select import get_selector
teacher = get_selector("finetune", layers=3, seed=0, progress=False).load_state(sys.argv[1])
lines = read_corpus([sys.argv[2]])
teacher.score(lines[:64])
def status(key):
    return next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith(key)) / 1024
before = status("VmRSS:")
t = time.perf_counter()
s = teacher.score(lines)
seconds = time.perf_counter() - t
print(json.dumps({"version": __version__, "ms_per_line": 1000 * seconds / len(lines),
                  "peak_above_mb": status("VmHWM:") - before, "score_sum": float(np.sum(s))}))
"""


def teacher() -> str:
    folder = WORK / "teacher"
    if not folder.exists():
        import domainsift as ds
        from domainsift.select import get_selector
        pool = ds.read_corpus([data_file(d, "train") for d in SEVEN])
        sel = get_selector("finetune", layers=3, seed=0, epochs=1, progress=False)
        sel.fit(ds.read_corpus([data_file("KDE4", "test")]), pool)
        sel.save_state(folder)
    return str(folder)


def line_files() -> dict:
    """16,384 candidates and 16,384 pool lines of the 10M cascade run, written once."""
    files = {"candidates": WORK / "candidates.txt", "pool lines": WORK / "pool.txt"}
    if all(f.exists() for f in files.values()):
        return files
    runs = sorted(SCALE.glob("run-finetune-cascade-layers3*-10000000"), key=lambda p: p.stat().st_mtime)
    runs = [r for r in runs if (r / "scores.npy").exists() and (r / "run.json").exists()]
    if not runs:
        sys.exit("no 10M cascade run in bench/work/scale: run bench/live/scale.py --cascade-only "
                 "--cascade 10000000:3 --teacher-layers 3 first")
    run = runs[-1]
    m = json.loads((run / "run.json").read_text())["cascade"]["candidates"]
    scores = np.load(run / "scores.npy")
    rng = np.random.default_rng(0)
    cand = np.sort(np.argsort(-scores, kind="stable")[:m])
    want = {"candidates": set(rng.choice(cand, LINES, replace=False).tolist()),
            "pool lines": set(rng.choice(len(scores), LINES, replace=False).tolist())}
    got = {k: [] for k in want}
    with open(SCALE / "pool-10000000.txt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            for k, w in want.items():
                if i in w:
                    got[k].append(line)
    WORK.mkdir(parents=True, exist_ok=True)
    for k, f in files.items():
        f.write_text("".join(got[k]), encoding="utf-8")
    return files


def key(r: dict) -> tuple:
    return (r["version"], r["isa"], r["lines"])


def report(rows: list[dict]) -> None:
    md = ["# ONNX lanes: the encoder's time and memory a line, by version (issue 48, item 1)", "",
          f"The 10M cascade's teacher (`finetune --layers 3`, seed 0, KDE4.test.en; fitted once on the shared pool, "
          f"one epoch) scores {LINES:,} lines in one call in a fresh process (after 64 lines' warm-up): "
          "candidates of the 10M cascade run and lines of its pool, drawn with seed 0. ms a line (mean over the "
          "rounds) and the peak RSS above the RSS before the call (max over the rounds). 0.21.0: one ONNX session "
          "over every thread, batches of 32 lines; 0.22.0: one single-threaded session a thread (lanes), "
          "batches of at most 512 tokens. The score sum checks that both versions score alike.", "",
          "| version | isa | lines | ms a line | rounds | peak above (MB) | score sum |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["isa"], r["lines"], version_key(r["version"]))):
        md.append(f"| {r['version']} | {r['isa']} | {r['lines']} | {r['ms_per_line']:.2f} | {r['rounds']} | "
                  f"{r['peak_above_mb']:.0f} | {r['score_sum']:.4f} |")
    write_results("lanes", {"rows": rows}, "\n".join(md) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    rows = earlier_rows("lanes")
    if not args.report_only:
        folder, files = teacher(), line_files()
        runs = {k: [] for k in files}
        for _ in range(args.rounds):
            for k, f in files.items():
                res = subprocess.run([sys.executable, "-c", MEASURE, folder, str(f)], capture_output=True, text=True)
                if res.returncode != 0:
                    sys.exit(res.stderr[-2000:])
                runs[k].append(json.loads(res.stdout.strip().splitlines()[-1]))
                print(k, runs[k][-1], flush=True)
        new = [{"version": v[0]["version"], "isa": cpu_isa(), "lines": k, "rounds": len(v),
                "ms_per_line": round(float(np.mean([x["ms_per_line"] for x in v])), 3),
                "peak_above_mb": round(max(x["peak_above_mb"] for x in v), 1),
                "score_sum": round(v[0]["score_sum"], 4)} for k, v in runs.items()]
        rows = merge_rows(rows, new, key)
    report(rows)


if __name__ == "__main__":
    main()
