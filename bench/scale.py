"""Benchmark "scale" (readers): peak memory of reading a large pool, text beside Parquet.

Pools of 100,000 and 1,000,000 lines are made from the shared train lines, repeated with a
line-number prefix ("123456: ...") so that every line is distinct; stored as a text file and as
a Parquet file. Each reader runs in a fresh process that only consumes the records and reports
its peak RSS (VmHWM): the streaming readers (``iter_texts`` for text, ``columnar.iter_rows``
for Parquet, batches of 8,192 rows), and, for contrast, ``read_corpus`` which holds every text and
id in memory, as scoring does today (the streaming scoring engine is the speed-and-scale issue's).

    python bench/scale.py [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from _common import ROOT, SEVEN, data_file, write_results

WORK = ROOT / "bench" / "work" / "scale"

PROBE = r"""
import json, sys, time
kind, path = sys.argv[1], sys.argv[2]
t0 = time.time()
n = 0
if kind == "text-stream":
    from domainsift.corpus import iter_texts
    for _ in iter_texts(path):
        n += 1
elif kind == "parquet-stream":
    from domainsift.columnar import iter_rows
    for _ in iter_rows(path, "parquet", "text"):
        n += 1
else:
    from domainsift.corpus import read_corpus
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", type=int, default=[100_000, 1_000_000])
    args = ap.parse_args()
    rows = []
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
    lines = ["# Reading large pools: peak memory of the readers", "",
             "Each reader in a fresh process consumes every record of a pool of distinct lines (shared train lines "
             "repeated with a line-number prefix) and reports its peak RSS; the process's Python, NumPy and "
             "pyarrow imports count in it. Streaming readers hold one batch; read_corpus holds every text and id, "
             "as scoring does until the streaming engine lands.", "",
             "| lines | reader | peak RSS (MB) | seconds |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['size']:,} | {r['reader']} | {r['peak_rss_mb']:.0f} | {r['seconds']:.1f} |")
    write_results("scale", {"rows": rows}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
