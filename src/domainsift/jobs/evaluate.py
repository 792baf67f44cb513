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


def label_ids(pool: dict, labels_file: str | os.PathLike, label: str, ids) -> list[tuple[str, int]]:
    """The pool's records whose label is ``label`` in ``labels_file``: one label a line, line ``k`` the label
    of the pool's line ``k`` (the pool files' lines one after the other, in the pool's order). A file of
    another length is one line naming it."""
    from ..io.corpus import read_lines
    labels = [t.strip() for t in read_lines(labels_file)]
    offsets, total = [], 0
    for f in pool["files"]:
        offsets.append(total)
        total += len(read_lines(f)) if len(pool["files"]) > 1 else len(labels)
    if len(pool["files"]) == 1:
        total = max([int(n) for _, n in np.asarray(ids)] + [0])
    if len(labels) < total or (len(pool["files"]) > 1 and len(labels) != total):
        raise DomainsiftError(f"{labels_file}: {len(labels)} labels for a pool of {total} lines; --labels gives one "
                              "label a line of the pool (its files one after the other)")
    if label not in set(labels):
        seen = sorted(set(labels))
        raise DomainsiftError(f"{labels_file}: no line is labelled {label!r} (the labels: "
                              f"{', '.join(seen[:8])}{', ...' if len(seen) > 8 else ''})")
    return [(pool["files"][int(k)], int(n)) for k, n in np.asarray(ids)
            if labels[offsets[int(k)] + int(n) - 1] == label]


def evaluate_run(run_dir: str | os.PathLike, gold_files: Sequence[str | os.PathLike] = (),
                 labels: str | os.PathLike | None = None, label: str | None = None) -> dict:
    """Write ``run_dir/eval.json`` with precision, recall, f1, n_selected, n_gold, n_correct. The oracle:
    ``gold_files`` (the pool files whose every record is in-domain), or ``labels`` (a file of one label a pool
    line) and the in-domain ``label``."""
    if bool(gold_files) == (labels is not None):
        raise DomainsiftError("give the oracle: --gold FILE... or --labels FILE --label NAME")
    if (labels is None) != (label is None):
        raise DomainsiftError("--labels FILE goes with --label NAME (the in-domain records' label)")
    if labels is not None and not os.path.isfile(labels):
        raise DomainsiftError(f"{labels}: no such file")
    pool = read_pool(run_dir)
    verify_inputs(pool, run_dir)
    check_arrays(run_dir)
    ids = read_ids(run_dir, pool)
    if labels is not None:
        gold = label_ids(pool, labels, label, ids)
    else:
        gold = gold_ids(pool, gold_files, ids)
    result = precision_recall(read_selected_ids(run_dir), gold)
    if labels is not None:
        result["labels"], result["label"] = resolve(labels), label
    else:
        result["gold"] = [resolve(g) for g in gold_files]
    write_eval(run_dir, result)
    return result
