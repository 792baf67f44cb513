"""Benchmark note "formats": the shared pool stored three ways gives the same selection.

The selection benchmark's pool (the seven <D>.train.en, 35,000 lines) is stored as the text
files themselves, as Parquet shards (one per domain, with an extra column) and as a
``datasets.save_to_disk`` folder (one dataset of all 35,000 rows); for each of the five
classic targets (in-domain set <D>.test.en), ``cosine`` and ``moore-lewis`` select N = 5,000
from each storage. Reported: whether the scores are identical (bit for bit), whether the
selected records are the same (by position in the pool) and the precision that ``evaluate``
gives against the target's records. Storage copies live under bench/work/formats/ (not versioned).

    python bench/archive/formats.py
"""

from __future__ import annotations

import domainsift as ds

import json

import numpy as np
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))  # the shared helpers: bench/live/_common.py
from _common import CLASSIC, ROOT, SEVEN, data_file, write_results

from domainsift.io.corpus import read_corpus
from domainsift.jobs.evaluate import evaluate_run
from domainsift import Rule, run_select

WORK = ROOT / "bench" / "work" / "formats"
N = 5000
METHODS = {"cosine": {}, "moore-lewis": {"order": 3}}


def stores() -> dict:
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq
    shards = WORK / "parquet"
    hf = WORK / "hf"
    texts = {d: read_corpus([data_file(d, "train")]).texts for d in SEVEN}
    if not shards.exists():
        shards.mkdir(parents=True)
        for k, d in enumerate(SEVEN):
            pq.write_table(pa.table({"text": texts[d], "domain": [d] * len(texts[d])}),
                           shards / f"{k}-{d}.parquet")
    if not hf.exists():
        datasets.Dataset.from_dict({"text": [t for d in SEVEN for t in texts[d]],
                                    "domain": [d for d in SEVEN for _ in texts[d]]}).save_to_disk(str(hf))
    return {"text": [data_file(d, "train") for d in SEVEN], "parquet": [str(shards / "*.parquet")], "hf": [str(hf)]}


def gold_for(kind: str, target: str, pool) -> list:
    """The target's records in each storage: its text file, its shard, or (one dataset of all rows)
    none: the hf folder's precision comes from the positions of the target's rows."""
    if kind == "text":
        return [data_file(target, "train")]
    if kind == "parquet":
        return [str(WORK / "parquet" / f"{SEVEN.index(target)}-{target}.parquet")]
    return []


def main() -> None:
    where = stores()
    rows = []
    for target in CLASSIC:
        in_domain = read_corpus([data_file(target, "test")])
        lo = SEVEN.index(target) * 5000
        for method, params in METHODS.items():
            ref = None
            for kind, paths in where.items():
                pool = read_corpus(paths)
                assert len(pool) == 35000
                run = WORK / "runs" / target / f"{method}-{kind}"
                ds.run(ds.RunSpec.single(method, in_domain, pool, run, params={**params, "progress": False}, seed=0)).signature
                run_select(run, rule=Rule(top=N))
                scores = np.load(run / "scores.npy")
                ids = json.loads((run / "pool.json").read_text())["ids"]
                pos = {tuple(i): k for k, i in enumerate(ids)}
                chosen = sorted(pos[(f, int(n))] for f, n, *_ in
                                (line.split("\t") for line in (run / "selected.ids.tsv").read_text().splitlines()[1:]))
                gold = gold_for(kind, target, pool)
                precision = (evaluate_run(run, gold)["precision"] if gold
                             else float(np.mean([lo <= p < lo + 5000 for p in chosen])))
                if ref is None:
                    ref = (scores, chosen)
                rows.append({"target": target, "method": method, "storage": kind, "precision": precision,
                             "scores_identical": bool(np.array_equal(scores, ref[0])),
                             "selection_identical": chosen == ref[1]})
                print(rows[-1], flush=True)
    lines = ["# The shared pool as text, Parquet shards and a save_to_disk folder", "",
             "Pool: the seven <D>.train.en (35,000 lines) as text files, as 7 Parquet shards (text and domain "
             "columns) and as one datasets.save_to_disk folder; in-domain set <D>.test.en; N = 5,000. 'same' "
             "compares each storage with the text files: scores bit for bit, selected records by position in "
             "the pool. Precision: `evaluate` against the target's file or shard; for the save_to_disk folder "
             "(one Arrow file holding every domain) from the positions of the target's rows.", "",
             "| target | method | text | parquet | save_to_disk | scores same | selection same |",
             "|---|---|---|---|---|---|---|"]
    for target in CLASSIC:
        for method in METHODS:
            r = {x["storage"]: x for x in rows if x["target"] == target and x["method"] == method}
            lines.append(f"| {target} | {method} | {r['text']['precision']:.4f} | {r['parquet']['precision']:.4f} | "
                         f"{r['hf']['precision']:.4f} | "
                         f"{'yes' if all(x['scores_identical'] for x in r.values()) else 'NO'} | "
                         f"{'yes' if all(x['selection_identical'] for x in r.values()) else 'NO'} |")
    write_results("formats", {"N": N, "rows": rows}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
