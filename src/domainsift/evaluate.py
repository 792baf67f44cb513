"""Evaluation of a selection against an oracle, and of a classifier.

The oracle of ``evaluate`` is every non-empty line of the given gold pool
file(s), matched by (file, line) id, so a duplicate text elsewhere in the pool
is not confused with an in-domain line. Paths are compared after resolving
them, so ``./pool/a.txt`` and ``pool/a.txt`` match.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

from ._atomic import save_json
from .corpus import iter_texts


def _key(path: str, line: int) -> tuple[str, int]:
    return (os.path.realpath(path), int(line))


def f1_score(precision: float, recall: float) -> float:
    """The harmonic mean of precision and recall (0 when both are 0)."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def precision_recall(selected: Iterable[tuple[str, int]], gold: Iterable[tuple[str, int]]) -> dict:
    """Precision, recall and F1 of selected ids against gold ids."""
    sel = {_key(f, n) for f, n in selected}
    gold_set = {_key(f, n) for f, n in gold}
    hit = len(sel & gold_set)
    p = hit / len(sel) if sel else 0.0
    r = hit / len(gold_set) if gold_set else 0.0
    return {"precision": p, "recall": r, "f1": f1_score(p, r),
            "n_selected": len(sel), "n_gold": len(gold_set), "n_correct": hit}


def gold_ids(files: Sequence[str]) -> list[tuple[str, int]]:
    """Every non-empty line of the gold files, as ids."""
    return [(str(f), n) for f in files for n, text in iter_texts(f, "text") if text]


def evaluate_run(run_dir: str | os.PathLike, gold_files: Sequence[str]) -> dict:
    """Write ``run_dir/eval.json`` with precision, recall, f1, n_selected, n_gold."""
    from .select.run import read_selected_ids
    result = precision_recall(read_selected_ids(run_dir), gold_ids(gold_files))
    result["gold"] = [str(g) for g in gold_files]
    save_json(Path(run_dir) / "eval.json", result)
    return result
