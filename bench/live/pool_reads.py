"""How many times a run reads each pool file, counted from outside: every ``read``/``pread64``/``readv``
of the whole process tree (``strace -f -y``) that hits a pool file, summed, divided by the file's size.

Rows: one-target ``select`` and a 3-target mixture (``--target``), each with and without ``--cascade``, and
the mixture on Ray (``--engine ray --address local``: the workers read their own shards),
cosine over tf-idf (no encoder download, no vector cache: ``--cache ''``). The pool is the five classic
domains' ``train.en`` files; the targets' in-domain sets are the first 200 lines of ``EMEA``, ``KDE4``
and ``JRC-Acquis``'s ``test.en``. Issue 76's bound: at most 3 reads of each file for any number of
targets.

    python bench/live/pool_reads.py
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CLASSIC, data_file, read_lines, write_results  # noqa: E402

TARGETS = ("EMEA", "KDE4", "JRC-Acquis")
IN_LINES = 200
TOP = 600
CALL = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(read|pread64|readv)\(\d+<([^>]+)>,.*\)\s+=\s+(\d+)")


def bytes_read(log: Path, files: list[str]) -> dict:
    wanted = {str(Path(f).resolve()): 0 for f in files}
    with open(log, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = CALL.match(line)
            if m and m.group(2) in wanted:
                wanted[m.group(2)] += int(m.group(3))
    return wanted


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.parse_args()
    if shutil.which("strace") is None:
        sys.exit("strace is not installed (apt-get install strace)")
    pool = [data_file(d, "train") for d in CLASSIC]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ins = {}
        for d in TARGETS:
            ins[d] = tmp / f"{d}.in"
            ins[d].write_text("\n".join(read_lines(data_file(d, "test"))[:IN_LINES]) + "\n", encoding="utf-8")
        base = [sys.executable, "-m", "domainsift", "select", "--method", "cosine", "--model", "tfidf",
                "--cache", "", "--pool", *pool, "--top", str(TOP), "-q"]
        cases = {"1 target": ["--in-domain", str(ins["EMEA"])],
                 "3 targets": [x for d in TARGETS for x in ("--target", f"{d}={ins[d]}")]}
        runs = [(name, given, cascade, []) for name, given in cases.items() for cascade in (False, True)]
        runs.append(("3 targets", cases["3 targets"], False, ["--engine", "ray", "--address", "local", "--workers", "2"]))
        for name, given, cascade, engine in runs:
            out = tmp / f"run{len(rows)}"
            log = tmp / f"strace{len(rows)}.log"
            cmd = ["strace", "-f", "-qq", "-y", "-e", "trace=read,pread64,readv", "-e", "signal=none",
                   "-s", "0", "-o", str(log), *base, *given, *engine, "--out", str(out)] + (["--cascade"] if cascade else [])
            done = subprocess.run(cmd, capture_output=True, text=True,
                                  env={**os.environ, "HF_HUB_OFFLINE": "1"})
            if done.returncode != 0:
                sys.exit(f"{name}{' --cascade' if cascade else ''} failed:\n{done.stderr[-2000:]}")
            got = bytes_read(log, pool)
            per = {Path(f).name: round(b / os.path.getsize(f), 3) for f, b in got.items()}
            rows.append({"run": name + (" (Ray, 2 workers)" if engine else ""), "cascade": cascade, "targets": 1 if name == "1 target" else len(TARGETS),
                         "reads_per_file": per, "max_reads": max(per.values()),
                         "bytes_read": sum(got.values()), "pool_bytes": sum(os.path.getsize(f) for f in pool)})
            print(rows[-1], flush=True)
    md = ["# Reads of each pool file, counted with strace over the whole process", "",
          "cosine over tf-idf, `--top 600`, the five classic domains' train.en as the pool, "
          f"{IN_LINES}-line in-domain sets (EMEA; EMEA, KDE4 and JRC-Acquis for 3 targets). A read is the bytes "
          "read from the file (read, pread64, readv of every process) divided by its size.", "",
          "| run | --cascade | most reads of a file | bytes read / pool bytes | per file |", "|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['run']} | {'yes' if r['cascade'] else 'no'} | {r['max_reads']:.3f} | "
                  f"{r['bytes_read'] / r['pool_bytes']:.3f} | "
                  + ", ".join(f"{k} {v:.2f}" for k, v in r["reads_per_file"].items()) + " |")
    write_results("pool_reads", {"rows": rows, "top": TOP, "in_lines": IN_LINES}, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
