"""How close `--plan`'s estimate comes to the run (issue 50, item 1: within 30%): for cosine, finetune and
finetune --cascade on the shared pool (35,000 lines, KDE4's 500 test lines as the in-domain set, N = 5,000),
`select --plan` and then the same `select`, each run in a fresh process with an empty vector cache (the
calibration and the encoder's ONNX export kept, as on a machine that has run domainsift before).

    python bench/live/plan.py              # writes bench/results/plan.md
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

from _common import ROOT, SEVEN, data_file, write_results, earlier_rows

WORK = ROOT / "bench" / "work" / "plan"
RUNS = {"cosine": ["--method", "cosine"], "finetune": ["--method", "finetune"],
        "finetune --cascade": ["--method", "finetune", "--cascade"]}


def cli(argv, env) -> tuple[float, str]:
    t = time.time()
    proc = subprocess.run([sys.executable, "-m", "domainsift", "-q", *argv], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    return time.time() - t, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    ap.add_argument("--target", default="KDE4")
    ap.add_argument("--recalibrate", action="store_true", help="measure this machine's costs again")
    args = ap.parse_args()
    base = ["select", "--in-domain", data_file(args.target, "test"), "--pool",
            *[data_file(d, "train") for d in SEVEN], "--top", "5000"]
    keep = WORK / "kept-cache"  # the calibration and the ONNX exports, kept across runs
    if args.recalibrate:
        (keep / "calibration.json").unlink(missing_ok=True)
    # rows of runs not measured now stay (each row carries its own figures)
    rows = [r for r in earlier_rows("plan") if r["run"] not in args.runs]
    for name in args.runs:
        cache = WORK / "cache"
        shutil.rmtree(cache, ignore_errors=True)
        if keep.exists():
            shutil.copytree(keep, cache)
        env = {**os.environ, "DOMAINSIFT_CACHE": str(cache)}
        _, plan_out = cli([*base, *RUNS[name], "--plan"], env)
        seconds = _estimate_from(plan_out)
        # the run itself: the vector cache emptied, the calibration and exports kept
        for sub in cache.iterdir():
            if sub.is_dir() and sub.name not in ("onnx", "static"):
                shutil.rmtree(sub)
        wall, _ = cli([*base, *RUNS[name], "--out", str(WORK / name.replace(" ", ""))], {**env})
        shutil.rmtree(WORK / name.replace(" ", ""), ignore_errors=True)
        rows.append({"run": name, "estimate_s": seconds, "wall_s": round(wall, 1),
                     "error": round((seconds - wall) / wall, 3), "plan": plan_out})
        print(rows[-1]["run"], rows[-1]["estimate_s"], rows[-1]["wall_s"], rows[-1]["error"])
        shutil.rmtree(keep, ignore_errors=True)  # the calibration (and exports) as they stand now
        shutil.copytree(cache, keep, ignore=shutil.ignore_patterns("*.npy", "*.sha256"))
    table = ["# `--plan`: the estimate against the run", "",
             f"`select --top 5000` on the shared pool (35,000 lines; in-domain set {args.target}.test.en), each "
             "a fresh process with an empty vector cache; the estimate from `select --plan` just before.", "",
             "| run | estimate | wall time | error |", "|---|---|---|---|"]
    rows.sort(key=lambda r: list(RUNS).index(r["run"]))
    table += [f"| {r['run']} | {r['estimate_s']:.0f} s | {r['wall_s']:.0f} s | {100 * r['error']:+.0f}% |" for r in rows]
    write_results("plan", {"rows": rows}, "\n".join(table) + "\n")
    print("\n".join(table))


def _estimate_from(out: str) -> float:
    m = re.search(r"estimated wall time on this machine\s+(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", out)
    if m is None:
        sys.exit(f"no estimate in: {out}")
    h, mi, s = (int(x) if x else 0 for x in m.groups())
    return float(3600 * h + 60 * mi + s)


if __name__ == "__main__":
    main()
