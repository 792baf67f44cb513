"""Benchmark "scale": peak memory of reading a large pool (text beside Parquet), and wall time and
peak memory of scoring pools of 10k, 100k and 1M lines with the streaming engine.

Pools of 100,000 and 1,000,000 lines are made from the shared train lines, repeated with a
line-number prefix ("123456: ...") so that every line is distinct; stored as a text file and as
a Parquet file. Each reader runs in a fresh process that only consumes the records and reports
its peak RSS (VmHWM): the streaming readers (``iter_texts`` for text, ``columnar.iter_rows``
for Parquet, batches of 8,192 rows), and, for contrast, ``read_corpus`` which holds every text and
id in memory, as scoring did before the streaming engine of 0.3.0.

Scoring (--scoring): ``domainsift score`` in a fresh process per pool, with an empty vector cache
(a new folder each time, so nothing comes from the cache: every line is distinct anyway), the
default settings (cosine: all-MiniLM-L6-v2, onnx-int8; finetune: its defaults), in-domain set
KDE4.test.en, text pools of distinct lines as above; wall time, peak RSS (VmHWM of the process),
and cost per line. Each finished row is kept under bench/work/scale/, so the benchmark resumes.

    python bench/live/scale.py [--sizes 100000 1000000] [--scoring 10000 100000 1000000] [--finetune 100000]

The cascade (``--cascade-only``, its own results file scale_cascade.md): ``domainsift select
--fraction 0.01`` (1% of the pool) in a fresh process with an empty cache, on the same pools, for
the student alone (``--method student``: teacher cosine, its defaults) at ``--student`` sizes and for
``--method finetune --cascade`` at ``--cascade`` sizes; wall time, peak RSS, lines per second, the
candidates the method scored, and the student's marginal rate: (n2 - n1) / (t(n2) - t(n1)) between
the two smallest student sizes, the cost that grows with the pool (the fit, the teacher's sample and
the distillation are paid once).

    python bench/live/scale.py --cascade-only [--student 200000 1000000] [--cascade 1000000 [10000000:3]]
                               [--teacher-layers 0 3] [--cosine-cascade 1000000] [--full 1000000:3]
                               [--prefixed-query 10000000:3] [--cosine-prefixed-query 10000000]
                               [--name scale_cascade]

``--prefixed-query``: the cascade with the in-domain set in the pool's own format (KDE4.test.en with a
line-number prefix on every line), a diagnostic of what the prefix does to the teacher (not taken into the
cost of a billion lines). Every cascade row records the share of KDE4 lines among those it selected.

``--name`` writes the table to another results file (0.16.0's student rows, measured on another machine
than 0.9.0's cascade rows, are scale_student.md; scale_cascade.md keeps 0.9.0's until its rows are rerun).
``--processes N`` passes the flag to every run (the local engine's processes for the student's shards).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from _common import RESULTS, ROOT, SEVEN, data_file, version_key, write_results

WORK = ROOT / "bench" / "work" / "scale"
RESULTS_JSON = RESULTS / "scale.json"

PROBE = r"""
import json, sys, time
kind, path = sys.argv[1], sys.argv[2]
t0 = time.time()
n = 0
if kind == "text-stream":
    from domainsift.io.corpus import iter_texts
    for _ in iter_texts(path):
        n += 1
elif kind == "parquet-stream":
    from domainsift.io.columnar import iter_rows
    for _ in iter_rows(path, "parquet", "text"):
        n += 1
else:
    from domainsift.io.corpus import read_corpus
    n = len(read_corpus([path]))
