"""Benchmark "scaleout": the Ray engine with 1 and 2 workers against the local engine, and what a billion
lines cost on a cluster, computed from the measured rates (not from perfect division).

Each run is ``domainsift select --fraction 0.01`` in a fresh process with an empty cache, on the pools
of distinct lines that ``bench/live/scale.py`` builds (the shared train lines, repeated with a
line-number prefix), in-domain set KDE4.test.en:

- the student (``--method student``, teacher cosine: the fast pass a cascade runs over every line) at
  ``--student`` sizes (default 250,000 and 1,000,000 lines);
- cosine (all-MiniLM-L6-v2, onnx-int8: the encoder pass a teacher runs over its candidates) at
  ``--cosine`` sizes (default 10,000 and 40,000 lines; a 1M-line cosine pass takes over an hour on
  2 cores);

each with ``--engine local``, ``--engine ray --workers 1`` and ``--engine ray --workers 2``. Recorded:
the wall time, the driver process's own CPU time (user + system of the process that runs
``domainsift``; Ray's workers are other processes), and peak RSS. Fits, model loading and actor
start-up are paid once per run, so rates are **marginal**: (n2 - n1) / (t(n2) - t(n1)) between the
two sizes, t the run's seconds after its fit (``run.json``'s ``fit_seconds``: the fit's own run-to-run
noise, seconds on a 3-minute fit, would otherwise swamp the difference). Scaling efficiency: the 2-worker marginal rate over twice the 1-worker rate.

The cost model: core-seconds a line for the student and for the encoder (1-worker marginal rates:
one worker runs on one core), the cascade's candidates share from ``bench/results/scale_cascade.json``
(its largest row), the efficiency measured here, and the driver's CPU time per line, give the cores
a billion lines need in one hour. Rows are kept under bench/work/scaleout/, so the benchmark resumes.

    python bench/live/scaleout.py [--student 250000 1000000] [--cosine 10000 40000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time

from _common import RESULTS, ROOT, data_file, write_results
from scale import make

WORK = ROOT / "bench" / "work" / "scaleout"
ENGINES = (("local", None), ("ray", 1), ("ray", 2))

DRIVER = r"""
import json, resource, sys, time
from domainsift.cli import main
t0 = time.time()
rc = main(["-q"] + sys.argv[1:])
ru = resource.getrusage(resource.RUSAGE_SELF)
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"rc": rc, "seconds": round(time.time() - t0, 2), "driver_cpu": round(ru.ru_utime + ru.ru_stime, 2),
                  "peak_rss_mb": round(hwm / 1024, 1)}))
