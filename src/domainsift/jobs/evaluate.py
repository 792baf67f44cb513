"""Evaluation of a selection against an oracle, and of a classifier.

The oracle of ``evaluate`` is every record of the pool that came from the given
gold file(s), matched by (file, line) id, so a duplicate text elsewhere in the
pool is not confused with an in-domain line. Recall counts the pool's own
records (a TSV row, a JSON object, a sentence pair), not raw text lines. Paths
are resolved, so a run evaluates the same from any directory and under any
spelling of a file's path; a gold file that is not one of the pool's files is
an error, never a silent precision of 0.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from .._internal.errors import DomainsiftError
from ..metrics import precision_recall
from ..rundir import check_arrays, read_ids, read_pool, read_selected_ids, resolve, verify_inputs, write_eval


def gold_ids(pool: dict, gold_files: Sequence[str | os.PathLike], ids) -> list[tuple[str, int]]:
    """The pool's records (``ids``: ids.npy's array) that came from ``gold_files`` (either side of a
    parallel pool)."""
    files = [resolve(f) for f in pool["files"]]
    by_target = {resolve(t): f for f, t in zip(files, [resolve(t) for t in pool.get("target_files") or []])}
    wanted = set()
    from ..io.corpus import expand_paths
    for g in expand_paths(gold_files):
        real = resolve(g)
        if real in files:
            wanted.add(real)
        elif real in by_target:
            wanted.add(by_target[real])
        else:
            raise DomainsiftError(f"{g}: not one of the pool's files ({', '.join(pool['files'])}); "
                                  "--gold names the pool file(s) whose every record is in-domain")
    keep = [k for k, f in enumerate(pool["files"]) if resolve(f) in wanted]
    ids = np.asarray(ids)
    rows = ids[np.isin(ids[:, 0], keep)]
    return [(pool["files"][int(k)], int(n)) for k, n in rows]


def evaluate_run(run_dir: str | os.PathLike, gold_files: Sequence[str | os.PathLike]) -> dict:
    """Write ``run_dir/eval.json`` with precision, recall, f1, n_selected, n_gold, n_correct."""
    if not gold_files:
        raise DomainsiftError("give at least one --gold file")
    pool = read_pool(run_dir)
    verify_inputs(pool, run_dir)
    check_arrays(run_dir)
    gold = gold_ids(pool, gold_files, read_ids(run_dir, pool))
    result = precision_recall(read_selected_ids(run_dir), gold)
    result["gold"] = [resolve(g) for g in gold_files]
    write_eval(run_dir, result)
    return result
