"""Benchmark: the same scores whatever the batch size, shard size and file format (issue 29).

Domain-Cosine with the product's defaults (onnx-int8) scores the shared pool (<D>.train.en of the
seven domains, 35,000 lines; in-domain set KDE4.test.en) three times, each with an empty vector
cache: as text with batch 32 and shards of 16,384 lines (the defaults); as text with batch 7 and
shards of 5,000; as one Parquet file (written under bench/work) with batch 64 and shards of 3,000.
Reports the largest score difference to the first run and whether the top 5,000 are the same lines.

    python bench/live/reproducible.py
"""

from __future__ import annotations

import domainsift as ds
import shutil
import time

import numpy as np
from _common import ROOT, SEVEN, data_file, write_results

from domainsift.engine import Execution
from domainsift.io.corpus import read_corpus
from domainsift.rundir import load_scores
from domainsift.select.base import choose
from domainsift.io.source import PoolSource

WORK = ROOT / "bench" / "work" / "reproducible"
RUNS = [("text", 32, 16384), ("text", 7, 5000), ("parquet", 64, 3000)]


def main() -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    files = [data_file(d, "train") for d in SEVEN]
    texts = read_corpus(files).texts
    pq.write_table(pa.table({"text": texts}), WORK / "pool.parquet")
    in_domain = read_corpus([data_file("KDE4", "test")])
    rows, first = [], None
    for i, (fmt, batch, shard) in enumerate(RUNS):
        pool = PoolSource.open(files if fmt == "text" else [WORK / "pool.parquet"])
        t0 = time.time()
        sig = ds.run(ds.RunSpec.single("cosine", in_domain, pool, WORK / f"run{i}", params={"batch_size": batch, "cache_dir": str(WORK / f"cache{i}"), "progress": False}, execution=Execution(shard_size=shard))).signature
        scores = np.asarray(load_scores(WORK / f"run{i}").scores)
        top = choose(scores, top=5000)
        if first is None:
            first = (scores, top)
        row = {"format": fmt, "batch_size": batch, "shard_size": shard, "seconds": round(time.time() - t0, 1),
               "max_abs_diff": float(np.abs(scores - first[0]).max()),
               "same_top_5000": bool(np.array_equal(top, first[1])), "signature": sig["signature"]}
        rows.append(row)
        print(row, flush=True)
    lines = ["# Reproducible scores: batch size, shard size and format", "",
             "Domain-Cosine at the product's defaults (onnx-int8), in-domain set KDE4.test.en, the shared "
             "35,000-line pool; each run with an empty vector cache. Difference: the largest absolute score "
             "difference to the first run.", "",
             "| format | batch | shard | seconds | max score difference | same top 5,000 |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['format']} | {r['batch_size']} | {r['shard_size']} | {r['seconds']} | "
                     f"{r['max_abs_diff']:.2g} | {'yes' if r['same_top_5000'] else 'no'} |")
    lines += ["", f"Signature of the first run: `{rows[0]['signature']}`"]
    write_results("reproducible", {"rows": rows}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