"""


def run(method: str, size: int, engine: str, workers: int | None) -> dict:
    label = f"{method}-{size}-{engine}{workers or ''}"
    done = WORK / f"row-{label}.json"
    if done.exists():
        return json.loads(done.read_text())
    WORK.mkdir(parents=True, exist_ok=True)
    text, _ = make(size)
    out, cache = WORK / f"run-{label}", WORK / f"cache-{label}"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    argv = ["select", "--method", method, "--in-domain", data_file("KDE4", "test"), "--pool", str(text),
            "--fraction", "0.01", "--out", str(out), "--cache", str(cache), "--engine", engine]
    if workers:
        argv += ["--workers", str(workers)]
    t0 = time.time()
    res = subprocess.run([sys.executable, "-c", DRIVER, *argv], capture_output=True, text=True)  # nothing else runs
    if res.returncode != 0:
        sys.exit(f"{label}: {res.stderr[-2000:]}")
    r = json.loads(res.stdout.strip().splitlines()[-1])
    timings = json.loads((out / "run.json").read_text())["timings"]
    row = {"method": method, "size": size, "engine": engine, "workers": workers, "seconds": r["seconds"],
           "process_seconds": round(time.time() - t0, 1), "driver_cpu_seconds": r["driver_cpu"],
           "peak_rss_mb": r["peak_rss_mb"], "shards": timings.get("shards"), "fit_seconds": timings.get("fit_seconds"),
           "argv": argv}
    done.write_text(json.dumps(row))
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    print(row, flush=True)
    return row


def marginal(rows: list, method: str, engine: str, workers) -> dict | None:
    mine = sorted((r for r in rows if (r["method"], r["engine"], r["workers"]) == (method, engine, workers)),
                  key=lambda r: r["size"])
    if len(mine) < 2:
        return None
    a, b = mine[0], mine[-1]
    dn = b["size"] - a["size"]
    after_fit = lambda r: r["seconds"] - (r.get("fit_seconds") or 0.0)  # noqa: E731  the fit is paid once
    return {"lines_per_s": dn / (after_fit(b) - after_fit(a)),
            "driver_cpu_s_per_million": 1e6 * (b["driver_cpu_seconds"] - a["driver_cpu_seconds"]) / dn,
            "from": a["size"], "to": b["size"]}


def cost_model(rates: dict) -> dict | None:
    """Cores for 10^9 lines in one hour through the cascade (1% selected), from the measured rates."""
    casc = RESULTS / "scale_cascade.json"
    if not casc.exists() or not all(rates.get(k) for k in ("student-ray1", "cosine-ray1", "student-ray2")):
        return None
    rows = [r for r in json.loads(casc.read_text())["rows"] if r.get("candidates") and "teacher_score_seconds" in r]
    if not rows:
        return None
    big = max(rows, key=lambda r: r["size"])
    share = big["candidates"] / big["size"]
    student = 1 / rates["student-ray1"]["lines_per_s"]  # core-seconds a line: one worker is one core
    encoder = 1 / rates["cosine-ray1"]["lines_per_s"]
    eff_s = rates["student-ray2"]["lines_per_s"] / (2 * rates["student-ray1"]["lines_per_s"])
    eff_c = (rates["cosine-ray2"]["lines_per_s"] / (2 * rates["cosine-ray1"]["lines_per_s"])
             if rates.get("cosine-ray2") else eff_s)
    n = 1e9
    # an efficiency above 1 (two one-thread workers beat one worker's core) is not extrapolated to a cluster
    from domainsift.pipeline.plan import cascade_seconds  # the product's own cost model, at each stage's efficiency
    core_s = sum(cascade_seconds(n, n * share, student / min(1.0, eff_s), encoder / min(1.0, eff_c)).values())
    per_m = [rates[k]["driver_cpu_s_per_million"] for k in ("student-ray1", "student-ray2")]
    driver_lo, driver_hi = (n / 1e6 * max(0.0, x) / 3600 for x in (min(per_m), max(per_m)))
    return {"share": share, "share_from": f"scale_cascade.json, {big['size']:,}-line row", "student_core_us": 1e6 * student,
            "encoder_core_ms": 1e3 * encoder, "efficiency_student": eff_s, "efficiency_encoder": eff_c,
            "core_hours": core_s / 3600, "cores_for_one_hour": int(-(-core_s // 3600)),
            "driver_cpu_hours_low": driver_lo, "driver_cpu_hours_high": driver_hi}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--student", type=int, nargs="+", default=[250_000, 1_000_000])
    ap.add_argument("--cosine", type=int, nargs="+", default=[10_000, 40_000])
    args = ap.parse_args()
    rows = []
    for method, sizes in (("student", args.student), ("cosine", args.cosine)):
        for size in sizes:
            for engine, workers in ENGINES:
                rows.append(run(method, size, engine, workers))
    rates = {f"{m}-{e}{w or ''}": marginal(rows, m, e, w) for m in ("student", "cosine") for e, w in ENGINES}
    lines = ["# Scale-out: the Ray engine with 1 and 2 workers, and the cores a billion lines need", "",
             "`domainsift select --method M --fraction 0.01 --in-domain KDE4.test.en --pool pool-N.txt --engine E "
             "[--workers W]` in a fresh process with an empty cache; pools of distinct lines. Seconds: the whole "
             "run (fits and start-up included); driver CPU: user + system seconds of the process that runs "
             "domainsift (Ray's workers are other processes). With Ray the driver reads no pool line: the workers "
             "scan, read and score their own parts and shards.", "",
             "| method | lines | engine | seconds | of which the fit | driver CPU s | peak RSS (MB) | shards |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        eng = r["engine"] + (f", {r['workers']} worker{'s' if r['workers'] > 1 else ''}" if r["workers"] else "")
        lines.append(f"| {r['method']} | {r['size']:,} | {eng} | {r['seconds']:.1f} | {r['fit_seconds']} | "
                     f"{r['driver_cpu_seconds']:.1f} | "
                     f"{r['peak_rss_mb']:.0f} | {r['shards']} |")
    lines += ["", "Marginal rates, (n2 - n1) / (t(n2) - t(n1)) with t the seconds after the fit: what grows with the "
              "pool (fits and start-up left out):",
              "", "| method | engine | lines/s | driver CPU s per million lines |", "|---|---|---|---|"]
    for key, m in rates.items():
        if m:
            lines.append(f"| {key.split('-')[0]} | {key.split('-', 1)[1]} | {m['lines_per_s']:,.0f} | "
                         f"{m['driver_cpu_s_per_million']:.2f} |")
    for method in ("student", "cosine"):
        r1, r2, loc = rates.get(f"{method}-ray1"), rates.get(f"{method}-ray2"), rates.get(f"{method}-local")
        if r1 and r2:
            lines += ["", f"{method}: scaling efficiency from 1 to 2 workers {r2['lines_per_s'] / (2 * r1['lines_per_s']):.2f}"
                      + (f"; 2 Ray workers against the local engine on the same 2 cores "
                         f"{r2['lines_per_s'] / loc['lines_per_s']:.2f}x" if loc else "") + "."]
    model = cost_model(rates)
    extra = {"rates": rates}
    if model:
        extra["cost_model"] = model
        lines += ["", COST.format(**model)]
    write_results("scaleout", {"rows": rows, **extra}, "\n".join(lines) + "\n")


COST = ("What a billion lines cost on a cluster of such cores (selecting 1% through the cascade): the student "
        "{student_core_us:.0f} core-µs a line and the encoder {encoder_core_ms:.2f} core-ms a line (1-worker "
        "marginal rates: one worker, one core), the teacher's candidates {share:.1%} of the pool ({share_from}; the "
        "teacher's cost per candidate taken as the encoder's per line), each divided by the scaling efficiency "
        "measured here (student {efficiency_student:.2f}, encoder {efficiency_encoder:.2f}; one above 1 is taken as 1; "
        "assumed to hold beyond 2 workers): **{core_hours:,.0f} core-hours, so {cores_for_one_hour:,} cores for 10^9 lines in one hour**. "
        "The driver's own CPU time for 10^9 lines, at its rate per million lines over the student's two Ray rows: "
        "{driver_cpu_hours_low:.1f} to {driver_cpu_hours_high:.1f} hours (the two differ by less than the fit's "
        "run-to-run spread, which the driver also pays; what the driver does per line is assembling the shards' "
        "files and writing scores.tsv), so the driver, not the cluster, bounds a one-hour run at the upper figure.")


if __name__ == "__main__":
    main()