# VmHWM: this process image's own peak (ru_maxrss would carry the parent's peak across fork and exec)
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"rows": n, "seconds": round(time.time() - t0, 2), "peak_rss_mb": round(hwm / 1024, 1)}))
"""


def make(size: int) -> tuple:
    import pyarrow as pa
    import pyarrow.parquet as pq
    WORK.mkdir(parents=True, exist_ok=True)
    text, parquet = WORK / f"pool-{size}.txt", WORK / f"pool-{size}.parquet"
    if not (text.exists() and parquet.exists()):
        base = [line.rstrip("\n") for d in SEVEN for line in open(data_file(d, "train"), encoding="utf-8")]
        lines = [f"{i}: {base[i % len(base)]}" for i in range(size)]
        text.write_text("\n".join(lines) + "\n", encoding="utf-8")
        pq.write_table(pa.table({"text": lines}), parquet, row_group_size=65536)
        del lines
    return text, parquet


SCORER = r"""
import json, sys, time
from domainsift.cli import main
t0 = time.time()
rc = main(["-q"] + sys.argv[1:])
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"rc": rc, "seconds": round(time.time() - t0, 1), "peak_rss_mb": round(hwm / 1024, 1)}))
"""


RERUN: set = set()  # --rerun: labels run again at this version (label@VERSION)
# versions whose cascade measured no better and left the product: their rows stay in the tables, the cost of
# a billion lines is not taken from them
LEFT = {"0.24.0": "the student's sample grown to half the selection (50,000 lines at 10M), removed in 0.25.0"}


def prefixed_query(size: int) -> str:
    """KDE4.test.en with a line-number prefix on every line as the pool of ``size`` lines has ("123456: ..."),
    the numbers drawn from the pool's own range (seed 0): an in-domain set in the pool's format, so that the
    prefix is not what tells the in-domain set from the pool."""
    import numpy as np
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"query-prefixed-{size}.txt"
    if not path.exists():
        lines = open(data_file("KDE4", "test"), encoding="utf-8").read().splitlines()
        numbers = np.random.default_rng(0).integers(0, size, len(lines))
        path.write_text("".join(f"{n}: {line}\n" for n, line in zip(numbers, lines)), encoding="utf-8")
    return str(path)


def precision(run: Path) -> dict:
    """The selection against the oracle: the share of the selected lines that are KDE4 lines (pool line i
    is the shared train line i mod 35,000, the seven train files in SEVEN's order)."""
    ids = run / "selected.ids.tsv"
    if not ids.exists():
        return {}
    lines = [int(row.split("\t")[1]) for row in ids.read_text().splitlines()[1:]]
    kde4 = sum(SEVEN[(i % (5000 * len(SEVEN))) // 5000] == "KDE4" for i in lines)
    return {"kde4_precision": round(kde4 / len(lines), 4)} if lines else {}


def score_row(method: str, size: int, kind: str = "text", extra: tuple = (), label: str | None = None,
              query: str | None = None) -> dict:
    """``domainsift score`` (or, with ``extra`` naming a selection rule, ``select``) in a fresh process;
    ``query``: the in-domain set (default KDE4.test.en)."""
    import shutil
    from domainsift import __version__
    label = label or method
    if label in RERUN or f"{label}:{size}" in RERUN:  # run again at this version, beside the row an earlier version made
        label = f"{label}@{__version__}"
    done = WORK / f"row-{label}-{size}{'' if kind == 'text' else '-' + kind}.json"
    if done.exists():
        return json.loads(done.read_text())
    text, parquet = make(size)
    if kind == "parquet":
        text = parquet
    out, cache = WORK / f"run-{label}-{size}", WORK / f"cache-{label}-{size}"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    command = "select" if "--fraction" in extra else "score"
    argv = [command, "--method", method, "--in-domain", query or data_file("KDE4", "test"), "--pool", str(text),
            "--out", str(out), "--cache", str(cache), *extra]
    t0 = time.time()
    res = subprocess.run([sys.executable, "-c", SCORER, *argv], capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{method} at {size}: {res.stderr[-2000:]}")
    r = json.loads(res.stdout.strip().splitlines()[-1])
    row = {"method": label, "size": size, "pool": kind, "seconds": r["seconds"], "process_seconds": round(time.time() - t0, 1),
           "version": __version__, "peak_rss_mb": r["peak_rss_mb"], "ms_per_line": round(1000 * r["seconds"] / size, 3), "argv": argv[:3] + list(extra)}
    run = json.loads((out / "run.json").read_text())
    if run.get("cascade"):
        row["candidates"] = run["cascade"]["candidates"]
    row["score_seconds"] = run["timings"].get("score_seconds")
    row.update(stages(run))
    row.update(precision(out))
    done.write_text(json.dumps(row))
    shutil.rmtree(cache, ignore_errors=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", type=int, default=[100_000, 1_000_000])
    ap.add_argument("--scoring", nargs="*", type=int, default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--finetune", nargs="*", type=int, default=[100_000])
    ap.add_argument("--engine-only", nargs="*", type=int, default=[100_000, 1_000_000],
                    help="pool sizes scored with --method random from text and from Parquet: the engine's own "
                         "memory (reading, shards, assembling, selecting), no encoder")
    ap.add_argument("--no-readers", action="store_true", help="keep the reader rows of the results file")
    ap.add_argument("--cascade-only", action="store_true", help="only the student and cascade rows (scale_cascade.md)")
    ap.add_argument("--student", nargs="*", type=int, default=[200_000, 1_000_000])
    ap.add_argument("--cascade", nargs="*", type=cascade_size, default=[1_000_000],
                    help="cascade pool sizes, each run with every --teacher-layers; SIZE:K runs that size with "
                         "--layers K alone (e.g. 10000000:3)")
    ap.add_argument("--cosine-cascade", nargs="*", type=int, default=[],
                    help="--cascade-only: pool sizes for `--method cosine --cascade` rows (the issue's second target)")
    ap.add_argument("--full", nargs="*", type=cascade_size, default=[],
                    help="--cascade-only: `--method finetune` without the cascade at these sizes (SIZE:K: with "
                         "--layers K), for the recall of its top N in the cascade's selection at the same size")
    ap.add_argument("--prefixed-query", nargs="*", type=cascade_size, default=[], metavar="SIZE[:K]",
                    help="finetune --cascade (--layers K) with the in-domain set in the pool's format: KDE4.test.en "
                         "with a line-number prefix on every line (label ...-prefixed-query)")
    ap.add_argument("--cosine-prefixed-query", nargs="*", type=int, default=[], metavar="SIZE",
                    help="cosine --cascade with the same prefixed in-domain set (label cosine-cascade-prefixed-query)")
    ap.add_argument("--name", default="scale_cascade", help="--cascade-only: the results file's name")
    ap.add_argument("--teacher-layers", nargs="+", type=int, default=[0],
                    help="--cascade-only: a cascade row for each finetune --layers K (0: the whole encoder)")
    ap.add_argument("--processes", type=int, default=None, help="--processes for every run (default: the product's)")
    ap.add_argument("--rerun", nargs="*", default=[], metavar="LABEL[:SIZE]",
                    help="run these rows (e.g. finetune-cascade-layers3:10000000) again at this version, as LABEL@VERSION "
                         "beside the earlier version's row (this version's own row of it is measured again)")
    args = ap.parse_args()
    RERUN.update(args.rerun)
    if args.cascade_only:
        return cascade_rows(args.student, args.cascade, args.name, args.processes, args.teacher_layers,
                            args.cosine_cascade, args.full, args.prefixed_query, args.cosine_prefixed_query)
    rows = []
    if args.no_readers:
        old = RESULTS_JSON.read_text() if RESULTS_JSON.exists() else "{}"
        rows = [r for r in json.loads(old).get("rows", []) if "reader" in r]
        args.sizes = []
    for size in args.sizes:
        text, parquet = make(size)
        for kind, path in (("text-stream", text), ("parquet-stream", parquet), ("read_corpus (text)", text),
                           ("read_corpus (parquet)", parquet)):
            t0 = time.time()
            out = subprocess.run([sys.executable, "-c", PROBE, kind, str(path)], capture_output=True, text=True,
                                 check=True)
            r = {"size": size, "reader": kind, **json.loads(out.stdout.strip().splitlines()[-1]),
                 "wall_seconds": round(time.time() - t0, 2)}
            rows.append(r)
            print(r, flush=True)
    scoring = ([score_row("random", n, kind) for n in args.engine_only for kind in ("text", "parquet")]
               + [score_row("cosine", n) for n in args.scoring] + [score_row("finetune", n) for n in args.finetune])
    for r in scoring:
        print(r, flush=True)
    lines = ["# Large pools: peak memory of the readers, and of scoring", "",
             "Each reader in a fresh process consumes every record of a pool of distinct lines (shared train lines "
             "repeated with a line-number prefix) and reports its peak RSS; the process's Python, NumPy and "
             "pyarrow imports count in it. Streaming readers hold one batch; read_corpus holds every text and id, "
             "as scoring did before the streaming engine (0.3.0).", "",
             "| lines | reader | peak RSS (MB) | seconds |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['size']:,} | {r['reader']} | {r['peak_rss_mb']:.0f} | {r['seconds']:.1f} |")
    if scoring:
        lines += ["", "## Scoring with the streaming engine", "",
                  "`domainsift score --method M --in-domain KDE4.test.en --pool pool-N.txt` in a fresh process, an "
                  "empty vector cache, the method's defaults (0.3.0: onnx-int8 encoder, shards of 16,384 lines); "
                  "seconds and peak RSS are the process's own (imports and model loading included).", "",
                  "`random` needs no encoder: its rows are the engine's own cost (reading the pool, shards, "
                  "assembling the run directory).", "",
                  "| method | pool | lines | seconds | ms per line | peak RSS (MB) |", "|---|---|---|---|---|---|"]
        for r in scoring:
            lines.append(f"| {r['method']} | {r.get('pool', 'text')} | {r['size']:,} | {r['seconds']:.0f} | "
                         f"{r['ms_per_line']:.3f} | {r['peak_rss_mb']:.0f} |")
    write_results("scale", {"rows": rows, "scoring": scoring}, "\n".join(lines) + "\n")


STAGES = ("fit_seconds", "pass_seconds", "student_fit_seconds", "student_score_seconds", "teacher_score_seconds")


def stages(run: dict) -> dict:
    """The stage timings a run records (0.9.0): the method's fit, the student's fit and its pass over
    the pool, the teacher's pass over the candidates."""
    return {k: run["timings"][k] for k in STAGES if k in run["timings"]}


FRACTION = 0.01  # the cascade rows' selection: 1% of the pool
SPREAD_DRAWS = 200  # bootstrap draws of a cascade's sample for the plan's spread


def plan_spread(row: dict) -> dict:
    """The plan of a cascade row's run again on bootstrap draws of its student's held-out sample (the
    student saved in the run directory, loaded through ``StudentSelector.load_state``): the point
    estimate and the 5th and 95th percentiles, as shares of the pool; empty when the run is gone."""
    import numpy as np
    from domainsift.pipeline.cascade import plan_share
    from domainsift.select.student import StudentSelector
    folder = WORK / f"run-{row['method']}-{row['size']}" / "student"
    if not folder.is_dir():
        return {}
    held = StudentSelector().load_state(folder).held_out_
    if not held:
        return {}
    s, t = np.asarray(held["student"]), np.asarray(held["teacher"])
    rng = np.random.default_rng(0)
    draws = [plan_share(s[i], t[i], FRACTION) for i in (rng.integers(0, len(s), len(s)) for _ in range(SPREAD_DRAWS))]
    return {"plan_share": round(plan_share(s, t, FRACTION), 5), "plan_p5": round(float(np.percentile(draws, 5)), 5),
            "plan_p95": round(float(np.percentile(draws, 95)), 5)}


def recall_row(full: dict, cascade: dict) -> dict:
    """The share of a full run's selection (``selected.ids.tsv``) in the cascade's at the same size, and
    the largest difference of the two runs' scores over the cascade's candidates (its top ``candidates``
    lines: every candidate ranks above every other line)."""
    import numpy as np
    from domainsift import rundir
    from domainsift.pipeline.cascade import SLACK
    fdir, cdir = (WORK / f"run-{r['method']}-{r['size']}" for r in (full, cascade))
    mine, theirs = set(rundir.read_selected_ids(cdir)), rundir.read_selected_ids(fdir)
    found = sum(i in mine for i in theirs)
    fs, cs = np.load(fdir / "scores.npy"), np.load(cdir / "scores.npy")
    by_cascade = np.argsort(-cs, kind="stable")
    cand, n = by_cascade[:cascade["candidates"]], len(theirs)
    rank = np.empty(len(fs), np.int64)
    rank[np.argsort(-fs, kind="stable")] = np.arange(len(fs))
    wide = int(np.ceil((1 + SLACK) * n))  # the plan's guarantee: N of the teacher's top (1 + SLACK) N as candidates
    return {"method": cascade["method"], "size": full["size"], "full_seconds": full["seconds"],
            "cascade_seconds": cascade["seconds"], "n": n, "found": found, "recall": found / max(1, n),
            "max_score_diff": float(np.max(np.abs(fs[cand] - cs[cand]))), "wide": wide,
            "wide_in_candidates": int(np.sum(rank[cand] < wide)),
            "lowest_full_rank": int(rank[by_cascade[:n]].max()) + 1 if n else 0}


def passrate(row: dict) -> str:
    """The student's pass over the pool alone (the stage timing a 0.9.0 run records), lines a second:
    for the student method its scoring stage, for a cascade its student stage."""
    sec = row.get("student_score_seconds") or row.get("pass_seconds")  # pass_seconds: 0.16.0
    if sec is None and row["method"].startswith("student") and row.get("fit_seconds") is not None and row.get("score_seconds"):
        sec = row["score_seconds"] - row["fit_seconds"]  # score_seconds counts from the run's start
    return f"{row['size'] / sec:,.0f}" if sec else "-"


def cand(row: dict) -> str:
    if "candidates" not in row:
        return "-"
    return f"{row['candidates']:,} ({100 * row['candidates'] / row['size']:.1f}%)"


def cascade_size(text: str):
    """A --cascade item: SIZE (a row for every --teacher-layers) or SIZE:K (one row, --layers K)."""
    size, sep, k = text.partition(":")
    return (int(k), int(size)) if sep else int(size)


def earlier_extra(name: str) -> dict:
    """The results file ``name``'s JSON as the last run left it (none: empty)."""
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def restore_rows(name: str) -> list[dict]:
    """The rows of the results file ``name``, each written back as its row file where the working folder
    lost it (a fresh checkout): a rerun measures only the rows asked for (--rerun) or never made."""
    from domainsift import __version__
    rows = earlier_extra(name).get("rows", [])
    WORK.mkdir(parents=True, exist_ok=True)
    for r in rows:
        kind = r.get("pool", "text")
        done = WORK / f"row-{r['method']}-{r['size']}{'' if kind == 'text' else '-' + kind}.json"
        base, _, version = r["method"].partition("@")
        if version == __version__ and (base in RERUN or f"{base}:{r['size']}" in RERUN):
            done.unlink(missing_ok=True)  # --rerun at the version that made the row: measured again
        elif not done.exists():
            done.write_text(json.dumps(r))
    return rows


def cascade_rows(student_sizes: list, cascade_sizes: list, name: str = "scale_cascade",
                 processes: int | None = None, teacher_layers: tuple = (0,), cosine_sizes: tuple = (),
                 full: tuple = (), prefixed: tuple = (), cosine_prefixed: tuple = ()) -> None:
    rule = ("--fraction", str(FRACTION)) + (("--processes", str(processes)) if processes else ())
    tag = f"-p{processes}" if processes else ""
    earlier = restore_rows(name)
    rows = [score_row("student", n, extra=rule, label="student" + tag) for n in student_sizes]
    runs = [(k, n) for k in teacher_layers for n in cascade_sizes if isinstance(n, int)]
    runs += [spec for spec in cascade_sizes if isinstance(spec, tuple) and spec not in runs]

    def finetune(k: int, n: int, cascade: bool, suffix: str = "", query: str | None = None) -> dict:
        """finetune (``--layers k`` unless 0), with ``--cascade`` or over every line, at ``n`` lines."""
        layers = ("--layers", str(k)) if k else ()
        return score_row("finetune", n, extra=(*(("--cascade",) if cascade else ()), *rule, *layers),
                         label="finetune" + ("-cascade" if cascade else "") + (f"-layers{k}" if k else "") + suffix
                         + tag, query=query)

    def specs(items) -> list:  # SIZE (the whole encoder) or (K, SIZE), as (K, SIZE) in order
        return sorted((0, spec) if isinstance(spec, int) else spec for spec in items)

    rows += [finetune(k, n, True) for k, n in sorted(runs)]
    rows += [finetune(k, n, True, "-prefixed-query", prefixed_query(n)) for k, n in specs(prefixed)]
    rows += [score_row("cosine", n, extra=("--cascade", *rule), label="cosine-cascade" + tag) for n in cosine_sizes]
    rows += [score_row("cosine", n, extra=("--cascade", *rule), label="cosine-cascade-prefixed-query" + tag,
                       query=prefixed_query(n)) for n in cosine_prefixed]
    rows += [finetune(k, n, False) for k, n in specs(full)]
    made = {(r["method"], r["size"]) for r in rows}
    # the file's other rows (another version's rerun, a size not asked for this time) stay in it
    rows += [r for r in earlier if (r["method"], r["size"]) not in made]
    for r in rows:  # rows finished before the stage timings were kept: read them from the run's run.json
        run_json = WORK / f"run-{r['method']}-{r['size']}" / "run.json"
        if not any(k in r for k in STAGES) and run_json.exists():
            r.update(stages(json.loads(run_json.read_text())))
        if "kde4_precision" not in r and "cascade" in r["method"]:  # rows made before it was kept
            r.update(precision(WORK / f"run-{r['method']}-{r['size']}"))
        print(r, flush=True)
    lines = ["# Large pools through the student and the cascade", "",
             "`domainsift select --method M --fraction 0.01 --in-domain KDE4.test.en --pool pool-N.txt` in a fresh "
             "process with an empty cache (so the student's static vectors are distilled in every run, and every "
             "vector is encoded): 1% of the pool selected. Pools of distinct lines (the shared train lines "
             "repeated with a line-number prefix). student: `--method student` (teacher cosine, 20,000-line "
             "sample); finetune-cascade: `--method finetune --cascade` (candidates planned by the cascade's rule: "
             "N of the teacher's top 1.25 N on the student's out-of-fold sample scores); finetune-cascade-layersK: "
             "the same with `--layers K` (the teacher fine-tuned and scored on the encoder's lower K layers); "
             "cosine-cascade: `--method cosine --cascade`; ...-prefixed-query: the same with the in-domain set in "
             "the pool's format (KDE4.test.en with a line-number prefix on every line, the numbers drawn from the "
             "pool's range, seed 0), so that the prefix does not tell the in-domain set from the pool. "
             "KDE4 among the selected: the share of the selection that are KDE4 lines (the oracle; KDE4 is 14.3% of "
             "the pool). "
             "Seconds and peak RSS "
             "are the whole process's; the candidates column is the teacher's share of the pool.", "",
             "| method | lines | seconds | lines/s | peak RSS (MB) | candidates | scoring pass: lines/s | KDE4 among "
             "the selected |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        kde4 = f"{r['kde4_precision']:.4f}" if "kde4_precision" in r else "-"
        lines.append(f"| {r['method']} | {r['size']:,} | {r['seconds']:.0f} | {r['size'] / r['seconds']:,.0f} | "
                     f"{r['peak_rss_mb']:.0f} | {cand(r)} | {passrate(r)} | {kde4} |")
    st = sorted((r for r in rows if r["method"].startswith("student")), key=lambda r: r["size"])
    extra = {}
    by_size = {r["size"]: r for r in st}
    pair = (by_size[200_000], by_size[1_000_000]) if {200_000, 1_000_000} <= set(by_size) else tuple(st[:2])
    if len(pair) == 2:  # the measure: 800,000 / (t(1M) - t(200k)); else the two smallest sizes
        a, b = pair
        rate = (b["size"] - a["size"]) / (b["seconds"] - a["seconds"])
        extra["student_marginal_lines_per_s"] = round(rate)
        lines += ["", f"The student's marginal rate: ({b['size']:,} - {a['size']:,}) / ({b['seconds']:.1f} s - "
                  f"{a['seconds']:.1f} s) = **{rate:,.0f} lines/s** ({1e6 / rate:.0f} µs a line) on 2 cores."]
        if len(st) >= 3 and st[-1]["size"] > b["size"]:  # and between the two largest: the fit's noise weighs less
            c, d = st[-2], st[-1]
            far = (d["size"] - c["size"]) / (d["seconds"] - c["seconds"])
            extra["student_marginal_lines_per_s_largest"] = round(far)
            lines += ["", f"Between the two largest: ({d['size']:,} - {c['size']:,}) / ({d['seconds']:.1f} s - "
                      f"{c['seconds']:.1f} s) = **{far:,.0f} lines/s** ({1e6 / far:.0f} µs a line): the pass, the "
                      "counting pass, `scores.tsv` and the selection, every cost that grows with the pool (the fit "
                      "varies by a few seconds from run to run, which the smaller pair's 5-second difference "
                      "cannot absorb)."]
    staged = [r for r in rows if "teacher_score_seconds" in r]
    for r in staged:
        r.update(plan_spread(r))
    if staged:
        lines += ["", "Where a cascade's time goes (seconds; the method's fit includes reading its 200,000-line "
                  "fit sample; the teacher's pass includes reading the candidates):", "",
                  "| method | lines | method fit | student fit (sample scored by the teacher) | student over the pool | "
                  "teacher over the candidates | teacher ms a candidate | planned candidates (the sample's 5-95% "
                  "bootstrap) |", "|---|---|---|---|---|---|---|---|"]
        for r in staged:
            spread = (f"{r['plan_share']:.1%} ({r['plan_p5']:.1%}-{r['plan_p95']:.1%})" if "plan_p5" in r else "-")
            lines.append(f"| {r['method']} | {r['size']:,} | {r.get('fit_seconds', '-')} | {r['student_fit_seconds']} | "
                         f"{r['student_score_seconds']} | {r['teacher_score_seconds']} | "
                         f"{1000 * r['teacher_score_seconds'] / r['candidates']:.2f} | {spread} |")
        if any("plan_p5" in r for r in staged):
            lines += ["", f"The plan's spread: the run's teacher-scored sample ({SPREAD_DRAWS} draws of its "
                      "out-of-fold (student, teacher) pairs with replacement, seed 0) planned again with the "
                      "product's rule (`domainsift.pipeline.cascade.plan_share`, before the floor of twice the "
                      "selection). It says how much of a run's candidate count is the draw of its 20,000-line "
                      "sample and how much is the teacher's ranking itself."]
    agree = []
    for r in rows:  # each full run beside the cascade of the same teacher and size
        twin = r["method"].replace("finetune", "finetune-cascade", 1)
        c = next((c for c in rows if c["size"] == r["size"] and c["method"] == twin), None)
        if r["method"].startswith("finetune") and "cascade" not in r["method"] and c is not None:
            if all((WORK / f"run-{x['method']}-{x['size']}").is_dir() for x in (r, c)):
                agree.append(recall_row(r, c))
            else:  # both rows restored from the results file, their runs gone: the recall measured then
                agree += [a for a in earlier_extra(name).get("recall", [])
                          if (a["method"], a["size"]) == (c["method"], c["size"])]
    if agree:
        extra["recall"] = agree
        lines += ["", "The cascade against the same method over every line (`--full`, same seed, so the same fit "
                  "sample): the full run's top N (its `selected.ids.tsv`) found in the cascade's; the two runs' "
                  "scores of the cascade's candidates (the same fitted teacher gives the same scores).", "",
                  "| method | lines | full run: seconds | cascade: seconds | recall of the full run's top N | "
                  "the full run's top 1.25 N among the candidates (the plan's guarantee: at least N) | the "
                  "cascade's selection: its lowest rank in the full run | largest score difference on the "
                  "candidates |", "|---|---|---|---|---|---|---|---|"]
        for a in agree:
            lines.append(f"| {a['method']} | {a['size']:,} | {a['full_seconds']:.0f} | {a['cascade_seconds']:.0f} | "
                         f"{a['recall']:.4f} ({a['found']:,} of {a['n']:,}) | {a['wide_in_candidates']:,} of "
                         f"{a['wide']:,} | {a['lowest_full_rank']:,} | {a['max_score_diff']:.2g} |")
    costed = [r for r in rows if "prefixed-query" not in r["method"]]  # a diagnostic, not the product's cost
    model = cost_model([r for r in costed if r["method"].startswith("finetune-cascade") and "layers" not in r["method"]])
    if model:
        extra["cost_model"] = model
        lines += ["", COST_TEXT.format(**model)]
    others = [(f"cost_model_layers{k}", f"finetune-cascade-layers{k}", f"With `--layers {k}`")
              for k in sorted({k for k, _ in runs if k})]
    for key, prefix, what in others + [("cost_model_cosine", "cosine-cascade", "`cosine --cascade`")]:
        cut = cost_model([r for r in costed if r["method"].startswith(prefix)])
        if cut:
            extra[key] = cut
            lines += ["", f"{what} (from its largest row, {cut['size']:,} lines): the teacher "
                      f"{cut['teacher_ms']:.2f} core-ms a candidate on {cut['share']:.1%} of the pool, "
                      f"**{cut['cascade_core_h']:,.0f} core-hours for 10^9 lines**."]
    left = sorted({r["version"] for r in rows if r.get("version") in LEFT}, key=version_key)
    if left:
        lines += ["", "Rows of versions whose change measured no better and left the product (the cost of a billion "
                  "lines is not taken from them): " + "; ".join(f"{v}: {LEFT[v]}" for v in left) + "."]
    write_results(name, {"rows": rows, **extra}, "\n".join(lines) + "\n")


# DSIR (Xie et al., NeurIPS 2023): 100M documents selected from the full Pile (1.6B examples) in about
# 4.5 hours on one node with 96 CPU cores, as the paper and its README state
DSIR_CORE_HOURS, DSIR_EXAMPLES = 4.5 * 96, 1.6e9

COST_TEXT = (
    "What a billion lines cost (from the largest cascade row above, {size:,} lines, 2 cores, both busy: core-seconds "
    "= 2 x wall seconds; the fits are paid once per run and left out): the student {student_us:.0f} core-µs a line, "
    "the teacher {teacher_ms:.2f} core-ms a candidate on {share:.1%} of the pool, so **{cascade_core_h:,.0f} "
    "core-hours for 10^9 lines** through the cascade (the student {student_core_h:,.0f}, the teacher "
    "{teacher_core_h:,.0f}), against {full_core_h:,.0f} for the teacher over every line, and DSIR's published "
    "{dsir_core_h:,.0f} (4.5 h on 96 cores for The Pile's 1.6 billion examples, scaled to 10^9; its examples are "
    "longer than these lines). On a Ray cluster the student and the teacher's shards spread over every core; "
    "selecting 1%, the candidates are a fixed share of the pool, so the cost grows linearly with the pool.")


def cost_model(rows: list) -> dict | None:
    """Core-hours for 10^9 lines through the cascade, from the largest cascade row's stage timings (of the
    newest version among rows of that size)."""
    staged = [r for r in rows if "teacher_score_seconds" in r and r.get("candidates") and r.get("version") not in LEFT]
    if not staged:
        return None
    r = max(staged, key=lambda r: (r["size"], version_key(r.get("version"))))
    cores = 2
    student = cores * r["student_score_seconds"] / r["size"]
    teacher = cores * r["teacher_score_seconds"] / r["candidates"]
    share = r["candidates"] / r["size"]
    n = 1e9
    from domainsift.pipeline.plan import cascade_seconds  # the product's own cost model, extrapolated
    core_s = cascade_seconds(n, n * share, student, teacher)
    return {"size": r["size"], "cores": cores, "student_us": 1e6 * student, "teacher_ms": 1e3 * teacher,
            "share": share, "student_core_h": core_s["student"] / 3600, "teacher_core_h": core_s["teacher"] / 3600,
            "cascade_core_h": (core_s["student"] + core_s["teacher"]) / 3600, "full_core_h": n * teacher / 3600,
            "dsir_core_h": DSIR_CORE_HOURS * n / DSIR_EXAMPLES}


if __name__ == "__main__":
    main()
